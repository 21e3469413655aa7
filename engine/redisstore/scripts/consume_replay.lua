-- ConsumeReplay. Arguments (ARG.consume_replay): the ticket, packed
-- (namespace, key), and its lifetime in ticks.
redis.register_function('rdv_consume_replay', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  local at = ARG.consume_replay
  local ticket = a[at.ticket]
  if call('ZSCORE', P .. 'rexp', ticket) then return {REPLAY_REJECTED, 0} end
  if call('ZCARD', P .. 'rexp') >= LIM.MAX_R then return {CAPACITY, P_REPLAY} end
  call('ZADD', P .. 'rexp', I(NOW + tonumber(a[at.ttl])), ticket)
  return {OK, 0}
end)
