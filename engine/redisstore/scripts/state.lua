-- State: {unavailable, draining} as flags, for Available and Draining.
redis.register_function{function_name = 'rdv_state', flags = {'no-writes'}, callback = function(keys, a)
  P = keys[1]
  local m = call('HMGET', P .. 'meta', 'unavail', 'draining')
  return {m[1] == '1' and 1 or 0, m[2] == '1' and 1 or 0}
end}
