-- CreateJoinAttempt. Arguments (ARG.create_attempt): tenant, client,
-- idempotency key, request fingerprint, listing, protocol, attempt ID,
-- handle, the listing's presence handle as the caller derived it, host key,
-- client key, relay-only requested ('1'/'0'; the attempt is relay-only also
-- when the listing's spec has RelayOnlyJoins). Order: unavailable,
-- draining, revoked, idempotency, not found (missing, other tenant,
-- protocol mismatch, presence not fresh), full, pools (attempts,
-- idempotency), quotas (subject attempts, subject idempotency records,
-- tenant attempts, tenant idempotency records): prelude/90_attempt.lua.
redis.register_function('rdv_create_attempt', function(keys, a)
  local at = ARG.create_attempt
  local ronly = a[at.relay_only]
  if ronly ~= '0' and ronly ~= '1' then return redis.error_reply('rdv_create_attempt: bad relay-only flag') end
  begin(keys, a)
  local tenant, client, lid = a[at.tenant], a[at.client], a[at.listing]
  local r = admit(tenant, client)
  if r ~= OK then return {r, 0} end
  local replay = idemReplay(a[at.idem], a[at.request], 'a:', attemptView)
  if replay then return replay end
  local t, spec = joinTarget(lid, tenant, a[at.protocol], a[at.presence], false)
  if t ~= OK then return {t, 0} end
  local q = joinQuota(tenant, client)
  if q then return {CAPACITY, q} end
  return attemptCreate(a, at, lid, a[at.host_key], spec)
end)
