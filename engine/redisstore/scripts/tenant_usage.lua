-- TenantUsage after cleanup: a tenant's live listings, attempts and
-- idempotency records. Argument (ARG.tenant_usage): tenant.
redis.register_function('rdv_tenant_usage', function(keys, a)
  begin(keys, a)
  local f = call('HMGET', P .. 't:' .. a[ARG.tenant_usage.tenant], 'l', 'a', 'i')
  return {tonumber(f[1] or '0'), tonumber(f[2] or '0'), tonumber(f[3] or '0')}
end)
