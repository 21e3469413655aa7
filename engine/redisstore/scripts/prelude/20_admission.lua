-- Admission and quotas: the per-tenant counts (t:<tenant>) and the checks
-- a transition creating new work makes before anything is written.

local function tenantAdd(tenant, field, d)
  local key = P .. 't:' .. tenant
  if call('HINCRBY', key, field, d) == 0 then call('HDEL', key, field) end
end

-- tenantCount reads one of a tenant's counts: l(istings), a(ttempts),
-- i(dempotency records).
local function tenantCount(tenant, field)
  return tonumber(call('HGET', P .. 't:' .. tenant, field) or '0')
end

-- tenantQuota answers the quota a new record of a tenant would exceed: its
-- quota of the kind being created (field, limit, pool), else its share of
-- the idempotency pool, else nil.
local function tenantQuota(tenant, field, limit, pool)
  if tenantCount(tenant, field) >= limit then return pool end
  if tenantCount(tenant, 'i') >= LIM.TENANT_IQ then return Q_TENANT_IDEM end
  return nil
end

-- admit is the check for new work: unavailable, draining, revoked (globally
-- or in the tenant).
local function admit(tenant, subject)
  if META.unavail then return UNAVAILABLE end
  if META.draining then return DRAINING end
  if call('ZSCORE', P .. 'vexp', 'g\0' .. subject) or call('ZSCORE', P .. 'vexp', 't\0' .. tenant .. '\0' .. subject) then
    return REVOKED
  end
  return OK
end
