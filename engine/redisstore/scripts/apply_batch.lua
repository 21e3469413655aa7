-- ApplyBatch: the UDP side's transitions of one read batch after one
-- cleanup, in order. ARGV[3..]: six per op: kind (p/b), handle, key, seq or
-- role, public or binding, local. Each op answers as BindHostPresence
-- ({outcome, pool, view}) or as a bind followed, once both endpoints are
-- bound, by the introduction consumed now or read back:
-- {outcome, pool, replay, ready, first, attempt view, introduction}.
redis.register_function('rdv_apply_batch', function(keys, a)
  begin(keys, a)
  local out = {}
  for i = 3, #a, 6 do
    if a[i] == 'p' then
      out[#out + 1] = bindPresence(a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5])
    else
      local b = bindAttempt(a[i + 1], a[i + 3], a[i + 2], a[i + 4])
      if b[3] == '' then
        out[#out + 1] = {b[1], 0}
      else
        local aid, ready, first, intro = b[3], 0, 0, {}
        local f = call('HMGET', P .. 'a:' .. aid, 'host', 'peer', 'consumed')
        if f[1] ~= '' and f[2] ~= '' then
          ready = 1
          if f[3] ~= '1' then
            consume(aid)
            first = 1
          end
          intro = introduction(aid)
        end
        out[#out + 1] = {b[1], 0, b[2], ready, first, attemptView(aid), intro}
      end
    end
  end
  return out
end)
