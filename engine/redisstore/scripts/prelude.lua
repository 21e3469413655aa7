-- Shared helpers of every Rendezvous transition (concatenated before the
-- transition files into the one library "rendezvous" at load time).
--
-- Every function is called with KEYS[1] = the deployment's key prefix
-- (hash-tagged, so all keys share one slot), ARGV[1] = "now" in ticks, or ""
-- for the server's TIME in microseconds, and ARGV[2] = the limits (ticks and
-- counts, see limitsArg in Go). Transition arguments start at ARGV[3].
--
-- Numbers handed to redis.call are formatted with I(): Lua would otherwise
-- print them with 14 significant digits and lose precision.

local P, NOW = '', 0
local LIM = {}
local LEASE_TTL, PRES_TTL, ATT_TTL, REPLAY_TTL, IDEM_TTL, DRAIN = 1, 2, 3, 4, 5, 6
local MAX_L, MAX_P, MAX_A, MAX_R, MAX_V, MAX_I, OWNER_Q, TENANT_AQ = 7, 8, 9, 10, 11, 12, 13, 14
local SUBJECT_AQ, TENANT_LQ, TENANT_IQ = 15, 16, 17

-- engine.Outcome and engine.Pool values.
local OK, NOT_FOUND, EXPIRED, REVOKED, CONFLICT, CAPACITY, DRAINING, REPLAY_REJECTED, UNAVAILABLE = 0, 1, 2, 3, 4, 5, 6, 7, 8
local P_LISTINGS, P_PRESENCE, P_ATTEMPTS, P_REPLAY, P_REVOCATIONS, P_IDEM = 1, 2, 3, 4, 5, 6
local Q_OWNER, Q_TENANT_ATTEMPTS, Q_SUBJECT_ATTEMPTS, Q_TENANT_LISTINGS, Q_TENANT_IDEM = 7, 8, 9, 10, 11
-- Answers that are not outcomes: the Go side regenerates IDs (a collision),
-- or reports current_players above the listing's max_players.
local RETRY, BAD_PLAYERS = -1, -2

local function I(n) return string.format('%.0f', n) end
local function call(...) return redis.call(...) end

-- RELAY holds the relay fallback's helpers (prelude_relay.lua, loaded after
-- this file), so the helpers here can call them. END_* are engine.AttemptEnd:
-- why an attempt record went (its tombstone says).
local RELAY = {}
local END_EXPIRED, END_LISTING_REMOVED, END_LEASE_EXPIRED, END_REVOKED, END_DRAINED = 1, 2, 3, 4, 5

-- gtDec reports whether decimal string a > b (uint64 values exceed what a
-- Lua number holds exactly).
local function gtDec(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end

-- META is the deployment's state flags, read once per call by setup.
local META = {}

-- setup reads the call's context: prefix, limits (parsed again only when
-- they change), the flags and the time, clamped never to run backwards
-- (and the clamp moved forward when write is set).
local LIM_SRC = nil
local function setup(keys, args, write)
  P = keys[1]
  if args[2] ~= LIM_SRC then
    LIM = {}
    for w in string.gmatch(args[2], '%S+') do LIM[#LIM + 1] = tonumber(w) end
    LIM_SRC = args[2]
  end
  local m = call('HMGET', P .. 'meta', 'clock', 'unavail', 'draining', 'drain_dl')
  META = {unavail = m[2] == '1', draining = m[3] == '1', drain_dl = tonumber(m[4] or '0')}
  local n
  if args[1] ~= '' then
    n = tonumber(args[1])
  else
    local t = call('TIME')
    n = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  local last = tonumber(m[1] or '0')
  if n < last then
    n = last -- never run backwards (a failover to a replica whose clock lags)
  elseif n > last and write then
    call('HSET', P .. 'meta', 'clock', I(n))
  end
  NOW = n
end

local function tenantAdd(tenant, field, d)
  local key = P .. 't:' .. tenant
  if call('HINCRBY', key, field, d) == 0 then call('HDEL', key, field) end
end

-- tenantCount reads one of a tenant's counts: l(istings), a(ttempts),
-- i(dempotency records).
local function tenantCount(tenant, field)
  return tonumber(call('HGET', P .. 't:' .. tenant, field) or '0')
end

-- tenantQuota answers the quota a new record of a tenant would exceed: its
-- quota of the kind being created (field, limit, pool), else its share of
-- the idempotency pool, else nil.
local function tenantQuota(tenant, field, limit, pool)
  if tenantCount(tenant, field) >= LIM[limit] then return pool end
  if tenantCount(tenant, 'i') >= LIM[TENANT_IQ] then return Q_TENANT_IDEM end
  return nil
end

local function unavailable() return META.unavail end

-- expirePresence ends a listing's presence (its last sequence stays).
local function expirePresence(id)
  local f = call('HMGET', P .. 'l:' .. id, 'tenant', 'proto', 'region', 'public')
  call('ZREM', P .. 'pexp', id)
  if f[4] == '1' then
    call('ZREM', P .. 'b:' .. f[1] .. '\0' .. f[2] .. '\0', id)
    call('ZREM', P .. 'b:' .. f[1] .. '\0' .. f[2] .. '\0' .. f[3], id)
  end
  call('HSET', P .. 'l:' .. id, 'pub', '', 'loc', '', 'pdl', '')
end

-- presenceDue handles a pexp entry found due: a refresh moves only the
-- record's deadline (pdl), so an entry found early is moved to that
-- deadline (once per presence lifetime, not per refresh), else the
-- presence ends.
local function presenceDue(id)
  local dl = call('HGET', P .. 'l:' .. id, 'pdl')
  if dl and dl ~= '' and tonumber(dl) > NOW then
    call('ZADD', P .. 'pexp', dl, id)
  else
    expirePresence(id)
  end
end

-- removeAttempt removes an attempt, leaving its tombstone (ended by cause,
-- END_EXPIRED when nil).
local function removeAttempt(aid, cause)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'listing', 'tenant', 'client', 'consumed', 'relayed')
  if not f[1] then
    call('ZREM', P .. 'aexp', aid)
    return
  end
  RELAY.tombstone(aid, cause or END_EXPIRED)
  call('ZREM', P .. 'la:' .. f[2], aid)
  if call('ZREM', P .. 'lp:' .. f[2], f[1]) == 1 then call('HINCRBY', P .. 'l:' .. f[2], 'np', -1) end
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
  local f = call('HMGET', P .. 'l:' .. id, 'pres', 'owner', 'tenant')
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
end

-- An idempotency record's value: result ID (36), '|', request fingerprint
-- (64 hex), '|', tenant.
local function idemParse(v) return string.sub(v, 1, 36), string.sub(v, 38, 101), string.sub(v, 103) end

local function removeIdem(ik)
  local v = call('HGET', P .. 'idem', ik)
  if v then
    local _, _, tenant = idemParse(v)
    tenantAdd(tenant, 'i', -1)
  end
  call('HDEL', P .. 'idem', ik)
  call('ZREM', P .. 'iexp', ik)
end

local function addIdem(ik, res, fp, tenant)
  call('HSET', P .. 'idem', ik, res .. '|' .. fp .. '|' .. tenant)
  call('ZADD', P .. 'iexp', I(NOW + LIM[IDEM_TTL]), ik)
  tenantAdd(tenant, 'i', 1)
end

-- drainDue removes every member of deadline set z due at or before upto,
-- in bounded chunks, earliest first; remove must drop the member from z.
local function drainDue(z, upto, remove)
  while true do
    local ids = call('ZRANGEBYSCORE', P .. z, '-inf', upto, 'LIMIT', 0, 256)
    if #ids == 0 then return end
    for _, id in ipairs(ids) do remove(id) end
  end
end

-- clearActive erases listings, presence, attempts, idempotency and replay
-- records (revocations stay): the end of drain and MarkUnavailable.
local function clearActive()
  drainDue('lexp', '+inf', function(id) removeListing(id, END_DRAINED) end)
  drainDue('iexp', '+inf', removeIdem)
  call('DEL', P .. 'rexp')
end

-- cleanup runs at the start of every transition: everything whose deadline
-- is <= now goes, each record at O(log n) (the deadline sets are ordered);
-- nothing is scanned. presenceOnly leaves out the pools no presence
-- refresh or attempt bind reads or counts (revocations, replay tickets,
-- idempotency records): the next transition that does removes their due
-- records first, so no answer can tell.
local function cleanup(presenceOnly)
  if META.draining and NOW >= META.drain_dl then clearActive() end
  local now = I(NOW)
  if not presenceOnly then
    call('ZREMRANGEBYSCORE', P .. 'vexp', '-inf', now)
    call('ZREMRANGEBYSCORE', P .. 'rexp', '-inf', now)
    drainDue('iexp', now, removeIdem)
    drainDue('xexp', now, RELAY.removeTomb)
  end
  drainDue('pexp', now, presenceDue)
  drainDue('aexp', now, removeAttempt)
  drainDue('lexp', now, function(id) removeListing(id, END_LEASE_EXPIRED) end)
end

local function begin(keys, args, presenceOnly)
  setup(keys, args, true)
  cleanup(presenceOnly)
end

-- admit is the check for new work: unavailable, draining, revoked (globally
-- or in the tenant).
local function admit(tenant, subject)
  if META.unavail then return UNAVAILABLE end
  if META.draining then return DRAINING end
  if call('ZSCORE', P .. 'vexp', 'g\0' .. subject) or call('ZSCORE', P .. 'vexp', 't\0' .. tenant .. '\0' .. subject) then
    return REVOKED
  end
  return OK
end

-- listingView: id, lease, presence, tenant, owner, spec, doc, players,
-- version, lease deadline, ttl, fresh, public, local.
local function listingView(id)
  local f = call('HMGET', P .. 'l:' .. id, 'lease', 'pres', 'tenant', 'owner', 'spec', 'doc', 'players', 'ver', 'dl', 'pub', 'loc')
  local fresh = 0
  if f[10] and f[10] ~= '' then fresh = 1 end
  return {id, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], tonumber(f[9]) - NOW, fresh, f[10] or '', f[11] or ''}
end

-- attemptView: id, handle, listing, tenant, client, deadline, ttl, host
-- presence, host presence public, host binding, client binding, consumed,
-- relay-only, host relayed, client relayed, relay introduction consumed.
local function attemptView(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'listing', 'tenant', 'client', 'dl', 'host', 'peer', 'consumed',
    'ronly', 'hrel', 'crel', 'relayed')
  local l = call('HMGET', P .. 'l:' .. f[2], 'pres', 'pub')
  return {aid, f[1], f[2], f[3], f[4], f[5], tonumber(f[5]) - NOW, l[1] or '', l[2] or '', f[6], f[7], f[8],
    f[9] or '', f[10] or '', f[11] or '', f[12] or ''}
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

local function introduction(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'host', 'peer')
  return {aid, f[1], f[2], f[3]}
end

-- presenceDeadline is a refresh's new deadline, formatted once per call.
local PDL_NOW, PDL = nil, ''
local function presenceDeadline()
  if PDL_NOW ~= NOW then PDL_NOW, PDL = NOW, I(NOW + LIM[PRES_TTL]) end
  return PDL
end

local NO_PENDING = {}

-- bindPresence is BindHostPresence after cleanup: outcome, pool and, when
-- accepted, the listing ID and up to four attempts of the listing whose
-- host endpoint is unbound, oldest first (np counts them: most refreshes
-- find none and skip the read). id, when the caller knows it, is the
-- listing ph maps handle to (an ID is never reused, so a deleted listing's
-- record is simply missing: NotFound). A refresh of a fresh presence writes the
-- record only: its deadline (pdl) moves, its entry in pexp stays, and
-- cleanup re-times that entry when it comes due (presenceDue).
local function bindPresence(handle, key, seq, pub, loc, id)
  if unavailable() then return UNAVAILABLE, 0 end
  if not id or id == '' then
    id = call('HGET', P .. 'ph', handle)
    if not id then return NOT_FOUND, 0 end
  end
  local lk = P .. 'l:' .. id
  local f = call('HMGET', lk, 'pkey', 'seq', 'pub', 'np')
  if f[1] ~= key then return NOT_FOUND, 0 end
  if seq == '0' or not gtDec(seq, f[2]) then return CONFLICT, 0 end
  local dl = presenceDeadline()
  if f[3] == '' then -- a listing's endpoint is set exactly while its presence is fresh
    if call('ZCARD', P .. 'pexp') >= LIM[MAX_P] then return CAPACITY, P_PRESENCE end
    call('ZADD', P .. 'pexp', dl, id)
    local g = call('HMGET', lk, 'tenant', 'proto', 'region', 'public')
    if g[4] == '1' then
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0', 0, id)
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0' .. g[3], 0, id)
    end
  end
  call('HSET', lk, 'seq', seq, 'pub', pub, 'loc', loc, 'pdl', dl)
  local pending = NO_PENDING
  if f[4] ~= '0' then pending = call('ZRANGE', P .. 'lp:' .. id, 0, 3) end
  return OK, 0, id, pending
end

-- bindAttempt binds one role's endpoint and, when relayed is not '', its
-- relayed address (recorded by the same rule, apart from the endpoint):
-- {outcome, replay, attempt id or ''}.
local function bindAttempt(handle, role, key, binding, relayed)
  if unavailable() then return {UNAVAILABLE, 0, ''} end
  local aid = call('HGET', P .. 'ah', handle)
  if not aid then return {NOT_FOUND, 0, ''} end
  local kf, bf, rf = 'ckey', 'peer', 'crel'
  if role == 'h' then kf, bf, rf = 'hkey', 'host', 'hrel' end
  local f = call('HMGET', P .. 'a:' .. aid, kf, bf, 'listing', rf)
  if f[1] ~= key then return {NOT_FOUND, 0, ''} end
  relayed = relayed or ''
  if f[2] ~= '' then
    if f[2] ~= binding then return {REPLAY_REJECTED, 0, ''} end
    if relayed == '' or f[4] == relayed then return {OK, 1, aid} end
    if f[4] and f[4] ~= '' then return {REPLAY_REJECTED, 0, ''} end
    call('HSET', P .. 'a:' .. aid, rf, relayed) -- the endpoint repeats; the relayed address is new
    return {OK, 0, aid}
  end
  call('HSET', P .. 'a:' .. aid, bf, binding, rf, relayed)
  if role == 'h' and call('ZREM', P .. 'lp:' .. f[3], handle) == 1 then
    call('HINCRBY', P .. 'l:' .. f[3], 'np', -1)
  end
  return {OK, 0, aid}
end

-- consume marks the introduction consumed. An attempt is in flight until
-- either introduction is consumed.
local function consume(aid)
  if call('HGET', P .. 'a:' .. aid, 'relayed') ~= '1' then call('HINCRBY', P .. 'meta', 'inflight', -1) end
  call('HSET', P .. 'a:' .. aid, 'consumed', '1')
end

-- revoke inserts (or re-times) revocation member rev and removes the
-- subject's listings and attempts (in tenant, or everywhere when tenant is
-- ''): O(what the subject has).
local function revoke(tenant, subject, ttl)
  if unavailable() then return {UNAVAILABLE, 0, 0} end
  local rev = 'g\0' .. subject
  if tenant ~= '' then rev = 't\0' .. tenant .. '\0' .. subject end
  if not call('ZSCORE', P .. 'vexp', rev) and call('ZCARD', P .. 'vexp') >= LIM[MAX_V] then
    return {CAPACITY, P_REVOCATIONS, 0}
  end
  call('ZADD', P .. 'vexp', I(NOW + ttl), rev)
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
