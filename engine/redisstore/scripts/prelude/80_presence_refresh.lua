-- A call's presence refreshes (BindHostPresence, and ApplyBatch's): read
-- at once, decided in order, written at once.

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
  REF, REF_DL, REF_SET = ref, I(NOW + LIM.PRES_TTL), false
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
    if call('ZCARD', P .. 'pexp') >= LIM.MAX_P then return CAPACITY, P_PRESENCE end
    call('ZADD', P .. 'pexp', REF_DL, id)
    local g = call('HMGET', P .. 'l:' .. id, 'tenant', 'proto', 'region', 'public')
    if g[4] == '1' then
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0', 0, id)
      call('ZADD', P .. 'b:' .. g[1] .. '\0' .. g[2] .. '\0' .. g[3], 0, id)
      browseChanged(id, true)
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
