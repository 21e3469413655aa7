-- MarkUnavailable: fail closed; every later transition answers
-- ServiceUnavailable, and active state is erased (revocations stay).
redis.register_function('rdv_mark_unavailable', function(keys, a)
  setup(keys, a, true)
  call('HSET', P .. 'meta', 'unavail', '1')
  clearActive()
  clearTombs()
  return {OK, 0}
end)
