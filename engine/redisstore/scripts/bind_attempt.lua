-- BindAttemptEndpoint. Arguments (ARG.bind_attempt): handle, role (h/c),
-- key, binding, the calling instance's ID, relayed address ('' for none).
redis.register_function('rdv_bind_attempt', function(keys, a)
  begin(keys, a)
  local at = ARG.bind_attempt
  INST = a[at.instance]
  local b = bindAttempt(a[at.handle], a[at.role], a[at.key], a[at.binding], a[at.relayed])
  if b[3] == '' then return {b[1], 0} end
  return {b[1], 0, b[2], attemptView(b[3])}
end)
