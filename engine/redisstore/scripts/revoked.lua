-- Revoked and RevokedInTenant: 1 if subject has a live global revocation,
-- or (tenant not '') one confined to tenant. A read: a revocation past its
-- deadline counts as absent. Arguments (ARG.revoked): tenant, subject.
redis.register_function{function_name = 'rdv_revoked', flags = {'no-writes'}, callback = function(keys, a)
  setup(keys, a, false)
  local at = ARG.revoked
  local tenant, subject = a[at.tenant], a[at.subject]
  local g = call('ZSCORE', P .. 'vexp', 'g\0' .. subject)
  if g and tonumber(g) > NOW then return 1 end
  if tenant == '' then return 0 end
  local t = call('ZSCORE', P .. 'vexp', 't\0' .. tenant .. '\0' .. subject)
  if t and tonumber(t) > NOW then return 1 end
  return 0
end}
