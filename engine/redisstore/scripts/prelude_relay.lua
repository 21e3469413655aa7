-- The relay fallback's helpers, loaded right after prelude.lua (before the
-- transitions): tombstones of ended attempts, the one-time relay
-- introduction and outcome reports. They hang off RELAY so prelude.lua's
-- helpers (removeAttempt, cleanup) reach them.
--
-- An attempt hash gains: ronly (relay-only, '1'), off (the host was told),
-- hrel/crel (the sides' relayed addresses, '' until recorded), relayed (the
-- relay introduction consumed), hout/cout (outcome reports, "path:ms").
--
-- A tombstone is the hash "x:<attempt id>" (listing, tenant, client, owner,
-- the attempt's deadline dl, end (END_*), progress, hout, cout), its
-- deadline in "xexp": TombstoneTTL after the attempt ended. At most the
-- attempts ceiling of them: the earliest due goes first when full.

local TOMB_TTL = 18 -- LIM index: TombstoneTTL in ticks

-- progressOf renders engine.AttemptProgress as eight '0'/'1' flags from the
-- attempt fields f[i..i+7]: ronly, off, host, peer, hrel, crel, consumed,
-- relayed (the order of AttemptProgress; Go decodes it).
local PROGRESS = {'ronly', 'off', 'host', 'peer', 'hrel', 'crel', 'consumed', 'relayed'}
local function progressOf(f, i)
  local b = {}
  for k = 0, 7 do
    local v = f[i + k]
    local set = v == '1'
    if k >= 2 and k <= 5 then set = v ~= nil and v ~= false and v ~= '' end
    b[k + 1] = set and '1' or '0'
  end
  return table.concat(b)
end

RELAY.removeTomb = function(aid)
  call('DEL', P .. 'x:' .. aid)
  call('ZREM', P .. 'xexp', aid)
end

-- clearTombs drops every tombstone (MarkUnavailable).
RELAY.clearTombs = function() drainDue('xexp', '+inf', RELAY.removeTomb) end

-- tombstone records attempt aid's end; removeAttempt deletes the record
-- next. It ended at its own deadline, its listing's lease deadline or the
-- drain deadline when one of those ended it, else now.
RELAY.tombstone = function(aid, cause)
  local f = call('HMGET', P .. 'a:' .. aid, 'listing', 'tenant', 'client', 'dl', 'hout', 'cout', unpack(PROGRESS))
  local l = call('HMGET', P .. 'l:' .. f[1], 'owner', 'dl')
  local at = NOW
  if cause == END_EXPIRED then at = tonumber(f[4])
  elseif cause == END_LEASE_EXPIRED and l[2] then at = tonumber(l[2])
  elseif cause == END_DRAINED and META.draining then at = META.drain_dl end
  if call('ZCARD', P .. 'xexp') >= LIM[MAX_A] then
    RELAY.removeTomb(call('ZRANGE', P .. 'xexp', 0, 0)[1])
  end
  call('HSET', P .. 'x:' .. aid, 'listing', f[1], 'tenant', f[2], 'client', f[3], 'owner', l[1] or '', 'dl', f[4],
    'end', I(cause), 'progress', progressOf(f, 7), 'hout', f[5] or '', 'cout', f[6] or '')
  call('ZADD', P .. 'xexp', I(at + LIM[TOMB_TTL]), aid)
end

-- introduce consumes attempt aid's relay introduction once both relayed
-- addresses are recorded, or reads it back after: ready, first and
-- {id, handle, host relayed, client relayed}.
local NO_RELAY = {}
RELAY.introduce = function(aid)
  local f = call('HMGET', P .. 'a:' .. aid, 'hrel', 'crel', 'relayed', 'consumed', 'handle')
  if not f[1] or f[1] == '' or not f[2] or f[2] == '' then return 0, 0, NO_RELAY end
  local first = 0
  if f[3] ~= '1' then
    if f[4] ~= '1' then call('HINCRBY', P .. 'meta', 'inflight', -1) end
    call('HSET', P .. 'a:' .. aid, 'relayed', '1')
    first = 1
  end
  return 1, first, {aid, f[5], f[1], f[2]}
end

-- report records one side's outcome (path 1-3, ms): the first per side is
-- kept. {outcome, 0[, duplicate, tenant, attempt view]} (the answer carries
-- the attempt's lifetime, as a bind's). NotFound for an unknown handle
-- or a wrong key, as a bind. The Go side sends only valid roles and paths;
-- another is refused here before any write, as NotFound, so a malformed op
-- fails alone and the batch's other ops keep their answers.
RELAY.report = function(handle, key, role, path, ms)
  if (role ~= 'h' and role ~= 'c') or path < 1 or path > 3 then return {NOT_FOUND, 0} end
  if unavailable() then return {UNAVAILABLE, 0} end
  local aid = call('HGET', P .. 'ah', handle)
  if not aid then return {NOT_FOUND, 0} end
  local kf, of = 'ckey', 'cout'
  if role == 'h' then kf, of = 'hkey', 'hout' end
  local f = call('HMGET', P .. 'a:' .. aid, kf, of, 'tenant')
  if f[1] ~= key then return {NOT_FOUND, 0} end
  local dup = 1
  if not f[2] or f[2] == '' then
    call('HSET', P .. 'a:' .. aid, of, I(path) .. ':' .. I(ms))
    dup = 0
  end
  return {OK, 0, dup, f[3], attemptView(aid)}
end

-- progress is a live attempt's progress flags.
RELAY.progress = function(aid)
  return progressOf(call('HMGET', P .. 'a:' .. aid, unpack(PROGRESS)), 1)
end
