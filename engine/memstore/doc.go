// Package memstore is the atomic in-memory engine.Store (MemStore in the
// docs and in other packages' comments): the default store of a single
// instance, and the one the benchmarks measure. It passes the contract
// suite (engine/storetest), as engine/redisstore does.
//
// Where to find the parts:
//
//	memstore.go        the type, constructor, lock-free flags
//	commit.go          the commit lock (begin/end), cleanup, clearActive
//	deadline.go        maxDuration, the deadline after every other
//	expiry.go, heap.go the expiry schedules: an ordered intrusive list per
//	                   constant-lifetime pool, a heap for revocations and replay
//	list.go, slab.go   intrusive lists and pooled record slabs
//	index.go           seeded hashing, sharded hash indexes (caller-chosen keys)
//	packed.go          composite caller-chosen keys packed into one string
//	uuid_index.go      the open-addressing UUID -> slot table (store-made IDs)
//	ordered.go         the chunked (key, ID) sorted set behind browse
//	browse_walk.go     BrowseScope: one scope's browse indexes (by ID, players,
//	                   free slots, creation, string attribute value) and the
//	                   walk (planner, filters, bound, continuation), exported
//	                   for engine/redisstore's local index
//	browse_index.go    per-(tenant, protocol[, region]) scopes of a store
//	subjects.go, tenants.go, idempotency.go, replay.go   keyed records
//	tenant_revoke.go   revocations confined to one tenant
//	records.go, endpoint.go   pointer-free listing and attempt records
//	                   (listingRec is laid out by cache line)
//	listing_doc.go     a listing's spec and document packed into one buffer
//	browse.go          BrowseVisible and the lighter BrowseItems (engine.ItemBrowser)
//	quick_join.go      QuickJoin (engine.QuickJoiner): the walk, then a join
//	listing_create.go, listing_ops.go, presence_ops.go,
//	attempt_create.go, attempt_ops.go, revoke.go, drain.go, batch.go
//	                   the transitions, one concern per file
//	quotas.go, tenant_usage.go   quotas at admission, a tenant's usage
//	remove.go          cascading removal (listing -> presence, attempts)
//	relay_ops.go       relay introduction, outcome reports, MarkOffered, AttemptStatus
//	tombstone.go       ended attempts' status, bounded and expiring like every pool
//	views.go           rendering views for callers
//	invariants*.go, snapshot.go   engine.Inspector, for tests
package memstore
