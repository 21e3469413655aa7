-- GetListing. Arguments (ARG.get_listing): tenant, listing, joinable (1/0),
-- subject ('': none): a subject with a live revocation, global or confined
-- to tenant, is answered Revoked before anything else is read, so a request
-- checks its caller and reads in one call.
-- A read of a fixed set of keys, without cleanup and without building the
-- view: what cleanup would remove first counts as gone (the listing past
-- its lease deadline, everything after the drain's end, a presence whose
-- call is past its deadline), and the listing's fields, its presence
-- record and the instance the record names are answered as stored, for Go
-- to decode (listingRead in codec.go): {OK, 0, 0, {lease, presence handle,
-- owner, spec, doc, players, version, lease deadline, ttl, record ('' when
-- not fresh), instance, attributes}}. It writes nothing, but is not flagged no-writes
-- (as rdv_state): a server that refuses writes refuses it too, and no
-- promotion check is needed, since a promotion voids attempts only.
redis.register_function('rdv_get_listing', function(keys, a)
  setup(keys, a, false)
  if unavailable() then return {UNAVAILABLE, 0} end
  local at = ARG.get_listing
  local subject = a[at.subject] or ''
  if subject ~= '' and liveRevocation(a[at.tenant], subject) then return {REVOKED, 0} end
  if META.draining and NOW >= META.drain_dl then return {NOT_FOUND, 0} end
  local f = call('HMGET', P .. 'l:' .. a[at.listing], 'tenant', 'dl', 'lease', 'pres', 'owner', 'spec', 'doc', 'players',
    'ver', 'prf', 'pi', 'at')
  if f[1] ~= a[at.tenant] or tonumber(f[2]) <= NOW then return {NOT_FOUND, 0} end
  local rec = presenceRecord(f[10])
  local value = presenceValue(rec)
  local inst, fresh = f[11] or '', false
  if value then
    local ref = sub(value, refAt(value), refAt(value) + REF_LEN - 1)
    local dl = call('ZSCORE', P .. 'cexp', ref)
    fresh = dl ~= false and tonumber(dl) > NOW
    inst = call('GET', P .. 'c:' .. ref) or ''
  end
  if not fresh then
    if a[at.joinable] == '1' then return {NOT_FOUND, 0} end
    rec = ''
  end
  return {OK, 0, 0, {f[3], f[4], f[5], f[6], f[7] or '', f[8], f[9], f[2], tonumber(f[2]) - NOW, rec, inst, f[12] or ''}}
end)
