-- AttemptStatus. Arguments (ARG.attempt_status): tenant, subject, attempt
-- ID or '', handle or '' (by handle only a live attempt is found),
-- revocation ('1': a subject with a live revocation, global or confined to
-- tenant, is answered Revoked first, so a request checks its caller and
-- reads in one call). Answers
-- the live attempt or its tombstone to its client or its listing's owner of
-- that tenant; NotFound to anyone else. {outcome, 0[, attempt ID, listing,
-- deadline, progress, end ('0' while live), host outcome, client outcome]}.
-- A read of a fixed set of keys (beginRead: no cleanup unless an attempt
-- or a listing is due).
redis.register_function('rdv_attempt_status', function(keys, a)
  local at = ARG.attempt_status
  local tenant, subject, aid, handle = a[at.tenant], a[at.subject], a[at.attempt], a[at.handle]
  if tenant == '' or subject == '' or not (#aid == 36 or aid == '' and #handle == 36) then
    return redis.error_reply('rdv_attempt_status: bad query')
  end
  beginRead(keys, a)
  if unavailable() then return {UNAVAILABLE, 0} end
  if a[at.revocation] == '1' and liveRevocation(tenant, subject) then return {REVOKED, 0} end
  local byHandle = aid == ''
  if byHandle then
    aid = call('HGET', P .. 'ah', handle)
    if not aid then return {NOT_FOUND, 0} end
  end
  local f = call('HMGET', P .. 'a:' .. aid, 'listing', 'tenant', 'client', 'dl', 'hout', 'cout', unpack(PROGRESS))
  if f[1] then
    local owner = call('HGET', P .. 'l:' .. f[1], 'owner')
    if f[2] ~= tenant or (f[3] ~= subject and owner ~= subject) then return {NOT_FOUND, 0} end
    return {OK, 0, aid, f[1], f[4], progressOf(f, 7), '0', f[5] or '', f[6] or ''}
  end
  local x = call('HMGET', P .. 'x:' .. aid, 'listing', 'tenant', 'client', 'owner', 'dl', 'end', 'progress', 'hout', 'cout')
  if byHandle or not x[1] or x[2] ~= tenant or (x[3] ~= subject and x[4] ~= subject) then return {NOT_FOUND, 0} end
  local due = call('ZSCORE', P .. 'xexp', aid)
  if not due or tonumber(due) <= NOW then return {NOT_FOUND, 0} end -- cleanup would remove it first
  return {OK, 0, aid, x[1], x[5], x[7], x[6], x[8], x[9]}
end)
