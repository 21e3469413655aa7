-- CreateJoinAttempt. Arguments (ARG.create_attempt): tenant, client,
-- idempotency key, request fingerprint, listing, protocol, attempt ID,
-- handle, the listing's presence handle as the caller derived it, host key,
-- client key, relay-only requested ('1'/'0'; the attempt is relay-only also
-- when the listing's spec has RelayOnlyJoins). Order: unavailable,
-- draining, revoked, idempotency, not found (missing, other tenant,
-- protocol mismatch, presence not fresh), pools (attempts, idempotency),
-- quotas (subject attempts, subject idempotency records, tenant attempts,
-- tenant idempotency records).
redis.register_function('rdv_create_attempt', function(keys, a)
  local at = ARG.create_attempt
  local ronly = a[at.relay_only]
  if ronly ~= '0' and ronly ~= '1' then return redis.error_reply('rdv_create_attempt: bad relay-only flag') end
  begin(keys, a)
  local tenant, client, ik, fp = a[at.tenant], a[at.client], a[at.idem], a[at.request]
  local lid, aid, handle = a[at.listing], a[at.attempt], a[at.handle]
  local r = admit(tenant, client)
  if r ~= OK then return {r, 0} end
  local replay = idemReplay(ik, fp, 'a:', attemptView)
  if replay then return replay end
  local l = call('HMGET', P .. 'l:' .. lid, 'tenant', 'proto', 'pres', 'spec')
  if l[1] ~= tenant or l[2] ~= a[at.protocol] or l[3] ~= a[at.presence] or not call('ZSCORE', P .. 'pexp', lid) then
    return {NOT_FOUND, 0}
  end
  if call('ZCARD', P .. 'aexp') >= LIM.MAX_A then return {CAPACITY, P_ATTEMPTS} end
  if call('ZCARD', P .. 'iexp') >= LIM.MAX_I then return {CAPACITY, P_IDEM} end
  if call('SCARD', P .. 'ca:' .. client) >= LIM.SUBJECT_AQ then return {CAPACITY, Q_SUBJECT_ATTEMPTS} end
  if subjectIdem(client) >= LIM.SUBJECT_IQ then return {CAPACITY, Q_SUBJECT_IDEM} end
  local q = tenantQuota(tenant, 'a', LIM.TENANT_AQ, Q_TENANT_ATTEMPTS, 'aexp', LIM.MAX_A)
  if q then return {CAPACITY, q} end
  if call('EXISTS', P .. 'a:' .. aid) == 1 or call('HEXISTS', P .. 'ah', handle) == 1 then return {RETRY, 0} end
  local seq = call('HINCRBY', P .. 'meta', 'seq', 1)
  local dl = I(NOW + LIM.ATT_TTL)
  if ronly == '0' and cjson.decode(l[4]).RelayOnlyJoins == true then ronly = '1' end
  call('HSET', P .. 'a:' .. aid, 'handle', handle, 'listing', lid, 'tenant', tenant, 'client', client,
    'hkey', a[at.host_key], 'ckey', a[at.client_key], 'host', '', 'peer', '', 'consumed', '0', 'dl', dl, 'ronly', ronly)
  call('ZADD', P .. 'aexp', dl, aid)
  call('HSET', P .. 'ah', handle, aid)
  call('ZADD', P .. 'la:' .. lid, seq, aid)
  call('ZADD', P .. 'lp:' .. lid, seq, handle)
  pendingSync(lid)
  call('SADD', P .. 'ca:' .. client, aid)
  tenantAdd(tenant, 'a', 1)
  call('HINCRBY', P .. 'meta', 'inflight', 1)
  addIdem(ik, aid, fp, tenant, client)
  return {OK, 0, 0, attemptView(aid)}
end)
