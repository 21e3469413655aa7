-- RenewLease: compare-and-swap on the version. Arguments (ARG.renew_lease):
-- tenant, owner, listing, lease, lease key, expected version, players (-1:
-- unchanged), set attributes ('1': replace them with the next argument,
-- attrsArg in Go, '' for none; '0': keep them), attributes. A change of
-- players records the log's version in 'kv' (prelude/25_browse_log.lua).
-- Order: players above the owner's listing's max, unavailable, draining,
-- revoked (the owner, globally or in the tenant: admit, as for new work, so
-- the server answers a renewal with this one call), not found, conflict
-- (with the current view), success. A renewal also
-- extends the listing's idempotency record to now + its lifetime, so the
-- record always outlives the listing and a replay never makes a duplicate.
redis.register_function('rdv_renew_lease', function(keys, a)
  begin(keys, a)
  local at = ARG.renew_lease
  local tenant, owner, id, lease, key = a[at.tenant], a[at.owner], a[at.listing], a[at.lease], a[at.lease_key]
  local ver, players = a[at.version], tonumber(a[at.players])
  local f = call('HMGET', P .. 'l:' .. id, 'tenant', 'owner', 'lease', 'lkey', 'ver', 'maxp', 'ik', 'public', 'players')
  local owned = f[1] == tenant and f[2] == owner
  if owned and players > tonumber(f[6]) then return {BAD_PLAYERS, 0} end
  local admitted = admit(tenant, owner)
  if admitted ~= OK then return {admitted, 0} end
  if not owned or f[3] ~= lease or f[4] ~= key then return {NOT_FOUND, 0} end
  if f[5] ~= ver then return {CONFLICT, 0, 0, listingView(id)} end
  local dl = I(NOW + LIM.LEASE_TTL)
  call('HINCRBY', P .. 'l:' .. id, 'ver', 1)
  call('HSET', P .. 'l:' .. id, 'dl', dl)
  local moved = players >= 0 and a[at.players] ~= f[9]
  if moved then call('HSET', P .. 'l:' .. id, 'players', a[at.players]) end
  if a[at.set_attrs] == '1' then
    if a[at.attrs] == '' then call('HDEL', P .. 'l:' .. id, 'at') else call('HSET', P .. 'l:' .. id, 'at', a[at.attrs]) end
  end
  call('ZADD', P .. 'lexp', dl, id)
  call('ZADD', P .. 'iexp', 'XX', I(NOW + LIM.IDEM_TTL), f[7])
  -- A visible listing's lease deadline (and maybe players and attributes)
  -- changed: browse shows them all.
  if f[8] == '1' and call('ZSCORE', P .. 'pexp', id) then browseChanged(id) end
  if moved then call('HSET', P .. 'l:' .. id, 'kv', I(logVersion())) end
  return {OK, 0, 0, listingView(id)}
end)
