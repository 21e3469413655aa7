-- RevokePrincipal and RevokeTenantPrincipal. Arguments
-- (ARG.revoke_principal): tenant ('' for a global revocation), subject, ttl
-- in ticks. Answers {outcome, pool, removed}.
redis.register_function('rdv_revoke_principal', function(keys, a)
  begin(keys, a)
  local at = ARG.revoke_principal
  return revoke(a[at.tenant], a[at.subject], tonumber(a[at.ttl]))
end)
