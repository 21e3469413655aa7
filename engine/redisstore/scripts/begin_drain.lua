-- BeginDrain: idempotent; a second call keeps the first deadline.
redis.register_function('rdv_begin_drain', function(keys, a)
  begin(keys, a)
  if not META.draining then
    call('HSET', P .. 'meta', 'draining', '1', 'drain_dl', I(NOW + LIM.DRAIN))
  end
  return {OK, 0}
end)
