-- Cleanup: what is due goes at the start of every writing transition, and
-- a promoted primary's inherited attempts at its first (begin).

-- drainDue removes every member of deadline set z due at or before upto,
-- in bounded chunks, earliest first; remove must drop the member from z.
local function drainDue(z, upto, remove)
  while true do
    local ids = call('ZRANGEBYSCORE', P .. z, '-inf', upto, 'LIMIT', '0', '256')
    if #ids == 0 then return end
    for _, id in ipairs(ids) do remove(id) end
  end
end

-- clearTombs drops every tombstone (MarkUnavailable).
local function clearTombs() drainDue('xexp', '+inf', removeTomb) end

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
    drainDue('xexp', now, removeTomb)
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
--
-- The replication ID is read (INFO replication, about 8 µs) only when the
-- data's meta.replid (read by setup with the flags, at no cost) is not the
-- one this server last confirmed as its own, FOLLOWED: once per topology
-- change and server, not per call. FOLLOWED is the library's state on this
-- server, never replicated, and starts empty whenever the library is loaded:
-- at start, on FUNCTION LOAD and on a full resynchronisation (a replica
-- loading its primary's data loads the primary's library with it).
-- A server demoted and then promoted again therefore checks again unless
-- meta.replid is still the one it confirmed: then its data is still its
-- own (a full resync would have emptied FOLLOWED) and no primary between
-- its two terms wrote anything but presence refreshes (any other writing
-- call on that primary would have moved meta.replid), so nothing it holds
-- can have been consumed elsewhere and lost.
local FOLLOWED = nil
local function followPrimary()
  if FOLLOWED and META.replid == FOLLOWED then return end
  local info = call('INFO', 'replication')
  local id = string.match(info, 'master_replid:(%x+)')
  if not id then return end
  if META.replid ~= id then
    if string.match(info, 'master_replid2:(%x+)') ~= string.rep('0', 40) then
      drainDue('aexp', '+inf', removeAttempt)
      call('HINCRBY', P .. 'meta', 'gen', 1)
    end
    call('HSET', P .. 'meta', 'replid', id)
  end
  FOLLOWED = id
end

-- begin starts a writing transition. skipFollow leaves out followPrimary
-- for a call that can neither read nor change an attempt (a batch of
-- presence refreshes only): the first call that can still runs it first.
local function begin(keys, args, presenceOnly, skipFollow)
  setup(keys, args, true)
  if not skipFollow then followPrimary() end
  cleanup(presenceOnly)
end
