-- PresenceInstance: the instance a listing's presence last reached, or ''
-- before its first refresh or when the listing is gone (what its view says,
-- read without its tenant). A read. Argument (ARG.presence_instance):
-- listing ID.
redis.register_function{function_name = 'rdv_presence_instance', flags = {'no-writes'}, callback = function(keys, a)
  setup(keys, a, false)
  local l = call('HMGET', P .. 'l:' .. a[ARG.presence_instance.listing], 'prf', 'pi')
  return presenceInstance(presenceValue(presenceRecord(l[1])), l[2])
end}
