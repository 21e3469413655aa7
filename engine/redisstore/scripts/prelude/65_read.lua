-- A read's start: a read answers what a writing call at the same instant
-- would, without running a writing call's cleanup (a look at eight
-- deadline sets) on every call when nothing it could see is due.

-- dueIn reports whether deadline set z holds a member due now.
local function dueIn(z)
  return #call('ZRANGEBYSCORE', P .. z, '-inf', I(NOW), 'LIMIT', '0', '1') > 0
end

-- beginRead starts a read of an attempt (and of the listing it belongs
-- to): the call's context and the promotion check as begin's; cleanup,
-- with the clock moved to now, only when an attempt or a listing is due or
-- the drain has ended, the only removals that change such a read's answer
-- (a read of a tombstone checks that tombstone's own deadline).
local function beginRead(keys, args)
  setup(keys, args, false)
  followPrimary()
  if (META.draining and NOW >= META.drain_dl) or dueIn('aexp') or dueIn('lexp') then
    call('HSET', P .. 'meta', 'clock', I(NOW))
    cleanup(false)
  end
end
