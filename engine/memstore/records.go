package memstore

import "github.com/rendezvous/rendezvous/engine"

// listingRec is a live listing. It holds no pointers (the immutable spec
// and document are in Store.docs), so the listing slab is not scanned by
// the GC. Its slot also carries its presence (1:1):
// the presence deadline lives in Store.presExp, the lease deadline in
// Store.leaseExp. Guarded by the commit lock.
//
// Layout: the record is exactly three cache lines (checked by a test), and
// the slab's backing array is page-aligned once it is large enough to
// matter, so the lines below are real cache lines. A heartbeat reads and
// writes only lines 0-1 (adjacent, so the second usually comes with the
// first); a browse item reads lines 0-1; a renewal adds line 2. At 250,000
// listings every record touched is a cache miss, so this is what keeps the
// per-op cost flat.
type listingRec struct {
	// Line 0: what a heartbeat checks and writes.
	presenceKey engine.Fingerprint
	// lastSeq is the last accepted presence sequence; it survives presence
	// expiry so an old datagram can never re-establish presence.
	lastSeq uint64
	pres    binding // the host's presence endpoints while fresh
	// Line 1: the rest of a heartbeat (flags, pending offers, the ID for
	// its view) and what browse and ownership checks read.
	fresh      bool     // presence is live (on presExp)
	public     bool     // spec.Visibility == Public
	pending    listHead // attempts whose host endpoint is unbound, oldest first (Store.pending)
	id         engine.ListingID
	attempts   listHead // every attempt of this listing (Store.byListing)
	tenant     int32    // tenants slot
	owner      int32    // subjects slot
	players    int32    // live current_players, 0..MaxPlayers
	maxPlayers int32    // spec.MaxPlayers
	proto      uint32   // spec.ProtocolVersion

	// Line 2: lease and the rest.
	leaseKey     engine.Fingerprint
	lease        engine.LeaseID
	version      uint64
	presence     engine.Handle
	browseAll    int32 // browse slot of (tenant, protocol), -1 if unlisted
	browseRegion int32 // browse slot of (tenant, protocol, region), -1 if unlisted
}

// attemptRec is a live join attempt, pointer-free. Its deadline lives in Store.attemptExp.
type attemptRec struct {
	id                 engine.AttemptID
	handle             engine.Handle
	listing            int32 // listings slot
	tenant             int32 // tenants slot
	client             int32 // subjects slot
	clientKey, hostKey engine.Fingerprint
	host, peer         binding
	consumed           bool
	// The relay fallback: relayed addresses (recorded like the bindings),
	// whether the relay introduction was consumed, the host was told, and
	// each side's outcome report.
	hostRelay, peerRelay endpoint
	relayOnly            bool
	relayConsumed        bool
	offered              bool
	hostOut, peerOut     engine.PunchOutcome
}

// listingDoc is the pointer-holding part of a listing, in a slice parallel
// to the listing slab: its immutable spec and caller document, and its live
// attributes (the slice its browse entry holds, replaced together): a page
// renders them from the entry it reads for the document, not from the
// browse entry, one cache miss fewer per item.
type listingDoc struct {
	spec  *engine.ListingSpec
	doc   []byte
	attrs engine.Attributes
}
