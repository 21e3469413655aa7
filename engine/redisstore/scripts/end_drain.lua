-- EndDrain: a server process starting on the deployment ends a drain whose
-- window has passed, as a new process of the memory store starts empty and
-- serving: what the window's end erased stays erased (revocations stay), and
-- new work is taken again. A drain still in its window (an operator drain of
-- the deployment in progress) is left to run: the starting process drains
-- with it. Answers {OK, 0, 1} when a drain was ended, {OK, 0, 0} otherwise
-- (nothing changes).
redis.register_function('rdv_end_drain', function(keys, a)
  setup(keys, a, true)
  if not META.draining or NOW < META.drain_dl then return {OK, 0, 0} end
  clearActive()
  call('HDEL', P .. 'meta', 'draining', 'drain_dl')
  return {OK, 0, 1}
end)
