-- Argument positions, named once. ARGV[1] (now, and the caller's fence)
-- and ARGV[2] (the limits) are every call's (setup); a function's own
-- arguments follow from ARGV[3]. ARG.<function>.<name> is the argument's
-- index in ARGV: a function takes 'local at = ARG.<function>' and reads
-- a[at.<name>]. The Go side fills the same positions by name (args.go;
-- TestArgumentPositionsAgree checks that both sides agree). A table
-- costs one local of the chunk's 200, however many positions it names.
local ARG = {
  -- apply_batch.lua: then refresh k's record field is a[kinds + k], its
  -- sequence a[kinds + n + k] and its value a[kinds + 2n + k] (n is
  -- a[count]); then seven per other op.
  apply_batch = {instance = 3, ref = 4, count = 5, kinds = 6},
  bind_presence = {instance = 3, ref = 4, field = 5, seq = 6, value = 7},
  create_listing = {tenant = 3, owner = 4, idem = 5, request = 6, listing = 7, lease = 8, presence = 9,
    lease_key = 10, presence_field = 11, spec = 12, doc = 13, players = 14, max_players = 15, protocol = 16,
    public = 17, region = 18, attrs = 19},
  renew_lease = {tenant = 3, owner = 4, listing = 5, lease = 6, lease_key = 7, version = 8, players = 9,
    set_attrs = 10, attrs = 11},
  delete_listing = {tenant = 3, owner = 4, listing = 5, lease = 6, lease_key = 7},
  get_listing = {tenant = 3, listing = 4, joinable = 5, subject = 6},
  browse = {tenant = 3, protocol = 4, region = 5, after = 6, limit = 7, ids = 8},
  -- rdv_browse_sync and rdv_browse_snapshot (browse_mirror.go).
  browse_sync = {version = 3, max = 4},
  browse_snapshot = {after = 3, count = 4},
  create_attempt = {tenant = 3, client = 4, idem = 5, request = 6, listing = 7, protocol = 8, attempt = 9,
    handle = 10, presence = 11, host_key = 12, client_key = 13, relay_only = 14},
  -- quick_join.lua: then candidate k's listing is a[count + k], its
  -- presence handle a[count + n + k] and host key a[count + 2n + k] (n is
  -- a[count]). The names it shares with create_attempt are the same
  -- arguments (attemptCreate reads them by name).
  quick_join = {tenant = 3, client = 4, idem = 5, request = 6, protocol = 7, attempt = 8, handle = 9,
    client_key = 10, relay_only = 11, count = 12},
  bind_attempt = {handle = 3, role = 4, key = 5, binding = 6, instance = 7, relayed = 8},
  attempt_status = {tenant = 3, subject = 4, attempt = 5, handle = 6, revocation = 7},
  -- attempt_host, consume_introduction, introduction, mark_offered.
  by_handle = {handle = 3},
  presence_instance = {listing = 3},
  revoke_listing = {any_tenant = 3, tenant = 4, listing = 5},
  revoke_principal = {tenant = 3, subject = 4, ttl = 5},
  revoked = {tenant = 3, subject = 4},
  consume_replay = {ticket = 3, ttl = 4},
  tenant_usage = {tenant = 3},
  migrate_presence = {cursor = 3},
  instance_register = {instance = 3, addr = 4, lease = 5, drain = 6},
  instance_renew = {instance = 3, epoch = 4, lease = 5},
  -- rdv_instance_drain and rdv_instance_leave.
  instance = {instance = 3, epoch = 4},
}
