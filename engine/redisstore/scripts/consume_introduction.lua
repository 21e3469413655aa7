-- ConsumeIntroduction. Arguments (ARG.by_handle): attempt handle. Success
-- once both endpoints are bound, ReplayRejected after, Conflict while one
-- is missing and always for a relay-only attempt (only its relay
-- introduction is).
redis.register_function('rdv_consume_introduction', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local aid = call('HGET', P .. 'ah', a[ARG.by_handle.handle])
  if not aid then return {NOT_FOUND, 0} end
  local f = call('HMGET', P .. 'a:' .. aid, 'consumed', 'host', 'peer', 'ronly')
  if f[1] == '1' then return {REPLAY_REJECTED, 0} end
  if f[2] == '' or f[3] == '' or f[4] == '1' then return {CONFLICT, 0} end
  consume(aid)
  return {OK, 0, 0, introduction(aid)}
end)
