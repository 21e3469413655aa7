-- Idempotency records: the hash 'idem' (key -> record), their deadlines in
-- 'iexp', counted per tenant ('i') and per creating subject (the hash 'si',
-- subject -> count, for the subject's share).

-- An idempotency record's value: result ID (36), '|', request fingerprint
-- (64 hex), '|', tenant (which holds no '|'), '|', the creating subject. A
-- record written before subjects were counted ends at the tenant: it
-- counts in no subject's share.
local function idemParse(v)
  local bar = string.find(v, '|', 103, true)
  local tenant, subject = string.sub(v, 103), nil
  if bar then tenant, subject = string.sub(v, 103, bar - 1), string.sub(v, bar + 1) end
  return string.sub(v, 1, 36), string.sub(v, 38, 101), tenant, subject
end

-- subjectIdem is how many idempotency records subject's creations hold.
local function subjectIdem(subject) return tonumber(call('HGET', P .. 'si', subject) or '0') end

local function removeIdem(ik)
  local v = call('HGET', P .. 'idem', ik)
  if v then
    local _, _, tenant, subject = idemParse(v)
    tenantAdd(tenant, 'i', -1)
    if subject and call('HINCRBY', P .. 'si', subject, -1) <= 0 then call('HDEL', P .. 'si', subject) end
  end
  call('HDEL', P .. 'idem', ik)
  call('ZREM', P .. 'iexp', ik)
end

local function addIdem(ik, res, fp, tenant, subject)
  call('HSET', P .. 'idem', ik, res .. '|' .. fp .. '|' .. tenant .. '|' .. subject)
  call('ZADD', P .. 'iexp', I(NOW + LIM.IDEM_TTL), ik)
  tenantAdd(tenant, 'i', 1)
  call('HINCRBY', P .. 'si', subject, 1)
end

-- idemReplay answers a creation whose idempotency key ik was used before:
-- nil if it was not, else Conflict (another request), the earlier result's
-- view (a replay) or Expired (what it created is gone). kind is the
-- record's key prefix ('l:' or 'a:'), view renders it.
local function idemReplay(ik, fp, kind, view)
  local prev = call('HGET', P .. 'idem', ik)
  if not prev then return nil end
  local res, pfp = idemParse(prev)
  if pfp ~= fp then return {CONFLICT, 0} end
  if call('EXISTS', P .. kind .. res) == 1 then return {OK, 0, 1, view(res)} end
  return {EXPIRED, 0}
end
