-- AttemptHost: the presence handle of an attempt's listing, or '' . A read:
-- no cleanup, so anything past its deadline (the attempt, the listing's
-- lease, the drain window) counts as gone. Arguments (ARG.by_handle):
-- attempt handle.
redis.register_function{function_name = 'rdv_attempt_host', flags = {'no-writes'}, callback = function(keys, a)
  setup(keys, a, false)
  local at = ARG.by_handle
  if META.unavail or (META.draining and NOW >= META.drain_dl) then return '' end
  local aid = call('HGET', P .. 'ah', a[at.handle])
  if not aid then return '' end
  local adl = call('ZSCORE', P .. 'aexp', aid)
  if not adl or tonumber(adl) <= NOW then return '' end
  local lid = call('HGET', P .. 'a:' .. aid, 'listing')
  local ldl = call('ZSCORE', P .. 'lexp', lid)
  if not ldl or tonumber(ldl) <= NOW then return '' end
  return call('HGET', P .. 'l:' .. lid, 'pres')
end}
