-- Introduction reads back a consumed introduction. Arguments
-- (ARG.by_handle): attempt handle.
redis.register_function('rdv_introduction', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local aid = call('HGET', P .. 'ah', a[ARG.by_handle.handle])
  if not aid then return {NOT_FOUND, 0} end
  if call('HGET', P .. 'a:' .. aid, 'consumed') ~= '1' then return {CONFLICT, 0} end
  return {OK, 0, 0, introduction(aid)}
end)
