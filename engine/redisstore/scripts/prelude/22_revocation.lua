-- Revocations as a read sees them: members of 'vexp' ('g\0<subject>',
-- 't\0<tenant>\0<subject>') scored by deadline. A read runs no cleanup, so
-- a revocation past its deadline counts as absent.

-- liveRevocation reports whether subject has a live global revocation or
-- (tenant not '') one confined to tenant.
local function liveRevocation(tenant, subject)
  local g = call('ZSCORE', P .. 'vexp', 'g\0' .. subject)
  if g and tonumber(g) > NOW then return true end
  if tenant == '' then return false end
  local t = call('ZSCORE', P .. 'vexp', 't\0' .. tenant .. '\0' .. subject)
  return t ~= false and tonumber(t) > NOW
end
