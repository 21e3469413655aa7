-- BindHostPresence. ARGV[3..]: handle, presence key, seq (16 digits,
-- zero-padded), public, local, the calling instance's ID. Answers
-- {outcome, pool[, {listing, ttl, pending handles}]}.
redis.register_function('rdv_bind_presence', function(keys, a)
  begin(keys, a)
  INST = a[8]
  presenceLoad({a[3], a[4] .. '0', a[5], a[6] .. '|' .. a[7]}, 0, 1, 'h')
  local code, pool, id, pending = presenceRefresh(1, presenceMid())
  presenceFlush()
  if code ~= OK then return {code, pool} end
  local handles = {}
  for i = 1, #(pending or ''), 36 do handles[#handles + 1] = string.sub(pending, i, i + 35) end
  return {OK, 0, {id, LIM[PRES_TTL], handles}}
end)
