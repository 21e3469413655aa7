-- The instance registry. Every server instance of a deployment registers
-- with its advertised mediator address and a lease; each registration gets
-- a new fencing epoch from one counter per deployment, kept at least at the
-- current time so that no epoch is handed out twice (not even after a
-- failover lost the counter). Every later call of that instance carries it
-- and setup checks it (checkFence).
-- Keys: nexp (sorted set: instance ID by lease deadline), n:<id> (hash:
-- epoch, addr, drain), nepoch (the epoch counter), and in meta the field
-- f:<id>, '<epoch>:<lease deadline>', which checkFence reads.

-- fenceToken keeps meta's copy of instance id's registration (or removes
-- it, with no epoch).
local function fenceToken(id, epoch, dl)
  if epoch then
    call('HSET', P .. 'meta', 'f:' .. id, epoch .. ':' .. dl)
  else
    call('HDEL', P .. 'meta', 'f:' .. id)
  end
end

local function instancesDue()
  for _, id in ipairs(call('ZRANGEBYSCORE', P .. 'nexp', '-inf', I(NOW))) do
    call('ZREM', P .. 'nexp', id)
    call('DEL', P .. 'n:' .. id)
    fenceToken(id)
  end
end

-- liveInstances: id, address, draining (0 or 1) and lease left (ticks) of
-- every live instance, so a caller can tell, until its next renewal, which
-- of them has since expired.
local function liveInstances()
  local out = {}
  local l = call('ZRANGE', P .. 'nexp', 0, -1, 'WITHSCORES')
  for i = 1, #l, 2 do
    local id = l[i]
    local f = call('HMGET', P .. 'n:' .. id, 'addr', 'drain')
    out[#out + 1] = id
    out[#out + 1] = f[1] or ''
    out[#out + 1] = tonumber(f[2] or '0')
    out[#out + 1] = tonumber(l[i + 1]) - NOW
  end
  return out
end

-- registered reports whether instance id holds a live lease under epoch.
local function registered(id, epoch)
  local dl = call('ZSCORE', P .. 'nexp', id)
  return dl and tonumber(dl) > NOW and call('HGET', P .. 'n:' .. id, 'epoch') == epoch
end

-- Register. Arguments (ARG.instance_register): instance ID, advertised
-- mediator address, lease (ticks), draining ('0' or '1'). Answers {the new
-- epoch, live instances...}.
redis.register_function('rdv_instance_register', function(keys, a)
  setup(keys, a, true)
  local at = ARG.instance_register
  local id = a[at.instance]
  instancesDue()
  -- At least the current time: a counter lost with a failover to a replica
  -- that had not received it still never hands out an epoch again.
  local n = call('INCR', P .. 'nepoch')
  if n <= NOW then
    n = NOW + 1
    call('SET', P .. 'nepoch', I(n))
  end
  local epoch = I(n)
  local dl = I(NOW + tonumber(a[at.lease]))
  call('HSET', P .. 'n:' .. id, 'epoch', epoch, 'addr', a[at.addr], 'drain', a[at.drain])
  call('ZADD', P .. 'nexp', dl, id)
  fenceToken(id, epoch, dl)
  local out = liveInstances()
  table.insert(out, 1, epoch)
  return out
end)

-- Renew. Arguments (ARG.instance_renew): instance ID, epoch, lease (ticks).
-- Answers {1, live instances...} when the lease was live under that epoch
-- and is extended, else {0} (expired or superseded: register again).
redis.register_function('rdv_instance_renew', function(keys, a)
  setup(keys, a, true)
  local at = ARG.instance_renew
  local id, epoch = a[at.instance], a[at.epoch]
  if not registered(id, epoch) then return {0} end
  local dl = I(NOW + tonumber(a[at.lease]))
  call('ZADD', P .. 'nexp', dl, id)
  fenceToken(id, epoch, dl)
  instancesDue()
  local out = liveInstances()
  table.insert(out, 1, 1)
  return out
end)

-- Drain marks a registration draining (ARG.instance: ID, epoch): it
-- keeps its lease but no listing is routed to it. Answers 1, or 0 when the
-- registration is not live under that epoch.
redis.register_function('rdv_instance_drain', function(keys, a)
  setup(keys, a, true)
  local id = a[ARG.instance.instance]
  if not registered(id, a[ARG.instance.epoch]) then return 0 end
  call('HSET', P .. 'n:' .. id, 'drain', '1')
  return 1
end)

-- Leave removes a registration (ARG.instance: ID, epoch) if it is still
-- that epoch's.
redis.register_function('rdv_instance_leave', function(keys, a)
  setup(keys, a, true)
  local id = a[ARG.instance.instance]
  if call('HGET', P .. 'n:' .. id, 'epoch') ~= a[ARG.instance.epoch] then return 0 end
  call('ZREM', P .. 'nexp', id)
  call('DEL', P .. 'n:' .. id)
  fenceToken(id)
  return 1
end)
