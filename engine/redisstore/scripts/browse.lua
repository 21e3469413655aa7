-- BrowseVisible. Arguments (ARG.browse): tenant, protocol, region ('' any),
-- after ('' from the start), limit, ids. The index of (tenant, protocol[,
-- region]) holds exactly the visible listings (public with fresh presence;
-- cleanup has run), by ID, so a page costs O(log n + limit). A page with
-- a filter or in another order is walked on the caller's local browse
-- index (browse_index.go), which sends the IDs it found, concatenated (ids,
-- else ''): the views of those still in the index, in that order, with
-- the more flag 0 (the caller has it).
redis.register_function('rdv_browse', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local at = ARG.browse
  local limit, after, chosen = tonumber(a[at.limit]), a[at.after], a[at.ids]
  local index = P .. 'b:' .. a[at.tenant] .. '\0' .. a[at.protocol] .. '\0' .. a[at.region]
  local views = {}
  if chosen ~= '' then
    for i = 1, #chosen, 36 do
      local id = sub(chosen, i, i + 35)
      if call('ZSCORE', index, id) then views[#views + 1] = listingView(id) end
    end
    return {OK, 0, 0, views}
  end
  local min = '-'
  if after ~= '' then min = '(' .. after end
  local ids = call('ZRANGEBYLEX', index, min, '+', 'LIMIT', 0, limit + 1)
  local more = 0
  if #ids > limit then more = 1 end
  for i = 1, math.min(#ids, limit) do views[i] = listingView(ids[i]) end
  return {OK, 0, more, views}
end)
