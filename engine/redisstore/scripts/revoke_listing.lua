-- RevokeListing. ARGV[3..]: any tenant (1/0), tenant, listing.
redis.register_function('rdv_revoke_listing', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local t = call('HGET', P .. 'l:' .. a[5], 'tenant')
  if not t or (a[3] ~= '1' and t ~= a[4]) then return {NOT_FOUND, 0} end
  removeListing(a[5], END_REVOKED)
  return {OK, 0}
end)
