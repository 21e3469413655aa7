-- BindHostPresence. Arguments (ARG.bind_presence): the calling instance's
-- ID, the call's reference, the presence handle (36) and key fingerprint
-- (16), the sequence and the record's value (as apply_batch.lua takes
-- them). Answers {outcome, pool[, {listing, ttl, pending handles}]}, or
-- RETRY when the reference names a live entry (nothing is written).
redis.register_function('rdv_bind_presence', function(keys, a)
  local at = ARG.bind_presence
  if refTaken(keys, a[at.ref]) then return {RETRY, 0} end
  begin(keys, a)
  INST = a[at.instance]
  presenceLoad({a[at.field], a[at.seq], a[at.value]}, 0, 1, 'h', a[at.ref])
  local code, pool, id, pending = presenceRefresh(1)
  presenceFlush()
  if code ~= OK then return {code, pool} end
  local handles = {}
  for i = 1, #(pending or ''), 36 do handles[#handles + 1] = string.sub(pending, i, i + 35) end
  return {OK, 0, {id, LIM.PRES_TTL, handles}}
end)
