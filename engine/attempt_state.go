package engine

import (
	"net/netip"
	"time"
)

// AttemptState is where a join attempt is in its life, as
// GET /v1/join-attempts/{id} reports it. The live states are ordered: an
// attempt is in the furthest one it reached (so with both sides bound and
// no introduction yet it is ClientBound; AttemptStatus says which sides are
// bound). Expired and Failed are kept in a tombstone after the attempt
// record goes (TombstoneTTL).
type AttemptState uint8

const (
	AttemptCreated     AttemptState = iota + 1 // no OFFER sent and no presence answer named it yet
	AttemptOffered                             // the host was told (OFFER or a presence answer)
	AttemptHostBound                           // the host bound, the client not yet
	AttemptClientBound                         // the client bound (the host maybe too)
	AttemptIntroduced                          // INTRODUCE consumed
	AttemptRelayed                             // the relay introduction consumed
	AttemptExpired                             // its lifetime ended
	AttemptFailed                              // removed before its lifetime ended
	numAttemptStates
)

var attemptStateNames = [numAttemptStates]string{
	"", "created", "offered", "host_bound", "client_bound", "introduced", "relayed", "expired", "failed",
}

// String is the wire name.
func (s AttemptState) String() string { return nameOf(attemptStateNames[:], s) }

// nameOf is names[v], or "unknown" past the end.
func nameOf[T ~uint8](names []string, v T) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "unknown"
}

// AttemptReason says why an attempt is in its state: what a live attempt
// waits for or has reached, or why a failed one was removed. An expired
// attempt keeps the reason it had when its lifetime ended, so a stuck join
// tells what it was waiting for.
type AttemptReason uint8

const (
	ReasonAwaitingOffer           AttemptReason = iota + 1 // the host has not been told (no fresh presence)
	ReasonAwaitingHostBind                                 // the host has not bound
	ReasonAwaitingClientBind                               // the client has not bound
	ReasonAwaitingIntroduction                             // both bound; ConsumeIntroduction not called yet
	ReasonAwaitingRelayCandidates                          // a relayed address (one side's or both) is missing
	ReasonIntroduced                                       // INTRODUCE consumed
	ReasonRelayed                                          // the relay introduction consumed
	ReasonListingRemoved                                   // the listing was deleted
	ReasonLeaseExpired                                     // the listing's lease ended
	ReasonRevoked                                          // the listing or a principal was revoked
	ReasonDrained                                          // the drain window ended
	numAttemptReasons
)

var attemptReasonNames = [numAttemptReasons]string{
	"", "awaiting_offer", "awaiting_host_bind", "awaiting_client_bind", "awaiting_introduction",
	"awaiting_relay_candidates", "introduced", "relayed", "listing_removed", "lease_expired", "revoked", "drained",
}

// String is the wire code.
func (r AttemptReason) String() string { return nameOf(attemptReasonNames[:], r) }

// AttemptEnd is why an attempt record went: EndExpired when its lifetime
// ended (state expired), else the cause of its early removal (state
// failed).
type AttemptEnd uint8

const (
	EndExpired AttemptEnd = iota + 1
	EndListingRemoved
	EndLeaseExpired
	EndRevoked
	EndDrained
	numAttemptEnds
)

// Valid reports whether e is one of the ends above.
func (e AttemptEnd) Valid() bool { return e >= EndExpired && e < numAttemptEnds }

// TombstoneTTL is how long an ended attempt's status stays readable. Each
// tenant's tombstones are bounded by the attempts ceiling (the tenant's own
// oldest goes first when it is full, never another tenant's) and count
// against no pool or quota (docs/contracts/semantics.md#lifetimes).
const TombstoneTTL = 10 * time.Minute

// AttemptProgress is what happened to an attempt so far: the facts its state
// and reason derive from (AttemptStatus of both stores derives them here,
// so they agree).
type AttemptProgress struct {
	RelayOnly                  bool
	Offered                    bool
	HostBound, ClientBound     bool
	HostRelayed, ClientRelayed bool // the side's relayed address is recorded
	Introduced                 bool // INTRODUCE consumed
	Relayed                    bool // the relay introduction consumed
}

// Live is the state and reason of a live attempt.
func (p AttemptProgress) Live() (AttemptState, AttemptReason) {
	relayWait := p.HostRelayed || p.ClientRelayed
	switch {
	case p.Relayed:
		return AttemptRelayed, ReasonRelayed
	case p.Introduced && relayWait:
		return AttemptIntroduced, ReasonAwaitingRelayCandidates
	case p.Introduced:
		return AttemptIntroduced, ReasonIntroduced
	case p.HostBound && p.ClientBound && (p.RelayOnly || relayWait):
		return AttemptClientBound, ReasonAwaitingRelayCandidates
	case p.HostBound && p.ClientBound:
		return AttemptClientBound, ReasonAwaitingIntroduction
	case p.ClientBound:
		return AttemptClientBound, ReasonAwaitingHostBind
	case p.HostBound:
		return AttemptHostBound, ReasonAwaitingClientBind
	case p.Offered:
		return AttemptOffered, ReasonAwaitingHostBind
	}
	return AttemptCreated, ReasonAwaitingOffer
}

// Ended is the state and reason of an attempt that went for end.
func (p AttemptProgress) Ended(end AttemptEnd) (AttemptState, AttemptReason) {
	switch end {
	case EndListingRemoved:
		return AttemptFailed, ReasonListingRemoved
	case EndLeaseExpired:
		return AttemptFailed, ReasonLeaseExpired
	case EndRevoked:
		return AttemptFailed, ReasonRevoked
	case EndDrained:
		return AttemptFailed, ReasonDrained
	}
	_, r := p.Live()
	return AttemptExpired, r
}

// Path is how a peer's connection ended, as it reports it.
type Path uint8

const (
	PathDirect  Path = iota + 1 // hole-punched
	PathRelayed                 // through the TURN relay
	PathFailed                  // gave up
	numPaths
)

var pathNames = [numPaths]string{"", "direct", "relayed", "failed"}

// String is the wire and metric label name.
func (p Path) String() string { return nameOf(pathNames[:], p) }

// Valid reports whether p is one of the paths above (0, not reported, is
// not).
func (p Path) Valid() bool { return p >= PathDirect && p < numPaths }

// PunchOutcome is one side's reported outcome; Path 0 means not reported.
type PunchOutcome struct {
	Path          Path
	ConnectMillis uint32 // from join to connected, or to giving up
}

// Reported reports whether the side sent its outcome.
func (o PunchOutcome) Reported() bool { return o.Path != 0 }

// GetAttempt asks for an attempt's status on behalf of Subject of Tenant,
// by its ID or, when Attempt is zero, by its handle (the host knows only
// the handle). By handle only a live attempt is found: an ended one is
// NotFound.
type GetAttempt struct {
	Tenant  Tenant
	Subject Subject
	Attempt AttemptID
	Handle  Handle
}

// AttemptStatus is an attempt's state, live or from its tombstone.
type AttemptStatus struct {
	Attempt   AttemptID
	Listing   ListingID
	State     AttemptState
	Reason    AttemptReason
	RelayOnly bool
	// ExpiresAt is when the attempt's lifetime ends or ended (wall,
	// informational); a failed attempt keeps the deadline it had.
	ExpiresAt                  time.Time
	HostBound, ClientBound     bool
	HostRelayed, ClientRelayed bool
	HostOutcome, ClientOutcome PunchOutcome
}

// PunchReport is one side's authenticated outcome report (OpOutcome).
type PunchReport struct {
	Handle        Handle
	Role          Role
	Key           Fingerprint
	Path          Path
	ConnectMillis uint32
}

// RelayIntroduction is what each side learns of the other on a relayed
// path: only the relayed transport addresses, never a public or LAN one.
type RelayIntroduction struct {
	Attempt AttemptID
	Handle  Handle
	Host    netip.AddrPort // the host's relayed address (sent to the client)
	Client  netip.AddrPort // the client's relayed address (sent to the host)
}

// UnsupportedError is returned by a store without a feature (the reference
// baseline has no relay): the call changed nothing.
type UnsupportedError struct{ Feature string }

func (e *UnsupportedError) Error() string { return "store does not support " + e.Feature }
