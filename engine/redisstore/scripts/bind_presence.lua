-- BindHostPresence. ARGV[3..]: handle, presence key, seq, public, local,
-- the calling instance's ID. Answers {outcome, pool[, {listing, ttl,
-- pending handles}]}.
redis.register_function('rdv_bind_presence', function(keys, a)
  begin(keys, a)
  INST = a[8]
  local code, pool, id, pending = bindPresence(a[3], a[4], a[5], a[6], a[7])
  if code ~= OK then return {code, pool} end
  return {OK, 0, {id, LIM[PRES_TTL], pending}}
end)
