-- DeleteListing. ARGV[3..]: tenant, owner, listing, lease, lease key.
redis.register_function('rdv_delete_listing', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local f = call('HMGET', P .. 'l:' .. a[5], 'tenant', 'owner', 'lease', 'lkey')
  if f[1] ~= a[3] or f[2] ~= a[4] or f[3] ~= a[6] or f[4] ~= a[7] then return {NOT_FOUND, 0} end
  removeListing(a[5])
  return {OK, 0}
end)
