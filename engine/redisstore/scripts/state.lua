-- State: {unavailable, draining} as flags, for Available and Draining. It
-- writes nothing but is not flagged no-writes on purpose: a server that
-- refuses writes (OOM, a read-only replica) refuses it too, so the store
-- reports itself unavailable exactly when its transitions would fail.
redis.register_function('rdv_state', function(keys, a)
  P = keys[1]
  local m = call('HMGET', P .. 'meta', 'unavail', 'draining')
  return {m[1] == '1' and 1 or 0, m[2] == '1' and 1 or 0}
end)
