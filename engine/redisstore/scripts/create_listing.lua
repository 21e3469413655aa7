-- CreateListing. Arguments (ARG.create_listing): tenant, owner, idempotency
-- key, request fingerprint, listing ID, lease ID, presence handle, lease
-- key, presence record field (listing ID and presence key fingerprint,
-- binary), spec, doc, players, max players, protocol, public (1/0), region,
-- attributes (attrsArg in Go, '' for none; the field 'at' is absent then).
-- Order: unavailable, draining, revoked, idempotency (conflict, replay,
-- expired), pools (listings, idempotency), quotas (owner listings, owner
-- idempotency records, tenant listings, tenant idempotency records). The listing keeps its idempotency
-- key: a renewal extends the record (rdv_renew_lease).
redis.register_function('rdv_create_listing', function(keys, a)
  begin(keys, a)
  local at = ARG.create_listing
  local tenant, owner, ik, fp = a[at.tenant], a[at.owner], a[at.idem], a[at.request]
  local id, lease, pres, field = a[at.listing], a[at.lease], a[at.presence], a[at.presence_field]
  local r = admit(tenant, owner)
  if r ~= OK then return {r, 0} end
  local replay = idemReplay(ik, fp, 'l:', listingView)
  if replay then return replay end
  if call('ZCARD', P .. 'lexp') >= LIM.MAX_L then return {CAPACITY, P_LISTINGS} end
  if call('ZCARD', P .. 'iexp') >= LIM.MAX_I then return {CAPACITY, P_IDEM} end
  if call('SCARD', P .. 'ol:' .. owner) >= LIM.OWNER_Q then return {CAPACITY, Q_OWNER} end
  if subjectIdem(owner) >= LIM.SUBJECT_IQ then return {CAPACITY, Q_SUBJECT_IDEM} end
  local q = tenantQuota(tenant, 'l', LIM.TENANT_LQ, Q_TENANT_LISTINGS, 'lexp', LIM.MAX_L)
  if q then return {CAPACITY, q} end
  if call('EXISTS', P .. 'l:' .. id) == 1 or call('HEXISTS', P .. 'ph', pres) == 1 then return {RETRY, 0} end
  local dl = I(NOW + LIM.LEASE_TTL)
  call('HSET', P .. 'l:' .. id, 'lease', lease, 'pres', pres, 'tenant', tenant, 'owner', owner,
    'lkey', a[at.lease_key], 'spec', a[at.spec], 'doc', a[at.doc], 'players', a[at.players],
    'maxp', a[at.max_players], 'proto', a[at.protocol], 'public', a[at.public], 'region', a[at.region],
    'ver', '1', 'dl', dl, 'ik', ik, 'prf', field, 'ct', I(NOW))
  if a[at.attrs] ~= '' then call('HSET', P .. 'l:' .. id, 'at', a[at.attrs]) end
  call('HSET', P .. 'pr', field, 'i' .. SEQ_ZERO)
  call('ZADD', P .. 'lexp', dl, id)
  call('HSET', P .. 'ph', pres, id)
  call('SADD', P .. 'ol:' .. owner, id)
  tenantAdd(tenant, 'l', 1)
  addIdem(ik, id, fp, tenant, owner)
  return {OK, 0, 0, listingView(id)}
end)
