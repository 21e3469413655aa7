-- Attempts: their creation (a join's and a quick join's checks and
-- writes), endpoint binds, the one-time introduction and the relay
-- fallback's relay introduction and outcome reports.

-- joinTarget checks listing lid as a join's target, for tenant at
-- protocol proto with the presence handle pres the caller derived:
-- NOT_FOUND (missing, another tenant or protocol or presence, the presence
-- not fresh, or, when public is set, not public), then FULL (its host
-- reports current_players >= max_players), else OK and its spec.
local function joinTarget(lid, tenant, proto, pres, public)
  local l = call('HMGET', P .. 'l:' .. lid, 'tenant', 'proto', 'pres', 'spec', 'players', 'maxp', 'public')
  if l[1] ~= tenant or l[2] ~= proto or l[3] ~= pres or (public and l[7] ~= '1') or not call('ZSCORE', P .. 'pexp', lid) then
    return NOT_FOUND
  end
  if tonumber(l[5]) >= tonumber(l[6]) then return FULL end
  return OK, l[4]
end

-- joinQuota answers the pool or quota a new attempt of client in tenant
-- would exceed (attempts, idempotency, the subject's attempts and
-- idempotency records, the tenant's), else nil.
local function joinQuota(tenant, client)
  if call('ZCARD', P .. 'aexp') >= LIM.MAX_A then return P_ATTEMPTS end
  if call('ZCARD', P .. 'iexp') >= LIM.MAX_I then return P_IDEM end
  if call('SCARD', P .. 'ca:' .. client) >= LIM.SUBJECT_AQ then return Q_SUBJECT_ATTEMPTS end
  if subjectIdem(client) >= LIM.SUBJECT_IQ then return Q_SUBJECT_IDEM end
  return tenantQuota(tenant, 'a', LIM.TENANT_AQ, Q_TENANT_ATTEMPTS, 'aexp', LIM.MAX_A)
end

-- attemptCreate creates the attempt of a join (create_attempt.lua) or
-- quick join (quick_join.lua) on listing lid (whose spec is spec) with
-- host key hostKey, the other values read from a by the names both
-- functions' positions at share: the transition's answer, RETRY when an
-- ID collides (nothing written).
local function attemptCreate(a, at, lid, hostKey, spec)
  local tenant, client, aid, handle, ronly = a[at.tenant], a[at.client], a[at.attempt], a[at.handle], a[at.relay_only]
  if call('EXISTS', P .. 'a:' .. aid) == 1 or call('HEXISTS', P .. 'ah', handle) == 1 then return {RETRY, 0} end
  local seq = call('HINCRBY', P .. 'meta', 'seq', 1)
  local dl = I(NOW + LIM.ATT_TTL)
  if ronly == '0' and cjson.decode(spec).RelayOnlyJoins == true then ronly = '1' end
  call('HSET', P .. 'a:' .. aid, 'handle', handle, 'listing', lid, 'tenant', tenant, 'client', client,
    'hkey', hostKey, 'ckey', a[at.client_key], 'host', '', 'peer', '', 'consumed', '0', 'dl', dl, 'ronly', ronly)
  call('ZADD', P .. 'aexp', dl, aid)
  call('HSET', P .. 'ah', handle, aid)
  call('ZADD', P .. 'la:' .. lid, seq, aid)
  call('ZADD', P .. 'lp:' .. lid, seq, handle)
  pendingSync(lid)
  call('SADD', P .. 'ca:' .. client, aid)
  tenantAdd(tenant, 'a', 1)
  call('HINCRBY', P .. 'meta', 'inflight', 1)
  addIdem(a[at.idem], aid, a[at.request], tenant, client)
  return {OK, 0, 0, attemptView(aid)}
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
  call('HSET', P .. 'a:' .. aid, bf, binding, bf .. 'i', INST, rf, relayed)
  if role == 'h' and call('ZREM', P .. 'lp:' .. f[3], handle) == 1 then pendingSync(f[3]) end
  return {OK, 0, aid}
end

-- consume marks the introduction consumed. An attempt is in flight until
-- either introduction is consumed.
local function consume(aid)
  if call('HGET', P .. 'a:' .. aid, 'relayed') ~= '1' then call('HINCRBY', P .. 'meta', 'inflight', -1) end
  call('HSET', P .. 'a:' .. aid, 'consumed', '1')
end

-- An attempt hash gains: ronly (relay-only, '1'), off (the host was told),
-- hrel/crel (the sides' relayed addresses, '' until recorded), relayed (the
-- relay introduction consumed), hout/cout (outcome reports, "path:ms").

-- relayIntroduce consumes attempt aid's relay introduction once both relayed
-- addresses are recorded, or reads it back after: ready, first and
-- {id, handle, host relayed, client relayed}.
local NO_RELAY = {}
local function relayIntroduce(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'hrel', 'crel', 'relayed', 'consumed', 'handle')
  if not f[1] or f[1] == '' or not f[2] or f[2] == '' then return 0, 0, NO_RELAY end
  local first = 0
  if f[3] ~= '1' then
    if f[4] ~= '1' then call('HINCRBY', P .. 'meta', 'inflight', -1) end
    call('HSET', P .. 'a:' .. aid, 'relayed', '1')
    first = 1
  end
  return 1, first, {aid, f[5], f[1], f[2]}
end

-- relayReport records one side's outcome (path 1-3, ms): the first per side is
-- kept. {outcome, 0[, duplicate, tenant, attempt view]} (the answer carries
-- the attempt's lifetime, as a bind's). NotFound for an unknown handle
-- or a wrong key, as a bind. The Go side sends only valid roles and paths;
-- another is refused here before any write, as NotFound, so a malformed op
-- fails alone and the batch's other ops keep their answers.
local function relayReport(handle, key, role, path, ms)
  if (role ~= 'h' and role ~= 'c') or path < 1 or path > 3 then return {NOT_FOUND, 0} end
  if unavailable() then return {UNAVAILABLE, 0} end
  local aid = call('HGET', P .. 'ah', handle)
  if not aid then return {NOT_FOUND, 0} end
  local kf, of = 'ckey', 'cout'
  if role == 'h' then kf, of = 'hkey', 'hout' end
  local f = call('HMGET', P .. 'a:' .. aid, kf, of, 'tenant')
  if f[1] ~= key then return {NOT_FOUND, 0} end
  local dup = 1
  if not f[2] or f[2] == '' then
    call('HSET', P .. 'a:' .. aid, of, I(path) .. ':' .. I(ms))
    dup = 0
  end
  return {OK, 0, dup, f[3], attemptView(aid)}
end
