-- RevokePrincipal and RevokeTenantPrincipal. ARGV[3..]: tenant ('' for a
-- global revocation), subject, ttl in ticks. Answers {outcome, pool, removed}.
redis.register_function('rdv_revoke_principal', function(keys, a)
  begin(keys, a)
  return revoke(a[3], a[4], tonumber(a[5]))
end)
