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
    browseChanged(id, false)
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
