-- What an instance's local browse index reads (rdv_browse_sync,
-- rdv_browse_snapshot; the log is prelude/25_browse_log.lua).

-- browseItem is listing id as the local index holds it: {id} when it is
-- not visible (gone, private or its presence not fresh), else {id, tenant,
-- protocol, region, doc, spec, players, max players, lease deadline,
-- creation time}. Cleanup has run, so pexp holds exactly the fresh
-- presences.
local function browseItem(id)
  local f = call('HMGET', P .. 'l:' .. id, 'public', 'tenant', 'proto', 'region', 'doc', 'spec', 'players', 'maxp',
    'dl', 'ct')
  if f[1] ~= '1' or not call('ZSCORE', P .. 'pexp', id) then return {id} end
  return {id, f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10] or '0'}
end

-- browseBegin is a browse read's start: what is due goes, as before any
-- transition (cleanup of the pools presence and listings live in), so an
-- expiry lands in the log before the version is read. It does not write
-- the clock unless cleanup changed what browse shows: a read that found
-- nothing due writes nothing, so it costs no replication. Answers the
-- head of the answer, {OK, 0, version, generation}, and the log's base
-- and length; nil when the deployment is unavailable.
local function browseBegin(keys, a)
  setup(keys, a, false)
  if unavailable() then return nil end
  local before = call('LLEN', P .. 'bl')
  cleanup(true)
  local m = call('HMGET', P .. 'meta', 'blbase', 'gen', 'clock')
  local base, len = tonumber(m[1] or '0'), call('LLEN', P .. 'bl')
  if len ~= before and NOW > tonumber(m[3] or '0') then call('HSET', P .. 'meta', 'clock', I(NOW)) end
  return {OK, 0, I(base + len), m[2] or '0'}, base, len
end
