-- The revocations an instance rebuilding its local browse index starts
-- from (browse_revocations.go): every live one, {member, deadline} each.
-- Answers {OK, 0, version, generation, 0, now, items...}, the head of
-- rdv_browse_snapshot. At most the revocation pool's ceiling of items.
redis.register_function('rdv_browse_revocations', function(keys, a)
  local head = browseBegin(keys, a)
  if not head then return {UNAVAILABLE, 0} end
  head[5], head[6] = 0, I(NOW)
  local z = call('ZRANGEBYSCORE', P .. 'vexp', '(' .. I(NOW), '+inf', 'WITHSCORES')
  for i = 1, #z, 2 do head[#head + 1] = {z[i], z[i + 1]} end
  return head
end)
