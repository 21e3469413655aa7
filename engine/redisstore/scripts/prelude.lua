-- Shared helpers of every Rendezvous transition (concatenated before the
-- transition files into the one library "rendezvous" at load time).
--
-- Every function is called with KEYS[1] = the deployment's key prefix
-- (hash-tagged, so all keys share one slot), ARGV[1] = "now" in ticks, or ""
-- for the server's TIME in microseconds, optionally followed by the caller's
-- fencing token '@<instance id>:<epoch>' (checkFence), and ARGV[2] = the
-- limits (ticks and counts, see limitsArg in Go). Transition arguments start
-- at ARGV[3].
--
-- Numbers handed to redis.call are formatted with I(): Lua would otherwise
-- print them with 14 significant digits and lose precision. They are
-- integers below 2^53, so '%d' (a C long) prints them exactly, at a fraction
-- of the cost of '%.0f'.

local P, NOW = '', 0
local LIM = {}
local LEASE_TTL, PRES_TTL, ATT_TTL, REPLAY_TTL, IDEM_TTL, DRAIN = 1, 2, 3, 4, 5, 6
local MAX_L, MAX_P, MAX_A, MAX_R, MAX_V, MAX_I, OWNER_Q, TENANT_AQ = 7, 8, 9, 10, 11, 12, 13, 14
local SUBJECT_AQ, TENANT_LQ, TENANT_IQ = 15, 16, 17

-- engine.Outcome and engine.Pool values.
local OK, NOT_FOUND, EXPIRED, REVOKED, CONFLICT, CAPACITY, DRAINING, REPLAY_REJECTED, UNAVAILABLE = 0, 1, 2, 3, 4, 5, 6, 7, 8
local P_LISTINGS, P_PRESENCE, P_ATTEMPTS, P_REPLAY, P_REVOCATIONS, P_IDEM = 1, 2, 3, 4, 5, 6
local Q_OWNER, Q_TENANT_ATTEMPTS, Q_SUBJECT_ATTEMPTS, Q_TENANT_LISTINGS, Q_TENANT_IDEM = 7, 8, 9, 10, 11
-- Answers that are not outcomes: the Go side regenerates IDs (a collision),
-- or reports current_players above the listing's max_players.
local RETRY, BAD_PLAYERS = -1, -2

local function I(n) return string.format('%d', n) end
-- sub and byte are string.sub and string.byte, which setup fetches: the
-- library's code cannot read the global 'string' while it loads, and a
-- local is the cheapest access in the loops over a batch's refreshes.
local sub, byte
local function call(...) return redis.call(...) end

-- RELAY holds the relay fallback's helpers (prelude_relay.lua, loaded after
-- this file), so the helpers here can call them. END_* are engine.AttemptEnd:
-- why an attempt record went (its tombstone says).
local RELAY = {}
local END_EXPIRED, END_LISTING_REMOVED, END_LEASE_EXPIRED, END_REVOKED, END_DRAINED = 1, 2, 3, 4, 5

-- splitFence splits ARGV[1], "now" optionally followed by '@', the calling
-- instance's ID, ':' and its fencing epoch (instance_registry.lua).
local function splitFence(a)
  local at = string.find(a, '@', 1, true)
  if not at then return a, '', '' end
  local colon = string.find(a, ':', at, true)
  return string.sub(a, 1, at - 1), string.sub(a, at + 1, colon - 1), string.sub(a, colon + 1)
end

-- checkFence refuses, before anything is written, a call from an instance
-- whose registration is not live at time n or carries another epoch: an
-- instance paused or cut off past its lease commits nothing on return.
-- token is the registration's copy in meta, '<epoch>:<lease deadline>'
-- (instance_registry.lua keeps it), read by setup with the deployment's
-- flags, so the check costs no call of its own.
local function checkFence(id, epoch, token, n)
  if id == '' then return end
  local colon = token and string.find(token, ':', 1, true)
  if not colon or string.sub(token, 1, colon - 1) ~= epoch or tonumber(string.sub(token, colon + 1)) <= n then
    error({err = 'FENCED instance registration expired or superseded'})
  end
end

-- META is the deployment's state flags, read once per call by setup.
local META = {}

-- INST is the calling instance's ID (Store.InstanceID), which the
-- functions that accept presence refreshes and attempt binds set from
-- their arguments: bindPresence and bindAttempt record it, so a pushed
-- datagram can leave from the instance the peer's NAT mapping points at.
local INST = ''

-- setup reads the call's context: prefix, limits (parsed again only when
-- they change), the flags and the time, clamped never to run backwards
-- (and the clamp moved forward when write is set).
local LIM_SRC = nil
-- FENCE_ID is the calling instance's ID when the call is fenced, else ''.
local FENCE_ID = ''
local function setup(keys, args, write)
  P, sub, byte = keys[1], string.sub, string.byte
  if args[2] ~= LIM_SRC then
    LIM = {}
    for w in string.gmatch(args[2], '%S+') do LIM[#LIM + 1] = tonumber(w) end
    LIM_SRC = args[2]
  end
  local nowArg, fid, fepoch = splitFence(args[1])
  local m = call('HMGET', P .. 'meta', 'clock', 'unavail', 'draining', 'drain_dl', 'f:' .. fid)
  META = {unavail = m[2] == '1', draining = m[3] == '1', drain_dl = tonumber(m[4] or '0')}
  local n
  if nowArg ~= '' then
    n = tonumber(nowArg)
  else
    local t = call('TIME')
    n = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  checkFence(fid, fepoch, m[5], n)
  FENCE_ID = fid
  local last = tonumber(m[1] or '0')
  if n < last then
    n = last -- never run backwards (a failover to a replica whose clock lags)
  elseif n > last and write then
    call('HSET', P .. 'meta', 'clock', I(n))
  end
  NOW = n
end

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
  if tenantCount(tenant, field) >= LIM[limit] then return pool end
  if tenantCount(tenant, 'i') >= LIM[TENANT_IQ] then return Q_TENANT_IDEM end
  return nil
end

local function unavailable() return META.unavail end

-- A listing's presence record is one field of the hash 'pr', so a batch of
-- refreshes reads all of its records with one HMGET and writes them with
-- one HSET. The field is the listing's ID and the presence key's
-- fingerprint, 16 bytes each, binary (the listing's 'prf' holds it): a
-- refresh with a wrong key finds no record. A fresh presence's value is
-- what the calling instance sent: the last accepted sequence (its number
-- of digits, two digits, then the digits: string order is number order),
-- the reference of the call that accepted it (8 bytes), the public
-- endpoint's length (a byte) and the public and local endpoints (address
-- and port, binary: 6 or 18 bytes, the local one absent when there is
-- none). While the listing has pending offers the record is 'p' and that
-- value; idle, it is 'i' and the sequence. So the batch's refresh of a
-- fresh presence without pending offers is one comparison of its
-- sequence with the record: the digits decide, an equal sequence is a
-- prefix and so not greater, and a letter sorts after every digit, so the
-- other states are never passed. The refresh's value is then written as
-- it came: Lua makes no string, and every string it makes costs by its
-- length.
--
-- A call reference names the call's entry: the key 'c:<reference>' holds
-- the instance the call came from (a key of its own, so finding it costs
-- the same however many calls are live), the set 'cexp' its deadline,
-- which is the presence deadline of every record the call wrote. Entries go when due
-- (after the presences they end); a fresh record whose entry is gone has
-- expired. When a presence ends, the listing's 'pi' keeps the instance its
-- last refresh reached. The hash 'pn' holds, per listing with pending
-- offers (attempts whose host endpoint is unbound), the handles of the
-- four oldest concatenated (ZRANGE of lp:<id>, 0 to 3, kept by pendingSync
-- wherever lp changes, with the record's state).
local MARK_PENDING, MARK_IDLE = 112, 105 -- 'p', 'i'
local REF_LEN = 8

-- presenceValue answers a fresh record's value and whether its listing
-- has pending offers; nil when the record is idle or absent.
local function presenceValue(rec)
  if not rec then return nil end
  local b = byte(rec, 1)
  if b == MARK_IDLE then return nil end
  if b == MARK_PENDING then return sub(rec, 2), true end
  return rec, false
end

-- unmarked answers a record without its mark: what begins with its last
-- accepted sequence, so a sequence is greater than the last exactly when
-- it is greater than this.
local function unmarked(rec)
  if byte(rec, 1) > 57 then return sub(rec, 2) end -- after '9': a mark
  return rec
end

-- refAt is where a value's call reference starts, after the sequence.
local function refAt(value) return 3 + tonumber(sub(value, 1, 2)) end

-- idOf is the listing ID (text) of a record's field.
local function idOf(field)
  return string.format('%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x', string.byte(field, 1, 16))
end

-- presenceField is listing id's record field (false when the listing is
-- gone).
local function presenceField(id) return call('HGET', P .. 'l:' .. id, 'prf') end

local function presenceRecord(field)
  if not field then return false end
  return call('HGET', P .. 'pr', field)
end

-- presenceInstance answers the instance a presence's last refresh reached
-- ('' before the first): its call's while fresh (value), else the
-- listing's 'pi' (idle).
local function presenceInstance(value, idle)
  if not value then return idle or '' end
  local at = refAt(value)
  return call('GET', P .. 'c:' .. sub(value, at, at + REF_LEN - 1)) or ''
end

-- presenceEndpoints answers a fresh record's value's public and local
-- endpoints, binary ('' when the presence is not fresh).
local function presenceEndpoints(value)
  if not value then return '', '' end
  local at = refAt(value) + REF_LEN
  local n = byte(value, at)
  return sub(value, at + 1, at + n), sub(value, at + n + 1)
end

local PENDING_SYNCED = {} -- record fields whose pn changed since presenceLoad

local function pendingSync(id)
  local h = call('ZRANGE', P .. 'lp:' .. id, '0', '3')
  local pending = #h > 0
  if pending then
    call('HSET', P .. 'pn', id, table.concat(h))
  else
    call('HDEL', P .. 'pn', id)
  end
  local field = presenceField(id)
  if not field then return end
  PENDING_SYNCED[field] = true
  local value, had = presenceValue(presenceRecord(field))
  if value and had ~= pending then
    if pending then value = 'p' .. value end
    call('HSET', P .. 'pr', field, value)
  end
end

-- expirePresence ends a listing's presence (its last sequence stays, and
-- the instance its last refresh reached).
local function expirePresence(id)
  local f = call('HMGET', P .. 'l:' .. id, 'tenant', 'proto', 'region', 'public', 'prf')
  call('ZREM', P .. 'pexp', id)
  if f[4] == '1' then
    call('ZREM', P .. 'b:' .. f[1] .. '\0' .. f[2] .. '\0', id)
    call('ZREM', P .. 'b:' .. f[1] .. '\0' .. f[2] .. '\0' .. f[3], id)
  end
  local value = presenceValue(presenceRecord(f[5]))
  if value then
    call('HSET', P .. 'l:' .. id, 'pi', presenceInstance(value))
    call('HSET', P .. 'pr', f[5], 'i' .. sub(value, 1, refAt(value) - 1))
  end
end

-- presenceDue handles a pexp entry found due: a refresh moves only the
-- record's call reference, so an entry found early is moved to the
-- deadline of the call the record names (once per presence lifetime, not
-- per refresh), else the presence ends.
local function presenceDue(id)
  local value = presenceValue(presenceRecord(presenceField(id)))
  if value then
    local at = refAt(value)
    local dl = call('ZSCORE', P .. 'cexp', sub(value, at, at + REF_LEN - 1))
    if dl and tonumber(dl) > NOW then
      call('ZADD', P .. 'pexp', dl, id)
      return
    end
  end
  expirePresence(id)
end

-- removeCall drops a call's entry once due: cleanup has ended every
-- presence whose record names it.
local function removeCall(ref)
  call('DEL', P .. 'c:' .. ref)
  call('ZREM', P .. 'cexp', ref)
end

-- removeAttempt removes an attempt, leaving its tombstone (ended by cause,
-- END_EXPIRED when nil).
local function removeAttempt(aid, cause)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'listing', 'tenant', 'client', 'consumed', 'relayed')
  if not f[1] then
    call('ZREM', P .. 'aexp', aid)
    return
  end
  RELAY.tombstone(aid, cause or END_EXPIRED)
  call('ZREM', P .. 'la:' .. f[2], aid)
  if call('ZREM', P .. 'lp:' .. f[2], f[1]) == 1 then pendingSync(f[2]) end
  call('SREM', P .. 'ca:' .. f[4], aid)
  call('ZREM', P .. 'aexp', aid)
  call('HDEL', P .. 'ah', f[1])
  tenantAdd(f[3], 'a', -1)
  if f[5] ~= '1' and f[6] ~= '1' then call('HINCRBY', P .. 'meta', 'inflight', -1) end
  call('DEL', P .. 'a:' .. aid)
end

-- removeListing removes a listing, its presence and every linked attempt
-- (ended by cause, END_LISTING_REMOVED when nil).
local function removeListing(id, cause)
  local f = call('HMGET', P .. 'l:' .. id, 'pres', 'owner', 'tenant', 'prf')
  if not f[1] then
    call('ZREM', P .. 'lexp', id)
    return
  end
  for _, aid in ipairs(call('ZRANGE', P .. 'la:' .. id, 0, -1)) do removeAttempt(aid, cause or END_LISTING_REMOVED) end
  if call('ZSCORE', P .. 'pexp', id) then expirePresence(id) end
  call('ZREM', P .. 'lexp', id)
  call('HDEL', P .. 'ph', f[1])
  call('SREM', P .. 'ol:' .. f[2], id)
  tenantAdd(f[3], 'l', -1)
  call('DEL', P .. 'l:' .. id, P .. 'la:' .. id, P .. 'lp:' .. id)
  if f[4] then call('HDEL', P .. 'pr', f[4]) end
end

-- An idempotency record's value: result ID (36), '|', request fingerprint
-- (64 hex), '|', tenant.
local function idemParse(v) return string.sub(v, 1, 36), string.sub(v, 38, 101), string.sub(v, 103) end

local function removeIdem(ik)
  local v = call('HGET', P .. 'idem', ik)
  if v then
    local _, _, tenant = idemParse(v)
    tenantAdd(tenant, 'i', -1)
  end
  call('HDEL', P .. 'idem', ik)
  call('ZREM', P .. 'iexp', ik)
end

local function addIdem(ik, res, fp, tenant)
  call('HSET', P .. 'idem', ik, res .. '|' .. fp .. '|' .. tenant)
  call('ZADD', P .. 'iexp', I(NOW + LIM[IDEM_TTL]), ik)
  tenantAdd(tenant, 'i', 1)
end

-- drainDue removes every member of deadline set z due at or before upto,
-- in bounded chunks, earliest first; remove must drop the member from z.
local function drainDue(z, upto, remove)
  while true do
    local ids = call('ZRANGEBYSCORE', P .. z, '-inf', upto, 'LIMIT', '0', '256')
    if #ids == 0 then return end
    for _, id in ipairs(ids) do remove(id) end
  end
end

-- clearActive erases listings, presence, attempts, idempotency and replay
-- records (revocations stay): the end of drain and MarkUnavailable.
local function clearActive()
  drainDue('lexp', '+inf', function(id) removeListing(id, END_DRAINED) end)
  drainDue('iexp', '+inf', removeIdem)
  drainDue('cexp', '+inf', removeCall)
  call('DEL', P .. 'rexp')
end

-- cleanup runs at the start of every transition: everything whose deadline
-- is <= now goes, each record at O(log n) (the deadline sets are ordered);
-- nothing is scanned. presenceOnly leaves out the pools no presence
-- refresh or attempt bind reads or counts (revocations, replay tickets,
-- idempotency records): the next transition that does removes their due
-- records first, so no answer can tell.
local function cleanup(presenceOnly)
  if META.draining and NOW >= META.drain_dl then clearActive() end
  local now = I(NOW)
  if not presenceOnly then
    call('ZREMRANGEBYSCORE', P .. 'vexp', '-inf', now)
    call('ZREMRANGEBYSCORE', P .. 'rexp', '-inf', now)
    drainDue('iexp', now, removeIdem)
    drainDue('xexp', now, RELAY.removeTomb)
  end
  drainDue('pexp', now, presenceDue)
  drainDue('cexp', now, removeCall)
  drainDue('aexp', now, removeAttempt)
  drainDue('lexp', now, function(id) removeListing(id, END_LEASE_EXPIRED) end)
end

-- followPrimary voids every attempt made under an earlier primary, at the
-- first writing call on a promoted one. A promoted replica has a new
-- replication ID and keeps the one it replicated from as master_replid2; it
-- may lack writes the old primary acknowledged, a consumed introduction
-- among them, so an attempt it inherited could be introduced a second time.
-- Removing them all in the call that first sees the new ID (and counting
-- the promotions in meta's gen) makes any later use of such an attempt
-- NotFound: the client creates a new one. A new ID without a second one is
-- a primary restarted from its own persistence (or a new server): what it
-- loaded is what it acknowledged (appendfsync always), so nothing is voided.
local function followPrimary()
  local info = call('INFO', 'replication')
  local id = string.match(info, 'master_replid:(%x+)')
  if not id or call('HGET', P .. 'meta', 'replid') == id then return end
  if string.match(info, 'master_replid2:(%x+)') ~= string.rep('0', 40) then
    drainDue('aexp', '+inf', removeAttempt)
    call('HINCRBY', P .. 'meta', 'gen', 1)
  end
  call('HSET', P .. 'meta', 'replid', id)
end

-- begin starts a writing transition. skipFollow leaves out followPrimary
-- for a call that can neither read nor change an attempt (a batch of
-- presence refreshes only): the first call that can still runs it first.
local function begin(keys, args, presenceOnly, skipFollow)
  setup(keys, args, true)
  if not skipFollow then followPrimary() end
  cleanup(presenceOnly)
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

-- listingView: id, lease, presence, tenant, owner, spec, doc, players,
-- version, lease deadline, ttl, fresh, public, local, the instance the
-- host's presence last reached.
local function listingView(id)
  local f = call('HMGET', P .. 'l:' .. id, 'lease', 'pres', 'tenant', 'owner', 'spec', 'doc', 'players', 'ver', 'dl',
    'prf', 'pi')
  local value = presenceValue(presenceRecord(f[10]))
  local pub, loc = presenceEndpoints(value)
  local fresh = 0
  if value then fresh = 1 end
  return {id, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], tonumber(f[9]) - NOW, fresh, pub, loc,
    presenceInstance(value, f[11])}
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

-- idemReplay answers a creation whose idempotency key ik was used before:
-- nil if it was not, else Conflict (another request), the earlier result's
-- view (a replay) or Expired (what it created is gone). kind is the
-- record's key prefix ('l:' or 'a:'), view renders it.
local function idemReplay(ik, fp, kind, view)
  local prev = call('HGET', P .. 'idem', ik)
  if not prev then return nil end
  local res, pfp = idemParse(prev)
  if pfp ~= fp then return {CONFLICT, 0} end
  if call('EXISTS', P .. kind .. res) == 1 then return {OK, 0, 1, view(res)} end
  return {EXPIRED, 0}
end

local function introduction(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'host', 'peer')
  return {aid, f[1], f[2], f[3]}
end

-- hmgetAll reads fields[from..to] of hash key: their values in that order
-- (false when absent), in chunks within Lua's limit on unpacked arguments.
local function hmgetAll(key, fields, from, to)
  if to - from < 1024 then return call('HMGET', key, unpack(fields, from, to)) end
  local out = {}
  for i = from, to, 1024 do
    local v = call('HMGET', key, unpack(fields, i, math.min(i + 1023, to)))
    for k = 1, #v do out[#out + 1] = v[k] end
  end
  return out
end

-- The refreshes of one call are arguments of it (REQ): refresh k's record
-- field (or presence handle and key fingerprint), sequence and value (as
-- a fresh record without pending offers holds it) are REQ[RB + k],
-- REQ[RB + RN + k] and REQ[RB + 2 RN + k], so the fields go to HMGET as
-- they came. presenceLoad reads every record
-- they name at once; presenceRefresh decides each in order against those
-- (and what earlier refreshes of the call wrote, in WROTE, and binds
-- before it changed, in PENDING_SYNCED); presenceFlush writes the changed
-- records at once.
local REQ, RB, RN = {}, 0, 0
local SEQ_ZERO = '010' -- sequence 0, as a record holds it
local NO_LISTING = '-' -- no record has this field: ph does not know the handle, or the key is wrong
-- WRITES[1..NW] are the field-value pairs presenceFlush writes. The table
-- lives as long as the library and is overwritten from the start, so a
-- batch does not grow a new one entry by entry; what lies past NW is stale.
local RECS, WROTE, WRITES, NW = {}, {}, {}, 0
-- REF is the call's reference, REF_DL its deadline (ticks, as text) and
-- REF_SET whether its entry is written.
local REF, REF_DL, REF_SET = '', '', false

-- refTaken reports whether call reference ref names a live entry (of an
-- earlier call, maybe another instance's): the caller draws another
-- before anything is written. It runs before begin, with keys alone.
local function refTaken(keys, ref)
  return redis.call('EXISTS', keys[1] .. 'c:' .. ref) == 1
end

-- presenceLoad takes n refreshes from req after base, sent by the call
-- ref. byHandle is '' when every refresh names its record's field, else
-- one character per refresh, 'h' where it names the presence handle (36)
-- and key fingerprint (16) instead (the caller does not know the listing
-- yet): those are looked up in ph and replaced by the field, or by
-- NO_LISTING when the key is not the listing's.
local function presenceLoad(req, base, n, byHandle, ref)
  REQ, RB, RN = req, base, n
  WROTE, NW, PENDING_SYNCED = {}, 0, {}
  REF, REF_DL, REF_SET = ref, I(NOW + LIM[PRES_TTL]), false
  if n == 0 then return end
  if byHandle ~= '' then
    local handles, at = {}, {}
    for k = 1, n do
      if string.byte(byHandle, k) == 104 then -- 'h'
        handles[#handles + 1] = sub(req[base + k], 1, 36)
        at[#at + 1] = base + k
      end
    end
    if #handles > 0 then
      local ids = hmgetAll(P .. 'ph', handles, 1, #handles)
      for j, i in ipairs(at) do
        local field = ids[j] and presenceField(ids[j])
        if field and sub(field, 17) == sub(req[i], 37) then req[i] = field else req[i] = NO_LISTING end
      end
    end
  end
  RECS = hmgetAll(P .. 'pr', req, base + 1, base + n)
end

-- presenceWrite records refresh k's new record rec, for presenceFlush and
-- for a later refresh of the same listing in the call.
local function presenceWrite(field, rec)
  WROTE[field] = rec
  WRITES[NW + 1], WRITES[NW + 2] = field, rec
  NW = NW + 2
end

-- presenceRefresh is BindHostPresence of refresh k after cleanup and
-- presenceLoad: outcome, pool and, when accepted, the listing ID and the
-- handles of up to four attempts of the listing whose host endpoint is
-- unbound, oldest first, concatenated (false when none). A refresh of a
-- fresh presence writes its record only: its deadline is its call's, its
-- entry in pexp stays, and cleanup re-times that entry when it comes due
-- (presenceDue).
local function presenceRefresh(k)
  if unavailable() then return UNAVAILABLE, 0 end
  local field, v = REQ[RB + k], REQ[RB + 2 * RN + k]
  local rec = WROTE[field] or RECS[k]
  if not rec then return NOT_FOUND, 0 end
  if not (REQ[RB + RN + k] > unmarked(rec)) then return CONFLICT, 0 end
  local id = idOf(field)
  local fresh, pend = presenceValue(rec)
  if not fresh then -- the presence is not fresh: it becomes so
    if call('ZCARD', P .. 'pexp') >= LIM[MAX_P] then return CAPACITY, P_PRESENCE end
    call('ZADD', P .. 'pexp', REF_DL, id)
    local g = call('HMGET', P .. 'l:' .. id, 'tenant', 'proto', 'region', 'public')
    if g[4] == '1' then
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0', 0, id)
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0' .. g[3], 0, id)
    end
  end
  -- The pending offers: a fresh record says whether there are any, unless
  -- an op earlier in the call changed them (pendingSync; a record
  -- refreshed before it holds the old state).
  if not fresh or pend or PENDING_SYNCED[field] then pend = call('HGET', P .. 'pn', id) end
  if pend then v = 'p' .. v end
  presenceWrite(field, v)
  return OK, 0, id, pend
end

-- presenceFlush writes the records refreshed since the last flush (a
-- record refreshed twice is written twice in one HSET: the later wins)
-- and, with the first, the call's entry they name.
local function presenceFlush()
  if NW == 0 then return end
  if not REF_SET then
    REF_SET = true
    call('SET', P .. 'c:' .. REF, INST)
    call('ZADD', P .. 'cexp', REF_DL, REF)
  end
  for i = 1, NW, 1024 do call('HSET', P .. 'pr', unpack(WRITES, i, math.min(i + 1023, NW))) end
  NW = 0
end

-- bindAttempt binds one role's endpoint and, when relayed is not '', its
-- relayed address (recorded by the same rule, apart from the endpoint):
-- {outcome, replay, attempt id or ''}.
local function bindAttempt(handle, role, key, binding, relayed)
  if unavailable() then return {UNAVAILABLE, 0, ''} end
  local aid = call('HGET', P .. 'ah', handle)
  if not aid then return {NOT_FOUND, 0, ''} end
  local kf, bf, rf = 'ckey', 'peer', 'crel'
  if role == 'h' then kf, bf, rf = 'hkey', 'host', 'hrel' end
  local f = call('HMGET', P .. 'a:' .. aid, kf, bf, 'listing', rf)
  if f[1] ~= key then return {NOT_FOUND, 0, ''} end
  relayed = relayed or ''
  if f[2] ~= '' then
    if f[2] ~= binding then return {REPLAY_REJECTED, 0, ''} end
    if relayed == '' or f[4] == relayed then return {OK, 1, aid} end
    if f[4] and f[4] ~= '' then return {REPLAY_REJECTED, 0, ''} end
    call('HSET', P .. 'a:' .. aid, rf, relayed) -- the endpoint repeats; the relayed address is new
    return {OK, 0, aid}
  end
  call('HSET', P .. 'a:' .. aid, bf, binding, bf .. 'i', INST, rf, relayed)
  if role == 'h' and call('ZREM', P .. 'lp:' .. f[3], handle) == 1 then pendingSync(f[3]) end
  return {OK, 0, aid}
end

-- consume marks the introduction consumed. An attempt is in flight until
-- either introduction is consumed.
local function consume(aid)
  if call('HGET', P .. 'a:' .. aid, 'relayed') ~= '1' then call('HINCRBY', P .. 'meta', 'inflight', -1) end
  call('HSET', P .. 'a:' .. aid, 'consumed', '1')
end

-- revoke inserts (or re-times) revocation member rev and removes the
-- subject's listings and attempts (in tenant, or everywhere when tenant is
-- ''): O(what the subject has).
local function revoke(tenant, subject, ttl)
  if unavailable() then return {UNAVAILABLE, 0, 0} end
  local rev = 'g\0' .. subject
  if tenant ~= '' then rev = 't\0' .. tenant .. '\0' .. subject end
  if not call('ZSCORE', P .. 'vexp', rev) and call('ZCARD', P .. 'vexp') >= LIM[MAX_V] then
    return {CAPACITY, P_REVOCATIONS, 0}
  end
  call('ZADD', P .. 'vexp', I(NOW + ttl), rev)
  local ls, as = {}, {}
  for _, id in ipairs(call('SMEMBERS', P .. 'ol:' .. subject)) do
    if tenant == '' or call('HGET', P .. 'l:' .. id, 'tenant') == tenant then ls[#ls + 1] = id end
  end
  for _, aid in ipairs(call('SMEMBERS', P .. 'ca:' .. subject)) do
    if tenant == '' or call('HGET', P .. 'a:' .. aid, 'tenant') == tenant then as[#as + 1] = aid end
  end
  for _, id in ipairs(ls) do removeListing(id, END_REVOKED) end
  for _, aid in ipairs(as) do removeAttempt(aid, END_REVOKED) end
  return {OK, 0, #ls + #as}
end
