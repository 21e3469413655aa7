-- DeleteListing. Arguments (ARG.delete_listing): tenant, owner, listing,
-- lease, lease key.
redis.register_function('rdv_delete_listing', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local at = ARG.delete_listing
  local id = a[at.listing]
  local f = call('HMGET', P .. 'l:' .. id, 'tenant', 'owner', 'lease', 'lkey')
  if f[1] ~= a[at.tenant] or f[2] ~= a[at.owner] or f[3] ~= a[at.lease] or f[4] ~= a[at.lease_key] then
    return {NOT_FOUND, 0}
  end
  removeListing(id)
  return {OK, 0}
end)
