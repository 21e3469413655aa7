-- GetListing. Arguments (ARG.get_listing): tenant, listing, joinable (1/0).
redis.register_function('rdv_get_listing', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local at = ARG.get_listing
  local id = a[at.listing]
  if call('HGET', P .. 'l:' .. id, 'tenant') ~= a[at.tenant] then return {NOT_FOUND, 0} end
  if a[at.joinable] == '1' and not call('ZSCORE', P .. 'pexp', id) then return {NOT_FOUND, 0} end
  return {OK, 0, 0, listingView(id)}
end)
