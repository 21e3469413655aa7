-- MarkOffered. Arguments (ARG.by_handle): attempt handle. Success, with
-- replay when the host was told before; NotFound for an unknown handle.
redis.register_function('rdv_mark_offered', function(keys, a)
  local handle = a[ARG.by_handle.handle]
  if #handle ~= 36 then return redis.error_reply('rdv_mark_offered: bad handle') end
  begin(keys, a, true)
  if unavailable() then return {UNAVAILABLE, 0} end
  local aid = call('HGET', P .. 'ah', handle)
  if not aid then return {NOT_FOUND, 0} end
  if call('HGET', P .. 'a:' .. aid, 'off') == '1' then return {OK, 0, 1} end
  call('HSET', P .. 'a:' .. aid, 'off', '1')
  return {OK, 0, 0}
end)
