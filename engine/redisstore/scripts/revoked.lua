-- Revoked and RevokedInTenant: 1 if subject has a live global revocation,
-- or (tenant not '') one confined to tenant. A read: a revocation past its
-- deadline counts as absent. ARGV[3..]: tenant, subject.
redis.register_function{function_name = 'rdv_revoked', flags = {'no-writes'}, callback = function(keys, a)
  setup(keys, a, false)
  local g = call('ZSCORE', P .. 'vexp', 'g\0' .. a[4])
  if g and tonumber(g) > NOW then return 1 end
  if a[3] == '' then return 0 end
  local t = call('ZSCORE', P .. 'vexp', 't\0' .. a[3] .. '\0' .. a[4])
  if t and tonumber(t) > NOW then return 1 end
  return 0
end}
