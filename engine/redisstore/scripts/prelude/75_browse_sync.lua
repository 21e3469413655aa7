-- What an instance's local browse index reads (rdv_browse_sync,
-- rdv_browse_snapshot; the log is prelude/25_browse_log.lua).

-- browseItem is listing id as the local index holds it: {id} when it is
-- not visible (gone, private or its presence not fresh), else {id, tenant,
-- protocol, region, doc, spec, players, max players, lease deadline,
-- creation time, attributes, key version ('kv')}. Cleanup has run, so pexp
-- holds exactly the fresh presences.
local function browseItem(id)
  local f = call('HMGET', P .. 'l:' .. id, 'public', 'tenant', 'proto', 'region', 'doc', 'spec', 'players', 'maxp',
    'dl', 'ct', 'at', 'kv')
  if f[1] ~= '1' or not call('ZSCORE', P .. 'pexp', id) then return {id} end
  return {id, f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10] or '0', f[11] or '', f[12] or '0'}
end

-- browseBegin is a browse read's start: when a presence or a lease is
-- due (or a drain's window ended), cleanup runs as before any transition,
-- so an expiry lands in the log before the version is read; it then moves
-- the clock, as a writing transition does. When nothing is due, which two
-- range reads tell, the call writes nothing and so costs no replication.
-- Call entries and attempts are left to the next transition: browse shows
-- neither, and an attempt due with its listing's lease is removed by that
-- cleanup in the same order as by this one. Answers the head of the
-- answer, {OK, 0, version, generation}, and the log's base and length;
-- nil when the deployment is unavailable.
local function browseBegin(keys, a)
  setup(keys, a, false)
  if unavailable() then return nil end
  local now = I(NOW)
  if (META.draining and NOW >= META.drain_dl) or #call('ZRANGEBYSCORE', P .. 'pexp', '-inf', now, 'LIMIT', 0, 1) > 0
      or #call('ZRANGEBYSCORE', P .. 'lexp', '-inf', now, 'LIMIT', 0, 1) > 0 then
    cleanup(true)
    if NOW > tonumber(call('HGET', P .. 'meta', 'clock') or '0') then call('HSET', P .. 'meta', 'clock', now) end
  end
  local m = call('HMGET', P .. 'meta', 'blbase', 'gen')
  local base, len = tonumber(m[1] or '0'), call('LLEN', P .. 'bl')
  return {OK, 0, I(base + len), m[2] or '0'}, base, len
end
