-- Revoked and RevokedInTenant: 1 if subject has a live global revocation,
-- or (tenant not '') one confined to tenant. Arguments (ARG.revoked):
-- tenant, subject. An instance that keeps the revocations in step with its
-- browse index (browse_revocations.go) answers from them instead.
redis.register_function{function_name = 'rdv_revoked', flags = {'no-writes'}, callback = function(keys, a)
  setup(keys, a, false)
  local at = ARG.revoked
  if liveRevocation(a[at.tenant], a[at.subject]) then return 1 end
  return 0
end}
