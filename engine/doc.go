// Package engine is the rendezvous domain: IDs, listings, attempts,
// outcomes, quotas, capability derivation, the Store interface and its
// in-memory implementation, MemStore.
//
// Where to find the parts of MemStore:
//
//	memstore.go        the type, constructor, lock-free flags
//	commit.go          the commit lock (begin/end), cleanup, clearActive
//	expiry.go, heap.go the expiry schedules: an ordered intrusive list per
//	                   constant-lifetime pool, a heap for revocations and replay
//	list.go, slab.go   intrusive lists and pooled record slabs
//	index.go           seeded hashing, sharded hash indexes (caller-chosen keys)
//	uuid_index.go      the open-addressing UUID -> slot table (store-made IDs)
//	ordered.go         the chunked sorted set behind browse
//	browse_index.go    per-(tenant, protocol[, region]) visible-listing indexes
//	subjects.go, tenants.go, idempotency.go, replay.go   keyed records
//	records.go, endpoint.go   pointer-free listing and attempt records
//	                   (listingRec is laid out by cache line)
//	listing_doc.go     a listing's spec and document packed into one buffer
//	browse.go          BrowseVisible and the lighter BrowseItems (ItemBrowser)
//	listing_create.go, listing_ops.go, presence_ops.go,
//	attempt_create.go, attempt_ops.go, revoke.go, drain.go, batch.go
//	                   the transitions, one concern per file
//	remove.go          cascading removal (listing -> presence, attempts)
//	attempt_state.go   attempt states, reasons, outcome paths (the relay fallback's types)
//	relay_ops.go       relay introduction, outcome reports, MarkOffered, AttemptStatus
//	tombstone.go       ended attempts' status, bounded and expiring like every pool
//	views.go           rendering views for callers
//	invariants*.go, snapshot.go   Inspector, for tests
package engine
