-- RevokeListing. Arguments (ARG.revoke_listing): any tenant (1/0), tenant,
-- listing.
redis.register_function('rdv_revoke_listing', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local at = ARG.revoke_listing
  local id = a[at.listing]
  local t = call('HGET', P .. 'l:' .. id, 'tenant')
  if not t or (a[at.any_tenant] ~= '1' and t ~= a[at.tenant]) then return {NOT_FOUND, 0} end
  removeListing(id, END_REVOKED)
  return {OK, 0}
end)
