-- MigratePresence converts, up to 256 at a time, the presence records an
-- older library wrote (field: the listing ID as text; value: the sequence
-- in 16 digits, the key fingerprint, a pending flag, the instance the last
-- refresh reached and, while fresh, a deadline and text endpoints) to
-- the layout of prelude/30_presence_record.lua. A converted presence is
-- idle: its sequence and the instance stay, and the host's next refresh
-- makes it fresh again (an old record's deadline and text endpoints are
-- not carried over). Argument (ARG.migrate_presence): the HSCAN cursor of
-- pr ('0' to begin). Answers the next cursor, '0' when the scan is
-- complete; then meta's 'model' records it, and every
-- later call answers '0' at once. New calls it before its store serves.
local OLD_LEN = 69 -- an old idle record's length; a fresh one is longer
local OLD_NO_INSTANCE = '000000000000000000000000000000000000'

local function migrateOne(id, old)
  call('HDEL', P .. 'pr', id)
  if #old < OLD_LEN or call('EXISTS', P .. 'l:' .. id) == 0 then return end
  local bid = string.gsub(string.gsub(id, '-', ''), '..', function(h) return string.char(tonumber(h, 16)) end)
  local field = bid .. sub(old, 17, 32)
  local digits = I(tonumber(sub(old, 1, 16)))
  call('HSET', P .. 'pr', field, 'i' .. string.format('%02d', #digits) .. digits)
  call('HSET', P .. 'l:' .. id, 'prf', field)
  local inst = sub(old, 34, 69)
  if inst ~= OLD_NO_INSTANCE then call('HSET', P .. 'l:' .. id, 'pi', inst) end
  if #old > OLD_LEN then expirePresence(id) end
end

redis.register_function('rdv_migrate_presence', function(keys, a)
  setup(keys, a, true)
  if call('HGET', P .. 'meta', 'model') == '2' then return '0' end
  local r = call('HSCAN', P .. 'pr', a[ARG.migrate_presence.cursor], 'COUNT', '256')
  local f = r[2]
  for i = 1, #f, 2 do
    if #f[i] == 36 then migrateOne(f[i], f[i + 1]) end
  end
  if r[1] == '0' then call('HSET', P .. 'meta', 'model', '2') end
  return r[1]
end)
