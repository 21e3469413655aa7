-- QuickJoin: a join attempt on the first of the candidates the caller's
-- local browse index found (most players first among the visible,
-- not-full listings matching the query; browse_index.go) that passes a
-- join's checks, in one call. Arguments (ARG.quick_join): tenant, client,
-- idempotency key (of the quick-join kind), request fingerprint (over the
-- query), protocol, attempt ID, handle, client key, relay-only requested,
-- the number of candidates n, then their listings, their presence handles
-- as the caller derived them and the host keys. Order: unavailable,
-- draining, revoked, idempotency, then per candidate in order a join's
-- checks (not found, which includes not public, then full: the next
-- candidate is tried); on the first that passes, pools and quotas (which
-- no other candidate would pass either) and the attempt. NOT_FOUND when
-- none passes.
redis.register_function('rdv_quick_join', function(keys, a)
  local at = ARG.quick_join
  local ronly, n = a[at.relay_only], tonumber(a[at.count])
  if ronly ~= '0' and ronly ~= '1' then return redis.error_reply('rdv_quick_join: bad relay-only flag') end
  if not n or n < 0 or #a ~= at.count + 3 * n then return redis.error_reply('rdv_quick_join: bad candidates') end
  begin(keys, a)
  local tenant, client, base = a[at.tenant], a[at.client], at.count
  local r = admit(tenant, client)
  if r ~= OK then return {r, 0} end
  local replay = idemReplay(a[at.idem], a[at.request], 'a:', attemptView)
  if replay then return replay end
  for k = 1, n do
    local lid = a[base + k]
    local t, spec = joinTarget(lid, tenant, a[at.protocol], a[base + n + k], true)
    if t == OK then
      local q = joinQuota(tenant, client)
      if q then return {CAPACITY, q} end
      return attemptCreate(a, at, lid, a[base + 2 * n + k], spec)
    end
  end
  return {NOT_FOUND, 0}
end)
