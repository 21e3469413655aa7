-- The library's shared helpers: the files of scripts/prelude/, joined in
-- the order of their names before the transition files (scripts/*.lua)
-- into the one library "rendezvous" at load time. A Lua local is visible
-- only after it, so a helper lives in the file of its concern at or after
-- everything it calls:
--
--   10_context          the call's context: prefix, limits, time, fencing
--   15_arguments        each transition's argument positions, named
--   20_admission        tenant counts, quotas, the admission of new work
--   30_presence_record  the presence record and its expiry
--   40_idempotency      idempotency records
--   50_removal          the removal cascade, tombstones, revocation
--   60_cleanup          cleanup of what is due, the primary check, begin
--   65_read             the start of a read: cleanup only when it matters
--   70_views            listing and attempt views, the introduction
--   80_presence_refresh a call's presence refreshes (load, decide, flush)
--   90_attempt          attempt binds, introductions, relay fallback
--
-- The joined chunk is one Lua function, whose locals are capped at 200:
-- TestLibraryLocalsWithinBudget counts the top-level ones.
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
-- LIM holds the limits by name (LIM.PRES_TTL), in ticks and counts:
-- ARGV[2] lists them in the order of LIMITS (limitsArg in Go). TOMB_TTL is
-- engine.TombstoneTTL.
local LIM = {}
local LIMITS = {'LEASE_TTL', 'PRES_TTL', 'ATT_TTL', 'REPLAY_TTL', 'IDEM_TTL', 'DRAIN', 'MAX_L', 'MAX_P', 'MAX_A',
  'MAX_R', 'MAX_V', 'MAX_I', 'OWNER_Q', 'TENANT_AQ', 'SUBJECT_AQ', 'TENANT_LQ', 'TENANT_IQ', 'TOMB_TTL',
  'SUBJECT_IQ'}

-- engine.Outcome and engine.Pool values.
local OK, NOT_FOUND, EXPIRED, REVOKED, CONFLICT, CAPACITY, DRAINING, REPLAY_REJECTED, UNAVAILABLE, FULL =
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9
local P_LISTINGS, P_PRESENCE, P_ATTEMPTS, P_REPLAY, P_REVOCATIONS, P_IDEM = 1, 2, 3, 4, 5, 6
local Q_OWNER, Q_TENANT_ATTEMPTS, Q_SUBJECT_ATTEMPTS, Q_TENANT_LISTINGS, Q_TENANT_IDEM, Q_SUBJECT_IDEM = 7, 8, 9, 10, 11, 12
-- Answers that are not outcomes: the Go side regenerates IDs (a collision),
-- or reports current_players above the listing's max_players.
local RETRY, BAD_PLAYERS = -1, -2

local function I(n) return string.format('%d', n) end
-- sub and byte are string.sub and string.byte, which setup fetches: the
-- library's code cannot read the global 'string' while it loads, and a
-- local is the cheapest access in the loops over a batch's refreshes.
local sub, byte
local function call(...) return redis.call(...) end

-- END_* are engine.AttemptEnd: why an attempt record went (its tombstone
-- says).
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
    local i = 0
    for w in string.gmatch(args[2], '%S+') do
      i = i + 1
      LIM[LIMITS[i]] = tonumber(w)
    end
    LIM_SRC = args[2]
  end
  local nowArg, fid, fepoch = splitFence(args[1])
  local m = call('HMGET', P .. 'meta', 'clock', 'unavail', 'draining', 'drain_dl', 'f:' .. fid, 'replid')
  META = {unavail = m[2] == '1', draining = m[3] == '1', drain_dl = tonumber(m[4] or '0'), replid = m[6]}
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
  end
  -- A writing call always writes the clock, even unmoved: then it always
  -- replicates something, and a WAIT after it (acknowledged writes, acks.go)
  -- covers everything written before it, on any connection.
  if write then call('HSET', P .. 'meta', 'clock', I(n)) end
  NOW = n
end

local function unavailable() return META.unavail end
