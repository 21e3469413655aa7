-- Inspect dumps every key under the prefix after cleanup, for tests only
-- (Snapshot and CheckInvariants): it walks the whole keyspace of the
-- deployment and must never run in production. Answers {now, {key, type,
-- content...}...}; content is field/value or member/score pairs.
redis.register_function('rdv_inspect', function(keys, a)
  begin(keys, a)
  local out = {}
  for _, key in ipairs(call('KEYS', P .. '*')) do
    local t = call('TYPE', key)['ok']
    local c
    if t == 'hash' then c = call('HGETALL', key)
    elseif t == 'zset' then c = call('ZRANGE', key, 0, -1, 'WITHSCORES')
    elseif t == 'set' then c = call('SMEMBERS', key)
    elseif t == 'list' then c = call('LRANGE', key, 0, -1)
    else c = {call('GET', key)} end
    out[#out + 1] = {string.sub(key, #P + 1), t, c}
  end
  return {NOW, out}
end)
