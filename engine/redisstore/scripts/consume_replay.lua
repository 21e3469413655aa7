-- ConsumeReplay. ARGV[3..]: packed (namespace, key), lifetime in ticks.
redis.register_function('rdv_consume_replay', function(keys, a)
  begin(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  if call('ZSCORE', P .. 'rexp', a[3]) then return {REPLAY_REJECTED, 0} end
  if call('ZCARD', P .. 'rexp') >= LIM[MAX_R] then return {CAPACITY, P_REPLAY} end
  call('ZADD', P .. 'rexp', I(NOW + tonumber(a[4])), a[3])
  return {OK, 0}
end)
