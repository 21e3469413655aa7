// Package engine is the rendezvous domain: IDs, listings, attempts,
// outcomes, quotas, capability derivation, the input checks every store
// makes, and the Store interface. It holds no store: engine/memstore is the
// atomic in-memory one, engine/redisstore the same store on Redis, and
// engine/storetest the contract suite both pass. The SDK (client) and the
// STUN codec import engine for IDs and capabilities without compiling
// either store.
//
// Where to find the parts:
//
//	id.go              UUIDs and the typed IDs (ListingID, LeaseID, Handle, ...)
//	input.go           InputError, Tenant, Subject, idempotency keys
//	listing.go         ListingSpec, visibility, trust mode and their checks
//	validate.go        every transition's input checks (Validate*), run by
//	                   each store before its commit
//	limits.go          pools, lifetimes, quotas (Limits) and their checks
//	outcome.go         Outcome, Pool, Result: the typed answers
//	store.go           the Store interface, its commands and views, Op
//	browse_item.go     BrowseItem and ItemBrowser, the lighter browse page
//	usage.go           TenantUsage
//	attempt_state.go   attempt states, reasons, outcome paths (the relay
//	                   fallback's types), derived from AttemptProgress
//	secret.go          capabilities, fingerprints, the Keyring that derives them
//	hmac.go            the allocation-free HMAC-SHA256 of the datagram path
//	clock.go           Clock: monotonic store time and wall time
package engine
