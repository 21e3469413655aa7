-- CreateListing. ARGV[3..]: tenant, owner, idempotency key, request
-- fingerprint, listing ID, lease ID, presence handle, lease key, presence
-- record field (listing ID and presence key fingerprint, binary), spec,
-- doc, players, max players, protocol, public (1/0), region.
-- Order: unavailable, draining, revoked, idempotency (conflict, replay,
-- expired), pools (listings, idempotency), quotas (owner listings, tenant
-- listings, tenant idempotency records). The listing keeps its idempotency
-- key: a renewal extends the record (rdv_renew_lease).
redis.register_function('rdv_create_listing', function(keys, a)
  begin(keys, a)
  local tenant, owner, ik, fp, id, lease, pres = a[3], a[4], a[5], a[6], a[7], a[8], a[9]
  local r = admit(tenant, owner)
  if r ~= OK then return {r, 0} end
  local replay = idemReplay(ik, fp, 'l:', listingView)
  if replay then return replay end
  if call('ZCARD', P .. 'lexp') >= LIM[MAX_L] then return {CAPACITY, P_LISTINGS} end
  if call('ZCARD', P .. 'iexp') >= LIM[MAX_I] then return {CAPACITY, P_IDEM} end
  if call('SCARD', P .. 'ol:' .. owner) >= LIM[OWNER_Q] then return {CAPACITY, Q_OWNER} end
  local q = tenantQuota(tenant, 'l', TENANT_LQ, Q_TENANT_LISTINGS)
  if q then return {CAPACITY, q} end
  if call('EXISTS', P .. 'l:' .. id) == 1 or call('HEXISTS', P .. 'ph', pres) == 1 then return {RETRY, 0} end
  local dl = I(NOW + LIM[LEASE_TTL])
  call('HSET', P .. 'l:' .. id, 'lease', lease, 'pres', pres, 'tenant', tenant, 'owner', owner,
    'lkey', a[10], 'spec', a[12], 'doc', a[13], 'players', a[14], 'maxp', a[15],
    'proto', a[16], 'public', a[17], 'region', a[18], 'ver', '1', 'dl', dl, 'ik', ik, 'prf', a[11])
  call('HSET', P .. 'pr', a[11], 'i' .. SEQ_ZERO)
  call('ZADD', P .. 'lexp', dl, id)
  call('HSET', P .. 'ph', pres, id)
  call('SADD', P .. 'ol:' .. owner, id)
  tenantAdd(tenant, 'l', 1)
  addIdem(ik, id, fp, tenant)
  return {OK, 0, 0, listingView(id)}
end)
