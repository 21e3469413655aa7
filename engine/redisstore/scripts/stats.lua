-- Stats after cleanup: unavailable, draining, the six pools' occupancy,
-- attempts in flight.
redis.register_function('rdv_stats', function(keys, a)
  begin(keys, a)
  local function z(k) return call('ZCARD', P .. k) end
  return {META.unavail and 1 or 0, META.draining and 1 or 0,
    z('lexp'), z('pexp'), z('aexp'), z('rexp'), z('vexp'), z('iexp'), tonumber(call('HGET', P .. 'meta', 'inflight') or '0')}
end)
