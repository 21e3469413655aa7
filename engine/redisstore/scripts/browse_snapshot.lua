-- One page of the snapshot an instance rebuilds its local browse index
-- from (browse_mirror.go): the visible listings after an ID, in ID order.
-- Arguments (ARG.browse_snapshot): after ('' from the start), count.
-- Answers {OK, 0, version, generation, more (1/0), now, items...}
-- (browseItem). A deployment whose 'bva' predates the log has it built
-- once, from the fresh presences.
redis.register_function('rdv_browse_snapshot', function(keys, a)
  local head = browseBegin(keys, a)
  if not head then return {UNAVAILABLE, 0} end
  if call('HGET', P .. 'meta', 'bva') ~= '1' then
    for _, id in ipairs(call('ZRANGE', P .. 'pexp', 0, -1)) do
      if call('HGET', P .. 'l:' .. id, 'public') == '1' then call('ZADD', P .. 'bva', 0, id) end
    end
    call('HSET', P .. 'meta', 'bva', '1')
  end
  local at = ARG.browse_snapshot
  local min, count = '-', tonumber(a[at.count])
  if a[at.after] ~= '' then min = '(' .. a[at.after] end
  local ids = call('ZRANGEBYLEX', P .. 'bva', min, '+', 'LIMIT', 0, count + 1)
  head[5], head[6] = 0, I(NOW)
  if #ids > count then head[5] = 1 end
  for i = 1, math.min(#ids, count) do head[#head + 1] = browseItem(ids[i]) end
  return head
end)
