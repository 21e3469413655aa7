-- The browse change log, which lets every instance serve browse from a
-- local index (browse_mirror.go) with one small call per page. Every
-- change to what browse shows appends the listing's ID to the list 'bl'
-- in the call that makes it: a listing becoming visible (public, its
-- presence fresh) or hidden (its presence ending: expiry, deletion,
-- revocation, drain), and a visible listing's players or lease deadline
-- changing (a renewal). A presence refresh of a fresh presence changes
-- nothing browse shows and writes no entry. The sorted set 'bva' holds
-- every visible listing by ID (score 0, so in ID order): the snapshot an
-- instance rebuilds its index from.
--
-- The log's version is meta's 'blbase' (entries trimmed so far) plus the
-- list's length, so entry k (from 1) of the list is version blbase + k. The
-- list keeps at least BLOG_KEEP entries: once it holds twice that, the
-- older half goes in one LTRIM (amortised O(1) per entry). An instance
-- whose version is older than the oldest kept entry rebuilds.
--
-- A listing's 'kv' is the log's version after its last players change (a
-- renewal's; absent: none since its creation): a browse continuation in
-- an order by players skips listings whose key moved after the walk began
-- (engine.Browse.Since), on whichever instance it goes on.
local BLOG_KEEP = 8192

-- logVersion is the log's current version.
local function logVersion()
  return tonumber(call('HGET', P .. 'meta', 'blbase') or '0') + call('LLEN', P .. 'bl')
end

-- browseChanged logs a change of listing id; visible (true, false or nil
-- when it stays visible) moves it in or out of 'bva'.
local function browseChanged(id, visible)
  if visible == true then
    call('ZADD', P .. 'bva', 0, id)
  elseif visible == false then
    call('ZREM', P .. 'bva', id)
  end
  local n = call('RPUSH', P .. 'bl', id)
  if n >= 2 * BLOG_KEEP then
    call('LTRIM', P .. 'bl', n - BLOG_KEEP, -1)
    call('HINCRBY', P .. 'meta', 'blbase', n - BLOG_KEEP)
  end
end
