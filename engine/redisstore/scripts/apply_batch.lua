-- ApplyBatch: the UDP side's transitions of one read batch after one
-- cleanup (of the pools they read), in order. ARGV[3] packs every op
-- (struct format, big-endian, strings after a 2-byte length): 'p', handle
-- (36), presence key (16), seq, public, local, and the listing's ID or ''
-- (the caller's cache of ph); or 'b', handle (36), key (16), role (1),
-- binding; or 'r', a 'b' followed by a relayed address; or 'o' (an outcome
-- report), handle (36), key (16), role (1), path (a byte, 1-3), milliseconds
-- (4 bytes). One argument parsed here costs less than six per op, and lets
-- the caller reuse one buffer per batch.
--
-- Answers {presence, binds}. presence packs the presence ops' answers in
-- order: outcome and pool (a byte each) and, when accepted, the listing ID
-- (36), the number of pending offers (a byte) and their handles (36 each).
-- binds holds the bind and outcome ops' answers in order: a bind followed,
-- once both endpoints are bound (and the attempt is not relay-only), by the
-- introduction consumed now or read back, then, once both relayed
-- addresses are known, the relay introduction likewise: {outcome, pool,
-- replay, ready, first, attempt view, introduction, relay ready, relay
-- first, relay introduction}; an outcome report {outcome, pool[,
-- duplicate, tenant]}.
local function batchBind(handle, key, role, binding, relayed)
  local b = bindAttempt(handle, role, key, binding, relayed)
  if b[3] == '' then return {b[1], 0} end
  local aid, ready, first, intro = b[3], 0, 0, {}
  local f = call('HMGET', P .. 'a:' .. aid, 'host', 'peer', 'consumed', 'ronly')
  if f[1] ~= '' and f[2] ~= '' and f[4] ~= '1' then
    ready = 1
    if f[3] ~= '1' then
      consume(aid)
      first = 1
    end
    intro = introduction(aid)
  end
  local rready, rfirst, rintro = RELAY.introduce(aid)
  return {b[1], 0, b[2], ready, first, attemptView(aid), intro, rready, rfirst, rintro}
end

redis.register_function('rdv_apply_batch', function(keys, a)
  begin(keys, a, true)
  local s, pos = a[3], 1
  local pres, binds = {}, {}
  while pos <= #s do
    if string.byte(s, pos) == 112 then -- 'p'
      local handle, key, seq, pub, loc, lid
      handle, key, seq, pub, loc, lid, pos = struct.unpack('>c36c16Hc0Hc0Hc0Hc0', s, pos + 1)
      local code, pool, id, pending = bindPresence(handle, key, seq, pub, loc, lid)
      if code == OK then
        pres[#pres + 1] = struct.pack('>BBc36B', OK, 0, id, #pending)
        for _, h in ipairs(pending) do pres[#pres + 1] = h end
      else
        pres[#pres + 1] = struct.pack('>BB', code, pool)
      end
    elseif string.byte(s, pos) == 114 then -- 'r'
      local handle, key, role, binding, relayed
      handle, key, role, binding, relayed, pos = struct.unpack('>c36c16c1Hc0Hc0', s, pos + 1)
      binds[#binds + 1] = batchBind(handle, key, role, binding, relayed)
    elseif string.byte(s, pos) == 111 then -- 'o'
      local handle, key, role, path, ms
      handle, key, role, path, ms, pos = struct.unpack('>c36c16c1BI4', s, pos + 1)
      binds[#binds + 1] = RELAY.report(handle, key, role, path, ms)
    else
      local handle, key, role, binding
      handle, key, role, binding, pos = struct.unpack('>c36c16c1Hc0', s, pos + 1)
      binds[#binds + 1] = batchBind(handle, key, role, binding)
    end
  end
  return {table.concat(pres), binds}
end)
