-- Stats after cleanup: unavailable, draining, the six pools' occupancy,
-- attempts in flight.
redis.register_function('rdv_stats', function(keys, a)
  begin(keys, a)
  local m = call('HMGET', P .. 'meta', 'unavail', 'draining', 'inflight')
  local function z(k) return call('ZCARD', P .. k) end
  return {m[1] == '1' and 1 or 0, m[2] == '1' and 1 or 0,
    z('lexp'), z('pexp'), z('aexp'), z('rexp'), z('vexp'), z('iexp'), tonumber(m[3] or '0')}
end)
