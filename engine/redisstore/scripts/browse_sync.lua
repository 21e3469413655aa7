-- BrowseItems' one call per page (shared by concurrent pages,
-- browse_flight.go), which also brings the instance's local index
-- forward. Arguments (ARG.browse_sync): the version the instance's local
-- index holds, the most log entries to read. Answers {OK, 0, version,
-- generation, upto, items...}: the log's current version, meta's gen (a
-- promotion changes it: the instance rebuilds), and the version the items
-- bring the index to (the current one unless more than max entries are
-- due; -1 when the instance must rebuild: its version is older than the
-- oldest kept entry, or newer than the log). Each listing the entries
-- name appears once, as it is now (browseItem), so the index applies them
-- in any order.
redis.register_function('rdv_browse_sync', function(keys, a)
  local head, base, len = browseBegin(keys, a)
  if not head then return {UNAVAILABLE, 0} end
  local at = ARG.browse_sync
  local from, max = tonumber(a[at.version]), tonumber(a[at.max])
  local ver = base + len
  if from == ver then
    head[5], head[6] = head[3], I(NOW)
    return head
  end
  if from < base or from > ver then
    head[5], head[6] = '-1', I(NOW)
    return head
  end
  local upto = math.min(ver, from + max)
  head[5], head[6] = I(upto), I(NOW)
  local seen = {}
  for _, id in ipairs(call('LRANGE', P .. 'bl', from - base, upto - base - 1)) do
    if not seen[id] then
      seen[id] = true
      head[#head + 1] = syncItem(id)
    end
  end
  return head
end)
