-- EndDrain: a server process starting on the deployment ends its drain, as
-- a new process of the memory store starts empty and serving: what the
-- drain window's end erases is erased now (revocations stay), and new work
-- is taken again. Answers {OK, 0, 1} when a drain was ended, {OK, 0, 0}
-- when none ran (nothing changes).
redis.register_function('rdv_end_drain', function(keys, a)
  setup(keys, a, true)
  if not META.draining then return {OK, 0, 0} end
  clearActive()
  call('HDEL', P .. 'meta', 'draining', 'drain_dl')
  return {OK, 0, 1}
end)
