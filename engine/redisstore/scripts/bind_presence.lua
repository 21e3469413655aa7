-- BindHostPresence. ARGV[3..]: handle, presence key, seq, public, local.
redis.register_function('rdv_bind_presence', function(keys, a)
  begin(keys, a)
  return bindPresence(a[3], a[4], a[5], a[6], a[7])
end)
