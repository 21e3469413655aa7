-- Revocations in the browse change log, so an instance checks a caller's
-- revocation against its own copy, brought forward by the page's one call
-- (browse_revocations.go). revoke (prelude/50_removal.lua) logs the
-- revocation's member ('g\0<subject>' or 't\0<tenant>\0<subject>': never
-- a listing ID, whose second byte is a hex digit) when it inserts or
-- re-times it. Expiry is not logged: the instance compares each deadline
-- with the time of the call it synced at.

-- revocationItem is revocation member rev as an instance holds it:
-- {member, deadline}, the deadline '0' when it is gone.
local function revocationItem(rev)
  return {rev, call('ZSCORE', P .. 'vexp', rev) or '0'}
end

-- syncItem is a log entry's item: a revocation's or a listing's
-- (browseItem).
local function syncItem(entry)
  if byte(entry, 2) == 0 then return revocationItem(entry) end
  return browseItem(entry)
end
