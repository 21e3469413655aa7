-- BindAttemptEndpoint. ARGV[3..]: handle, role (h/c), key, binding,
-- relayed address ('' for none).
redis.register_function('rdv_bind_attempt', function(keys, a)
  begin(keys, a)
  local b = bindAttempt(a[3], a[4], a[5], a[6], a[7])
  if b[3] == '' then return {b[1], 0} end
  return {b[1], 0, b[2], attemptView(b[3])}
end)
