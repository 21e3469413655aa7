-- BrowseVisible. Arguments (ARG.browse): tenant, protocol, region ('' any),
-- after ('' from the start), limit. The index of (tenant, protocol[,
-- region]) holds exactly the visible listings (public with fresh presence;
-- cleanup has run), by ID, so a page costs O(log n + limit).
redis.register_function('rdv_browse', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local at = ARG.browse
  local limit, after = tonumber(a[at.limit]), a[at.after]
  local min = '-'
  if after ~= '' then min = '(' .. after end
  local index = P .. 'b:' .. a[at.tenant] .. '\0' .. a[at.protocol] .. '\0' .. a[at.region]
  local ids = call('ZRANGEBYLEX', index, min, '+', 'LIMIT', 0, limit + 1)
  local more = 0
  if #ids > limit then more = 1 end
  local views = {}
  for i = 1, math.min(#ids, limit) do views[i] = listingView(ids[i]) end
  return {OK, 0, more, views}
end)
