-- ApplyBatch: the UDP side's transitions of one read batch after one
-- cleanup (of the pools they read), in order. Arguments (ARG.apply_batch):
-- the calling instance's ID (Store.InstanceID, recorded as the instance a
-- refresh or bind reached); the call's reference (8 bytes, which the
-- refreshes' values carry); the number n of presence refreshes; '' when
-- every refresh names its record's field (the caller's cache of ph) and no
-- listing is refreshed twice, else one character per refresh, 'p' or 'h'
-- where it names the presence handle and key fingerprint; then the
-- refreshes' record fields (or handles and fingerprints), their sequences
-- (as a record holds them) and their values (as a fresh record without
-- pending offers holds them), n of each; then seven per other op: the
-- number of refreshes before it, its kind and its fields: 'b' (a bind),
-- attempt handle, key, role, binding, relayed address ('' for none); or 'o'
-- (an outcome report), attempt handle, key, role, path (1-3), milliseconds.
-- Arguments are the cheapest way into the function (Redis hands each over
-- as a Lua string; cutting one packed argument apart costs more), and
-- grouped so the fields go to HMGET as they came. The refreshes' records
-- are read with one HMGET and written with one HSET (presenceLoad,
-- presenceFlush); another op writes the records refreshed before it first,
-- so it reads them as the batch left them. A reference that names a live
-- entry answers RETRY, and nothing is written: the caller sends the batch
-- again under another.
--
-- Most refreshes are of a fresh presence, in a batch that names every
-- listing once: the loop decides those inline, with one comparison of the
-- sequence with the record, and writes the value as it came (no string
-- made), leaving them out of the presence answer; every other refresh goes
-- through presenceRefresh, which decides every case.
--
-- Answers {presence, others, offered}. presence packs, in order, the
-- answers of the refreshes the loop did not decide inline: the refresh's
-- number k (4 bytes, big-endian), outcome and pool (a byte each) and, when
-- accepted, the number of pending offers (a byte), the listing ID (36) if
-- the refresh named its handle, and the pending offers' handles (36 each).
-- offered packs those the loop decided inline that have pending offers
-- (offeredAnswer); a refresh in neither was accepted with none. others
-- packs the other ops' answers in order: outcome, pool and whether an
-- attempt view follows (a byte each). A bind's view follows its replay,
-- ready and first bytes, and then, once both endpoints are bound (and the
-- attempt is not relay-only), the introduction consumed now (first) or read
-- back; then relay ready and relay first (a byte each) and, once both
-- relayed addresses are known, the relay introduction likewise. An outcome
-- report's view follows its duplicate byte and its tenant. Views and
-- introductions are fields, each length-prefixed (2 bytes, big-endian). One
-- string per kind of answer, so the client reads a batch's answer as three
-- strings, not an array per op.

-- packFields appends the fields of t to out, length-prefixed.
local function packFields(out, t)
  for i = 1, #t do
    local v = t[i] or ''
    if type(v) == 'number' then v = I(v) end
    out[#out + 1] = struct.pack('>H', #v)
    out[#out + 1] = v
  end
end

local function batchBind(out, handle, key, role, binding, relayed)
  local b = bindAttempt(handle, role, key, binding, relayed)
  if b[3] == '' then
    out[#out + 1] = string.char(b[1], 0, 0)
    return
  end
  local aid, ready, first = b[3], 0, 0
  local f = call('HMGET', P .. 'a:' .. aid, 'host', 'peer', 'consumed', 'ronly')
  if f[1] ~= '' and f[2] ~= '' and f[4] ~= '1' then
    ready = 1
    if f[3] ~= '1' then
      consume(aid)
      first = 1
    end
  end
  local rready, rfirst, rintro = relayIntroduce(aid)
  out[#out + 1] = string.char(b[1], 0, 1, b[2], ready, first)
  packFields(out, attemptView(aid))
  if ready == 1 then packFields(out, introduction(aid)) end
  out[#out + 1] = string.char(rready, rfirst)
  if rready == 1 then packFields(out, rintro) end
end

local function batchReport(out, handle, key, role, path, ms)
  local r = relayReport(handle, key, role, tonumber(path) or 0, tonumber(ms) or 0)
  if #r < 5 then
    out[#out + 1] = string.char(r[1], r[2], 0)
    return
  end
  out[#out + 1] = string.char(r[1], r[2], 1, r[3])
  packFields(out, {r[4]})
  packFields(out, r[5])
end

-- An accepted refresh's answer bytes after its number (OK, pool 0,
-- pending count) by the number of pending offers, and that count alone.
local ACCEPTED = {[0] = '\0\0\0', '\0\0\1', '\0\0\2', '\0\0\3', '\0\0\4'}
local COUNT = {[0] = '\0', '\1', '\2', '\3', '\4'}

-- REFRESH[k] is refresh k's number as an answer carries it (4 bytes,
-- big-endian), made once per k for the library's life (refreshNumber).
local REFRESH = {}
local function refreshNumber(k)
  local s = REFRESH[k]
  if not s then
    s = struct.pack('>I', k)
    REFRESH[k] = s
  end
  return s
end

-- offeredAnswer is the answer of the refreshes a call decided inline that
-- have pending offers (numbers offered, of the records a[fields + k]
-- name), in order: each refresh's number, the number of its pending offers
-- (a byte) and their handles, read with one HMGET of pn.
local function offeredAnswer(a, fields, offered)
  if #offered == 0 then return '' end
  local ids = {}
  for j, k in ipairs(offered) do ids[j] = idOf(a[fields + k]) end
  local h = hmgetAll(P .. 'pn', ids, 1, #ids)
  local out = {}
  for j, k in ipairs(offered) do
    local pend = h[j] or ''
    out[3 * j - 2], out[3 * j - 1], out[3 * j] = refreshNumber(k), COUNT[#pend / 36], pend
  end
  return table.concat(out)
end

-- refreshAnswer decides refresh k with presenceRefresh and appends its
-- answer to pres, which holds np strings; it returns their new number.
local function refreshAnswer(pres, np, k, byHandle)
  local code, pool, lid, pending = presenceRefresh(k)
  np = np + 1
  pres[np] = refreshNumber(k)
  np = np + 1
  if code ~= OK then
    pres[np] = string.char(code, pool)
    return np
  end
  local count = 0
  if pending then count = #pending / 36 end
  pres[np] = ACCEPTED[count]
  if byHandle ~= '' and string.byte(byHandle, k) == 104 then np = np + 1; pres[np] = lid end
  if pending then np = np + 1; pres[np] = pending end
  return np
end

redis.register_function('rdv_apply_batch', function(keys, a)
  local at = ARG.apply_batch
  local n, na, ref = tonumber(a[at.count]), #a, a[at.ref]
  if n > 0 and refTaken(keys, ref) then return RETRY end
  -- A batch of refreshes only touches no attempt, so it leaves the void
  -- of an earlier primary's attempts (followPrimary) to the next call
  -- that can bind, consume or create one.
  local fields = at.kinds -- refresh k's record field is a[fields + k]
  local alone = na == fields + 3 * n
  begin(keys, a, true, alone)
  INST = a[at.instance]
  local byHandle = a[at.kinds]
  presenceLoad(a, fields, n, byHandle, ref)
  local inline = byHandle == '' and not unavailable()
  local pres, np, others, offered = {}, 0, {}, {}
  local seqs, values = fields + n, fields + 2 * n -- where the sequences and the values begin
  if inline and alone then
    -- With no other op in the call, nothing changes pending offers while
    -- the loop runs: a listing with some is decided inline as well, and
    -- its offers are read after the loop, for all such listings at once.
    -- The loop keeps what it writes in locals, the cheapest to reach.
    local recs, writes, nw = RECS, WRITES, NW
    for k = 1, n do
      local rec, seq = recs[k], a[seqs + k]
      if rec and seq > rec then
        -- Fresh, without pending offers, and the sequence is greater.
        writes[nw + 1], writes[nw + 2] = a[fields + k], a[values + k]
        nw = nw + 2
      elseif rec and byte(rec, 1) == MARK_PENDING and seq > sub(rec, 2) then
        writes[nw + 1], writes[nw + 2] = a[fields + k], 'p' .. a[values + k]
        nw = nw + 2
        offered[#offered + 1] = k
      else
        NW = nw
        np = refreshAnswer(pres, np, k, byHandle)
        nw = NW
      end
    end
    NW = nw
  else
    local o = fields + 3 * n + 1 -- the first argument of the next other op
    for k = 1, n + 1 do
      while o <= na and tonumber(a[o]) == k - 1 do
        presenceFlush()
        if a[o + 1] == 'o' then
          batchReport(others, a[o + 2], a[o + 3], a[o + 4], a[o + 5], a[o + 6])
        else
          batchBind(others, a[o + 2], a[o + 3], a[o + 4], a[o + 5], a[o + 6])
        end
        o = o + 7
      end
      if k > n then break end
      local field, rec = a[fields + k], RECS[k]
      if inline and rec and a[seqs + k] > rec and not PENDING_SYNCED[field] then
        WRITES[NW + 1], WRITES[NW + 2] = field, a[values + k]
        NW = NW + 2
      else
        np = refreshAnswer(pres, np, k, byHandle)
      end
    end
  end
  presenceFlush()
  return {table.concat(pres), table.concat(others), offeredAnswer(a, fields, offered)}
end)
