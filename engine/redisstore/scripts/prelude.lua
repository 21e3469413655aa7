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
-- sub, find and byte are string.sub, string.find and string.byte, which
-- setup fetches: the library's code cannot read the global 'string' while
-- it loads, and a local is the cheapest access in the loops over a batch's
-- refreshes.
local sub, find, byte
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
  P, sub, find, byte = keys[1], string.sub, string.find, string.byte
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

-- A listing's presence record is one field of the hash 'pr' (field: the
-- listing ID), so a batch of refreshes reads all of its records with one
-- HMGET and writes them with one HSET: the last accepted sequence (16
-- digits, zero-padded: string order is number order), the presence key's
-- fingerprint (16 bytes), '1' when the listing has pending offers, else
-- '0', the instance the last accepted refresh reached (36; NO_INSTANCE
-- before the first) and, while the presence is fresh, its deadline (20
-- digits) and endpoints "public|local". The order serves the batch's
-- refresh of a listing without pending offers, where every string Lua makes
-- costs: the new sequence compares with the whole record (its digits decide,
-- and an equal sequence is a prefix, so not greater), the key argument (the
-- fingerprint and '0') is found at PR_KEY, and the call's instance and
-- deadline are adjacent, so the new record is four strings joined. The
-- hash 'pn' holds, per listing with pending offers (attempts whose host
-- endpoint is unbound), the handles of the four oldest concatenated (ZRANGE
-- of lp:<id>, 0 to 3, kept by pendingSync wherever lp changes, with the
-- record's flag).
local PR_KEY = 17 -- where the fingerprint starts, after the sequence
local PR_FLAG = 33 -- where the pending flag is, after the fingerprint
local PR_IDLE = 69 -- a record's length without deadline and endpoints
local HAS_PENDING = 49 -- '1' at PR_FLAG
local NO_INSTANCE = '000000000000000000000000000000000000'

-- presenceInstance answers the instance a record's last refresh reached,
-- '' before the first.
local function presenceInstance(rec)
  if not rec then return '' end
  local inst = string.sub(rec, PR_FLAG + 1, PR_IDLE)
  if inst == NO_INSTANCE then return '' end
  return inst
end

local function presenceRecord(id) return call('HGET', P .. 'pr', id) end

-- presenceEndpoints answers a record's public and local endpoints ('' when
-- the presence is not fresh).
local function presenceEndpoints(rec)
  if not rec or #rec <= PR_IDLE then return '', '' end
  local bar = string.find(rec, '|', PR_IDLE + 21, true)
  return string.sub(rec, PR_IDLE + 21, bar - 1), string.sub(rec, bar + 1)
end

local PENDING_SYNCED = {} -- listings whose pn changed since presenceLoad

local function pendingSync(id)
  PENDING_SYNCED[id] = true
  local h = call('ZRANGE', P .. 'lp:' .. id, 0, 3)
  local flag = '1'
  if #h == 0 then
    call('HDEL', P .. 'pn', id)
    flag = '0'
  else
    call('HSET', P .. 'pn', id, table.concat(h))
  end
  local rec = presenceRecord(id)
  if rec and string.sub(rec, PR_FLAG, PR_FLAG) ~= flag then
    call('HSET', P .. 'pr', id, string.sub(rec, 1, PR_FLAG - 1) .. flag .. string.sub(rec, PR_FLAG + 1))
  end
end

-- expirePresence ends a listing's presence (its last sequence stays).
local function expirePresence(id)
  local f = call('HMGET', P .. 'l:' .. id, 'tenant', 'proto', 'region', 'public')
  call('ZREM', P .. 'pexp', id)
  if f[4] == '1' then
    call('ZREM', P .. 'b:' .. f[1] .. '\0' .. f[2] .. '\0', id)
    call('ZREM', P .. 'b:' .. f[1] .. '\0' .. f[2] .. '\0' .. f[3], id)
  end
  local rec = presenceRecord(id)
  if rec then call('HSET', P .. 'pr', id, string.sub(rec, 1, PR_IDLE)) end
end

-- presenceDue handles a pexp entry found due: a refresh moves only the
-- record's deadline, so an entry found early is moved to that deadline
-- (once per presence lifetime, not per refresh), else the presence ends.
local function presenceDue(id)
  local rec = presenceRecord(id)
  if rec and #rec > PR_IDLE then
    local dl = string.sub(rec, PR_IDLE + 1, PR_IDLE + 20)
    if tonumber(dl) > NOW then
      call('ZADD', P .. 'pexp', dl, id)
      return
    end
  end
  expirePresence(id)
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
  local f = call('HMGET', P .. 'l:' .. id, 'pres', 'owner', 'tenant')
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
  call('HDEL', P .. 'pr', id)
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
    local ids = call('ZRANGEBYSCORE', P .. z, '-inf', upto, 'LIMIT', 0, 256)
    if #ids == 0 then return end
    for _, id in ipairs(ids) do remove(id) end
  end
end

-- clearActive erases listings, presence, attempts, idempotency and replay
-- records (revocations stay): the end of drain and MarkUnavailable.
local function clearActive()
  drainDue('lexp', '+inf', function(id) removeListing(id, END_DRAINED) end)
  drainDue('iexp', '+inf', removeIdem)
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
  local f = call('HMGET', P .. 'l:' .. id, 'lease', 'pres', 'tenant', 'owner', 'spec', 'doc', 'players', 'ver', 'dl')
  local rec = presenceRecord(id)
  local pub, loc = presenceEndpoints(rec)
  local fresh = 0
  if pub ~= '' then fresh = 1 end
  return {id, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], tonumber(f[9]) - NOW, fresh, pub, loc,
    presenceInstance(rec)}
end

-- attemptView: id, handle, listing, tenant, client, deadline, ttl, host
-- presence, host presence public, host binding, client binding, consumed,
-- the instances the host's presence and each side's bind reached, relay-only,
-- host relayed, client relayed, relay introduction consumed.
local function attemptView(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'handle', 'listing', 'tenant', 'client', 'dl', 'host', 'peer', 'consumed',
    'hosti', 'peeri', 'ronly', 'hrel', 'crel', 'relayed')
  local rec = presenceRecord(f[2])
  local pub = presenceEndpoints(rec)
  return {aid, f[1], f[2], f[3], f[4], f[5], tonumber(f[5]) - NOW, call('HGET', P .. 'l:' .. f[2], 'pres') or '', pub, f[6], f[7], f[8],
    presenceInstance(rec), f[9] or '', f[10] or '', f[11] or '', f[12] or '', f[13] or '', f[14] or ''}
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

-- The refreshes of one call are arguments of it (REQ): refresh k's
-- listing ID (or handle), key argument (the presence key's fingerprint and
-- '0'), sequence (16 digits) and endpoints "public|local" are REQ[RB + k],
-- REQ[RB + RN + k], REQ[RB + 2 RN + k] and REQ[RB + 3 RN + k], so the IDs
-- go to HMGET as they came. presenceLoad reads every record they name at
-- once; presenceRefresh decides each in order against those (and what
-- earlier refreshes of the call wrote, in WROTE, and binds before it
-- changed, in PENDING_SYNCED); presenceFlush writes the changed records at
-- once.
local REQ, RB, RN = {}, 0, 0
local SEQ_ZERO = '0000000000000000'
local NO_LISTING = '-' -- no listing has this ID: ph does not know the handle
-- WRITES[1..NW] are the field-value pairs presenceFlush writes. The table
-- lives as long as the library and is overwritten from the start, so a
-- batch does not grow a new one entry by entry; what lies past NW is stale.
local RECS, WROTE, WRITES, NW = {}, {}, {}, 0

-- presenceLoad takes n refreshes from req after base. byHandle is '' when
-- every refresh names its listing's ID, else one character per refresh,
-- 'h' where it names the presence handle instead (the caller does not
-- know the listing yet): those are looked up in ph and replaced by the ID.
local function presenceLoad(req, base, n, byHandle)
  REQ, RB, RN = req, base, n
  WROTE, NW, PENDING_SYNCED = {}, 0, {}
  if n == 0 then return end
  if byHandle ~= '' then
    local handles, at = {}, {}
    for k = 1, n do
      if string.byte(byHandle, k) == 104 then -- 'h'
        handles[#handles + 1] = req[base + k]
        at[#at + 1] = base + k
      end
    end
    if #handles > 0 then
      local ids = hmgetAll(P .. 'ph', handles, 1, #handles)
      for j, i in ipairs(at) do req[i] = ids[j] or NO_LISTING end
    end
  end
  RECS = hmgetAll(P .. 'pr', req, base + 1, base + n)
end

-- presenceWrite records refresh k's new record rec of listing id, for
-- presenceFlush and for a later refresh of the same listing in the call.
local function presenceWrite(id, rec)
  WROTE[id] = rec
  WRITES[NW + 1], WRITES[NW + 2] = id, rec
  NW = NW + 2
end

-- presenceMid is what follows the pending flag in a record refreshed now:
-- the calling instance and the new deadline, formatted once per call.
local function presenceMid()
  return INST .. string.format('%020d', NOW + LIM[PRES_TTL])
end

-- presenceRefresh is BindHostPresence of refresh k after cleanup and
-- presenceLoad: outcome, pool and, when accepted, the listing ID and the
-- handles of up to four attempts of the listing whose host endpoint is
-- unbound, oldest first, concatenated (false when none). A refresh of a
-- fresh presence writes its record only: the deadline there moves, its
-- entry in pexp stays, and cleanup re-times that entry when it comes due
-- (presenceDue).
local function presenceRefresh(k, mid)
  if unavailable() then return UNAVAILABLE, 0 end
  local id, key = REQ[RB + k], REQ[RB + RN + k]
  local rec = WROTE[id] or RECS[k]
  if not rec or sub(rec, PR_KEY, PR_FLAG - 1) ~= sub(key, 1, 16) then return NOT_FOUND, 0 end
  local seq = REQ[RB + 2 * RN + k]
  if seq <= sub(rec, 1, 16) then return CONFLICT, 0 end
  if #rec == PR_IDLE then -- the presence is not fresh: it becomes so
    if call('ZCARD', P .. 'pexp') >= LIM[MAX_P] then return CAPACITY, P_PRESENCE end
    call('ZADD', P .. 'pexp', sub(mid, -20), id)
    local g = call('HMGET', P .. 'l:' .. id, 'tenant', 'proto', 'region', 'public')
    if g[4] == '1' then
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0', 0, id)
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0' .. g[3], 0, id)
    end
  end
  -- The pending offers: the record's flag says whether there are any,
  -- unless an op earlier in the call changed them (pendingSync; a record
  -- refreshed before it holds the old flag).
  local pend = false
  if PENDING_SYNCED[id] or sub(rec, PR_FLAG, PR_FLAG) == '1' then pend = call('HGET', P .. 'pn', id) end
  local flag = '0'
  if pend then flag = '1' end
  presenceWrite(id, seq .. sub(key, 1, 16) .. flag .. mid .. REQ[RB + 3 * RN + k])
  return OK, 0, id, pend
end

-- presenceFlush writes the records refreshed since the last flush (a
-- record refreshed twice is written twice in one HSET: the later wins).
local function presenceFlush()
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
