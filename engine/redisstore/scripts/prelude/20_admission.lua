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

-- fairShare is engine.FairShare: whether a tenant holding held of a
-- pool's used records (ceiling max, the tenant's quota limit) may take one
-- more: below its quota, and, while other tenants hold records of the
-- pool, fewer than the pool has free.
local function fairShare(held, used, max, limit)
  return held < limit and (held == used or held < max - used)
end

-- tenantQuota answers the quota a new record of a tenant would exceed: its
-- share of the kind being created (field, limit, the pool's deadline set z
-- and ceiling max, quota q), else its share of the idempotency pool, else
-- nil.
local function tenantQuota(tenant, field, limit, q, z, max)
  if not fairShare(tenantCount(tenant, field), call('ZCARD', P .. z), max, limit) then return q end
  if not fairShare(tenantCount(tenant, 'i'), call('ZCARD', P .. 'iexp'), LIM.MAX_I, LIM.TENANT_IQ) then
    return Q_TENANT_IDEM
  end
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
