-- The removal cascade: an attempt goes with its tombstone; a listing goes
-- with its presence and every attempt linked to it; a revocation removes
-- what its subject has. Each costs what the record has, never a scan.
--
-- A tombstone is the hash "x:<attempt id>" (listing, tenant, client, owner,
-- the attempt's deadline dl, end (END_*), progress, hout, cout), its
-- deadline in "xexp" and in its tenant's "xt:<tenant>": TombstoneTTL after
-- the attempt ended. A tenant holds at most the attempts ceiling of them:
-- its own earliest due goes first when it is full, never another tenant's
-- (docs/contracts/semantics.md#lifetimes).

-- progressOf renders engine.AttemptProgress as eight '0'/'1' flags from the
-- attempt fields f[i..i+7]: ronly, off, host, peer, hrel, crel, consumed,
-- relayed (the order of AttemptProgress; Go decodes it).
local PROGRESS = {'ronly', 'off', 'host', 'peer', 'hrel', 'crel', 'consumed', 'relayed'}
local function progressOf(f, i)
  local b = {}
  for k = 0, 7 do
    local v = f[i + k]
    local set = v == '1'
    if k >= 2 and k <= 5 then set = v ~= nil and v ~= false and v ~= '' end
    b[k + 1] = set and '1' or '0'
  end
  return table.concat(b)
end

local function removeTomb(aid)
  local tenant = call('HGET', P .. 'x:' .. aid, 'tenant')
  if tenant then call('ZREM', P .. 'xt:' .. tenant, aid) end
  call('DEL', P .. 'x:' .. aid)
  call('ZREM', P .. 'xexp', aid)
end

-- tombstone records attempt aid's end; removeAttempt deletes the record
-- next. It ended at its own deadline, its listing's lease deadline or the
-- drain deadline when one of those ended it, else now.
local function tombstone(aid, cause)
  local f = call('HMGET', P .. 'a:' .. aid, 'listing', 'tenant', 'client', 'dl', 'hout', 'cout', unpack(PROGRESS))
  local l = call('HMGET', P .. 'l:' .. f[1], 'owner', 'dl')
  local at = NOW
  if cause == END_EXPIRED then at = tonumber(f[4])
  elseif cause == END_LEASE_EXPIRED and l[2] then at = tonumber(l[2])
  elseif cause == END_DRAINED and META.draining then at = META.drain_dl end
  local xt = P .. 'xt:' .. f[2]
  if call('ZCARD', xt) >= LIM.MAX_A then
    removeTomb(call('ZRANGE', xt, 0, 0)[1])
  end
  call('HSET', P .. 'x:' .. aid, 'listing', f[1], 'tenant', f[2], 'client', f[3], 'owner', l[1] or '', 'dl', f[4],
    'end', I(cause), 'progress', progressOf(f, 7), 'hout', f[5] or '', 'cout', f[6] or '')
  call('ZADD', P .. 'xexp', I(at + LIM.TOMB_TTL), aid)
  call('ZADD', xt, I(at + LIM.TOMB_TTL), aid)
end

-- removeAttempt removes an attempt, leaving its tombstone (ended by cause,
-- END_EXPIRED when nil).
local function removeAttempt(aid, cause)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'listing', 'tenant', 'client', 'consumed', 'relayed')
  if not f[1] then
    call('ZREM', P .. 'aexp', aid)
    return
  end
  tombstone(aid, cause or END_EXPIRED)
  call('ZREM', P .. 'la:' .. f[2], aid)
  if call('ZREM', P .. 'lp:' .. f[2], f[1]) == 1 then pendingSync(f[2]) end
  call('SREM', P .. 'ca:' .. f[4], aid)
  call('ZREM', P .. 'aexp', aid)
  call('HDEL', P .. 'ah', f[1])
  tenantAdd(f[3], 'a', -1)
  if f[5] ~= '1' and f[6] ~= '1' then call('HINCRBY', P .. 'meta', 'inflight', -1) end
  call('DEL', P .. 'a:' .. aid)
end

-- removeListing removes a listing, its presence and every linked attempt
-- (ended by cause, END_LISTING_REMOVED when nil).
local function removeListing(id, cause)
  local f = call('HMGET', P .. 'l:' .. id, 'pres', 'owner', 'tenant', 'prf')
  if not f[1] then
    call('ZREM', P .. 'lexp', id)
    return
  end
  for _, aid in ipairs(call('ZRANGE', P .. 'la:' .. id, 0, -1)) do removeAttempt(aid, cause or END_LISTING_REMOVED) end
  if call('ZSCORE', P .. 'pexp', id) then expirePresence(id) end
  call('ZREM', P .. 'lexp', id)
  call('HDEL', P .. 'ph', f[1])
  call('SREM', P .. 'ol:' .. f[2], id)
  tenantAdd(f[3], 'l', -1)
  call('DEL', P .. 'l:' .. id, P .. 'la:' .. id, P .. 'lp:' .. id)
  if f[4] then call('HDEL', P .. 'pr', f[4]) end
end

-- revoke inserts (or re-times) revocation member rev and removes the
-- subject's listings and attempts (in tenant, or everywhere when tenant is
-- ''): O(what the subject has).
local function revoke(tenant, subject, ttl)
  if unavailable() then return {UNAVAILABLE, 0, 0} end
  local rev = 'g\0' .. subject
  if tenant ~= '' then rev = 't\0' .. tenant .. '\0' .. subject end
  if not call('ZSCORE', P .. 'vexp', rev) and call('ZCARD', P .. 'vexp') >= LIM.MAX_V then
    return {CAPACITY, P_REVOCATIONS, 0}
  end
  call('ZADD', P .. 'vexp', I(NOW + ttl), rev)
  browseChanged(rev) -- every instance's copy of the revocations (prelude/76_revocation_sync.lua)
  local ls, as = {}, {}
  for _, id in ipairs(call('SMEMBERS', P .. 'ol:' .. subject)) do
    if tenant == '' or call('HGET', P .. 'l:' .. id, 'tenant') == tenant then ls[#ls + 1] = id end
  end
  for _, aid in ipairs(call('SMEMBERS', P .. 'ca:' .. subject)) do
    if tenant == '' or call('HGET', P .. 'a:' .. aid, 'tenant') == tenant then as[#as + 1] = aid end
  end
  for _, id in ipairs(ls) do removeListing(id, END_REVOKED) end
  for _, aid in ipairs(as) do removeAttempt(aid, END_REVOKED) end
  return {OK, 0, #ls + #as}
end
