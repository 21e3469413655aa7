package engine

// listingRec is a live listing. It holds no pointers (the immutable spec
// and document are in MemStore.docs), so the listing slab is not scanned by
// the GC. Its slot also carries its presence (1:1):
// the presence deadline lives in MemStore.presExp, the lease deadline in
// MemStore.leaseExp. Guarded by the commit lock.
type listingRec struct {
	// Fields a presence refresh touches come first, so a heartbeat reads
	// as few cache lines as possible.
	presenceKey Fingerprint
	// lastSeq is the last accepted presence sequence; it survives presence
	// expiry so an old datagram can never re-establish presence.
	lastSeq uint64
	fresh   bool     // presence is live (on presExp)
	public  bool     // spec.Visibility == Public
	pres    binding  // the host's presence endpoints while fresh
	pending listHead // attempts whose host endpoint is unbound, oldest first (MemStore.pending)
	id      ListingID

	// Lease and ownership.
	leaseKey   Fingerprint
	lease      LeaseID
	version    uint64
	players    int
	maxPlayers int   // spec.MaxPlayers
	tenant     int32 // tenants slot
	owner      int32 // subjects slot

	presence     Handle
	proto        uint32   // spec.ProtocolVersion
	browseAll    int32    // browse slot of (tenant, protocol), -1 if unlisted
	browseRegion int32    // browse slot of (tenant, protocol, region), -1 if unlisted
	attempts     listHead // every attempt of this listing (MemStore.byListing)
}

// attemptRec is a live join attempt, pointer-free. Its deadline lives in MemStore.attemptExp.
type attemptRec struct {
	id                 AttemptID
	handle             Handle
	listing            int32 // listings slot
	tenant             int32 // tenants slot
	client             int32 // subjects slot
	clientKey, hostKey Fingerprint
	host, peer         binding
	consumed           bool
}

// listingDoc is the pointer-holding part of a listing, in a slice parallel
// to the listing slab: its immutable spec and caller document.
type listingDoc struct {
	spec *ListingSpec
	doc  []byte
}
