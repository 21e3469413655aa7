-- Views: what a transition answers about a listing or an attempt (the Go
-- side decodes them in codec.go).

-- listingView: id, lease, presence, tenant, owner, spec, doc, players,
-- version, lease deadline, ttl, fresh, public, local, the instance the
-- host's presence last reached, attributes ('' when none).
local function listingView(id)
  local f = call('HMGET', P .. 'l:' .. id, 'lease', 'pres', 'tenant', 'owner', 'spec', 'doc', 'players', 'ver', 'dl',
    'prf', 'pi', 'at')
  local value = presenceValue(presenceRecord(f[10]))
  local pub, loc = presenceEndpoints(value)
  local fresh = 0
  if value then fresh = 1 end
  return {id, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], tonumber(f[9]) - NOW, fresh, pub, loc,
    presenceInstance(value, f[11]), f[12] or ''}
end

-- attemptView: id, handle, listing, tenant, client, deadline, ttl, host
-- presence, host presence public, host binding, client binding, consumed,
-- the instances the host's presence and each side's bind reached, relay-only,
-- host relayed, client relayed, relay introduction consumed.
local function attemptView(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'listing', 'tenant', 'client', 'dl', 'host', 'peer', 'consumed',
    'hosti', 'peeri', 'ronly', 'hrel', 'crel', 'relayed')
  local l = call('HMGET', P .. 'l:' .. f[2], 'pres', 'prf', 'pi')
  local value = presenceValue(presenceRecord(l[2]))
  local pub = presenceEndpoints(value)
  return {aid, f[1], f[2], f[3], f[4], f[5], tonumber(f[5]) - NOW, l[1] or '', pub, f[6], f[7], f[8],
    presenceInstance(value, l[3]), f[9] or '', f[10] or '', f[11] or '', f[12] or '', f[13] or '', f[14] or ''}
end

local function introduction(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'host', 'peer')
  return {aid, f[1], f[2], f[3]}
end
