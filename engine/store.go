package engine

import (
	"context"
	"net/netip"
	"time"
)

// Store is the atomic boundary for directory, lease, presence, attempt,
// endpoint, replay, revocation and drain transitions
// (docs/contracts/semantics.md#all-or-nothing). Every transition is
// all-or-nothing and returns a typed Result.
//
// Errors: a transition returns a non-nil error only for invalid input
// (*InputError), a cancelled context (ctx.Err()) or, from a store without
// the relay features (the reference baseline), *UnsupportedError; in every
// case it changed nothing. Cancellation is checked before taking the commit
// lock and again after acquiring it.
//
// All methods are safe for concurrent use. Views are values: they never alias
// mutable store state (ListingView.Spec points at the immutable spec).
type Store interface {
	InstanceID() UUID
	Available() bool
	Draining() bool
	// MarkUnavailable makes every later transition ServiceUnavailable and
	// erases active state (fail closed).
	MarkUnavailable()
	// BeginDrain is idempotent: new registrations, attempts and lease
	// extensions are refused at once; existing attempts may bind and consume
	// their introduction until the drain window ends, when all active state
	// is cleared atomically.
	BeginDrain(ctx context.Context) error
	Stats() Stats
	// TenantUsage reports one tenant's live listings, attempts and
	// idempotency records with the quota each is held to (after cleanup).
	TenantUsage(t Tenant) TenantUsage
	// Revoked reports whether subject has a live global revocation.
	Revoked(ctx context.Context, subject Subject) (bool, error)
	// RevokedInTenant reports whether subject may do no new work in tenant:
	// it has a live global revocation or one confined to tenant.
	RevokedInTenant(ctx context.Context, tenant Tenant, subject Subject) (bool, error)

	CreateListing(ctx context.Context, cmd CreateListing) (ListingView, Result, error)
	RenewLease(ctx context.Context, cmd RenewLease) (ListingView, Result, error)
	DeleteListing(ctx context.Context, cmd DeleteListing) (Result, error)
	GetListing(ctx context.Context, q GetListing) (ListingView, Result, error)
	// BrowseVisible appends to dst the public listings of q.Tenant and
	// q.ProtocolVersion (and q.Region if set) whose lease and presence are
	// both fresh, in ascending ID order after q.After, at most q.Limit. more
	// reports whether at least one further match exists.
	BrowseVisible(ctx context.Context, q Browse, dst []ListingView) (items []ListingView, more bool, r Result, err error)

	BindHostPresence(ctx context.Context, cmd BindPresence) (PresenceView, Result, error)
	CreateJoinAttempt(ctx context.Context, cmd CreateAttempt) (AttemptView, Result, error)
	// BindAttemptEndpoint looks the attempt up and checks cmd.Key under the
	// commit lock. A host key derives from the attempt's listing's presence
	// handle (see AttemptHost), so for RoleHost, NotFound (and
	// ServiceUnavailable, which erased every attempt, unless the result is
	// Unreachable) tells the transport that the key it verified derives from
	// nothing at the commit instant: it answers as to an unverifiable request.
	BindAttemptEndpoint(ctx context.Context, cmd BindAttempt) (AttemptView, Result, error)
	// ConsumeIntroduction consumes an attempt's introduction once: Success the
	// first time both endpoints are bound, ReplayRejected after, Conflict
	// while an endpoint is missing.
	ConsumeIntroduction(ctx context.Context, h Handle) (Introduction, Result, error)
	// Introduction reads back an already consumed introduction (for
	// idempotent re-sends); Conflict if it has not been consumed.
	//
	// For a relay-only attempt the introduction is never consumed: both
	// answer Conflict ("no introduction"), whatever is bound; only the relay
	// introduction (OpBindAttempt with Relayed) is.
	Introduction(ctx context.Context, h Handle) (Introduction, Result, error)
	// MarkOffered records that the host was told of attempt h: an OFFER was
	// sent, or a presence answer named it (the mediator calls it for both).
	// Success, with Replay when it was already marked; NotFound for an
	// unknown handle. It moves the state from created to offered only.
	MarkOffered(ctx context.Context, h Handle) (Result, error)
	// AttemptStatus answers an attempt's state, live or from its tombstone,
	// to the subject that created it or the owner of its listing, both of
	// q.Tenant; anyone else, and an unknown attempt, get NotFound.
	AttemptStatus(ctx context.Context, q GetAttempt) (AttemptStatus, Result, error)
	// AttemptHost returns the presence handle of the listing an attempt
	// belongs to, so the mediator can derive the host's attempt capability
	// before verifying a datagram. A read: it takes no commit lock, and runs
	// no cleanup, so it must itself treat an attempt, lease or drain window
	// past its deadline as gone. The bind's commit re-checks (above).
	AttemptHost(h Handle) (presence Handle, ok bool)
	ConsumeReplay(ctx context.Context, cmd ConsumeReplay) (Result, error)

	RevokeListing(ctx context.Context, cmd RevokeListing) (Result, error)
	// RevokePrincipal inserts a revocation (ttl 1s..600s) and removes every
	// listing the subject owns and attempt it created, in one transition.
	RevokePrincipal(ctx context.Context, subject Subject, ttl time.Duration) (removed int, r Result, err error)
	// RevokeTenantPrincipal is RevokePrincipal confined to tenant: the
	// revocation blocks subject's new work in tenant only, and only the
	// listings it owns and attempts it created in tenant are removed (and
	// counted). Both kinds share the revocation pool.
	RevokeTenantPrincipal(ctx context.Context, tenant Tenant, subject Subject, ttl time.Duration) (removed int, r Result, err error)

	// ApplyBatch commits independent UDP-side transitions under one
	// acquisition of the commit lock; each op gets its own result.
	ApplyBatch(ctx context.Context, ops []Op) error
}

// CreateListing registers a listing. The store generates the listing ID,
// lease ID and presence handle; the request fingerprint is Spec.Hash().
type CreateListing struct {
	Tenant         Tenant
	Owner          Subject
	IdempotencyKey string
	Spec           ListingSpec
	// Doc is an opaque immutable document the caller attaches (the HTTP layer
	// stores the pre-encoded JSON of the immutable fields); returned verbatim.
	Doc []byte
}

// RenewLease is a compare-and-swap on Version. CurrentPlayers < 0 leaves the
// count unchanged.
type RenewLease struct {
	Tenant          Tenant
	Owner           Subject
	Listing         ListingID
	Lease           LeaseID
	LeaseKey        Fingerprint
	ExpectedVersion uint64
	CurrentPlayers  int
	// SetAttributes replaces the listing's indexed attributes with
	// Attributes (nil or empty: none); without it they stay.
	SetAttributes bool
	Attributes    Attributes
}

type DeleteListing struct {
	Tenant   Tenant
	Owner    Subject
	Listing  ListingID
	Lease    LeaseID
	LeaseKey Fingerprint
}

// GetListing finds a listing of Tenant. With Joinable, only a listing whose
// lease and presence are both fresh is found.
type GetListing struct {
	Tenant   Tenant
	Listing  ListingID
	Joinable bool
}

type Browse struct {
	Tenant          Tenant
	ProtocolVersion uint32
	Region          string // empty: any region
	Limit           int    // 1..BrowsePageMax
	Filter          BrowseFilter
	// Order and Desc choose the walk: ascending (Desc false) or descending
	// OrderKey, ties by listing ID in the same direction.
	Order Order
	Desc  bool
	// HasAfter continues a walk after (AfterKey, After) in its order
	// (AfterKey is 0 in OrderID). Since is the walk's change version
	// (BrowseNext.Since; 0 on the first page): in a Mutable order a
	// continuation skips listings whose key changed after it, so under
	// churn no listing comes twice.
	After    ListingID
	AfterKey int64
	Since    uint64
	HasAfter bool
}

// ListingView is a snapshot of a listing.
type ListingView struct {
	ID       ListingID
	Lease    LeaseID
	Presence Handle
	Tenant   Tenant
	Owner    Subject
	Spec     *ListingSpec // immutable, shared
	Doc      []byte       // immutable, shared
	// CurrentPlayers is the live count (renew may change it).
	CurrentPlayers int
	// Attributes are the live indexed attributes (renew may replace them).
	Attributes     Attributes
	Version        uint64
	LeaseExpiresAt time.Time // wall time, informational only
	LeaseTTL       time.Duration
	PresenceFresh  bool
	HostPublic     netip.AddrPort // valid while PresenceFresh
	HostLocal      netip.AddrPort
	// PresenceInstance is the instance (Store.InstanceID) the host's last
	// accepted presence refresh reached, so the API can name that
	// instance's mediator without asking the store again. Zero on a store
	// that serves one instance only (the in-memory store) and before the
	// first refresh.
	PresenceInstance UUID
}

// Role of a peer in a join attempt.
type Role uint8

const (
	RoleHost Role = iota + 1
	RoleClient
)

// BindPresence is the host's authenticated heartbeat: a whole-endpoint
// replacement, accepted only with Seq strictly greater than the last
// accepted one for the handle (which survives presence expiry).
type BindPresence struct {
	Handle Handle
	Key    Fingerprint
	Seq    uint64
	Public netip.AddrPort
	Local  netip.AddrPort // zero if the host sent none
}

// PresenceView answers a presence refresh.
type PresenceView struct {
	Listing ListingID
	TTL     time.Duration // presence lifetime left
	// Pending names up to PendingOffersMax attempts on this listing whose
	// host endpoint is not bound yet, oldest first.
	Pending  [PendingOffersMax]Handle
	NPending int
}

type CreateAttempt struct {
	Tenant          Tenant
	Client          Subject
	IdempotencyKey  string
	Listing         ListingID
	ProtocolVersion uint32
	// RelayOnly asks that neither side learn the other's public or LAN
	// address: only the relay introduction is ever consumed. The attempt is
	// relay-only also when the listing has RelayOnlyJoins. Part of the
	// request fingerprint.
	RelayOnly bool
}

type BindAttempt struct {
	Handle Handle
	Role   Role
	Key    Fingerprint
	Public netip.AddrPort
	Local  netip.AddrPort
	// Relayed is the side's relayed transport address on its TURN server,
	// or zero. It is recorded separately from the endpoint, by the same
	// rule: the first wins, the identical one again is a Replay, another is
	// ReplayRejected (and a bind without it says nothing about it).
	Relayed netip.AddrPort
}

// Binding is one peer's observed endpoints.
type Binding struct {
	Public netip.AddrPort
	Local  netip.AddrPort // zero if unknown
}

func (b Binding) Bound() bool { return b.Public.IsValid() }

type AttemptView struct {
	ID        AttemptID
	Handle    Handle
	Listing   ListingID
	Tenant    Tenant
	Client    Subject
	ExpiresAt time.Time // wall, informational
	TTL       time.Duration
	// HostPresence is the listing's presence handle and HostPresencePublic
	// its current endpoint: where the OFFER goes.
	HostPresence       Handle
	HostPresencePublic netip.AddrPort
	Host, Peer         Binding // Peer is the client's binding
	Consumed           bool
	// Which instance of a deployment sharing one store received the host's
	// latest presence refresh and each side's first bind: pushed datagrams
	// (OFFER, INTRODUCE) must leave from that instance's socket, the one the
	// peer's NAT mapping points at. Zero when the store serves one instance
	// only (the in-memory store) or the side is not bound.
	HostPresenceInstance, HostInstance, PeerInstance UUID
	// RelayOnly: the attempt never consumes the (direct) introduction.
	RelayOnly bool
	// HostRelayed and PeerRelayed are the sides' relayed addresses, zero
	// until recorded; RelayConsumed is set once the relay introduction is.
	HostRelayed, PeerRelayed netip.AddrPort
	RelayConsumed            bool
}

// Introduction is what each side learns of the other.
type Introduction struct {
	Attempt AttemptID
	Handle  Handle
	Host    Binding
	Client  Binding
}

// ConsumeReplay consumes a one-time ticket (Namespace 1-64 bytes, Key 1-128
// bytes). Lifetime 0 means the configured replay lifetime.
type ConsumeReplay struct {
	Namespace, Key string
	Lifetime       time.Duration
}

// RevokeListing removes one listing. AnyTenant is for a global operator;
// otherwise a listing of another tenant is NotFound.
type RevokeListing struct {
	Tenant    Tenant
	AnyTenant bool
	Listing   ListingID
}

// OpKind selects a batched UDP-side transition.
type OpKind uint8

const (
	// OpPresence: BindHostPresence. Fills Presence.
	OpPresence OpKind = iota + 1
	// OpBindAttempt: BindAttemptEndpoint, then, if both endpoints are bound
	// and the attempt is not relay-only, the introduction: consumed now
	// (FirstIntro) or read back (an idempotent retransmission). Fills Attempt
	// and, when IntroReady, Intro. Then, if both relayed addresses are
	// recorded, the relay introduction likewise: consumed once (FirstRelay)
	// or read back; fills RelayIntro when RelayReady. (Only ApplyBatch
	// consumes the relay introduction; BindAttemptEndpoint records Relayed.)
	OpBindAttempt
	// OpOutcome: a side's punch outcome report (Report), checked like a bind
	// (handle, role, key). Recorded once per side: a repeat is Success with
	// Duplicate set and keeps the first. It never changes the attempt's
	// state. Fills Tenant (for metric labels) and Attempt on Success.
	OpOutcome
)

// Op is one batched transition: inputs first, then what the store fills in.
type Op struct {
	Kind     OpKind
	Presence BindPresence // OpPresence
	Bind     BindAttempt  // OpBindAttempt
	Report   PunchReport  // OpOutcome

	Result       Result
	Err          error // *InputError for invalid input; nothing changed
	PresenceView PresenceView
	Attempt      AttemptView
	Intro        Introduction
	IntroReady   bool
	FirstIntro   bool
	RelayIntro   RelayIntroduction
	RelayReady   bool
	FirstRelay   bool
	Duplicate    bool   // OpOutcome: this side had reported before
	Tenant       Tenant // OpOutcome: the attempt's tenant
}

// HostResolver is implemented by a store whose AttemptHost can fail because
// the store did not answer (a shared store whose server is unreachable), not
// only because the attempt is gone. The mediator then cannot tell a host's
// forged or stale attempt datagram from a genuine one, and answers nothing
// rather than an unsigned 401 that would tell the host its attempt is gone.
type HostResolver interface {
	// ResolveAttemptHost is AttemptHost; reached is false when the store did
	// not answer, and ok=false then says nothing about the attempt.
	ResolveAttemptHost(h Handle) (presence Handle, ok, reached bool)
}

// PoolStat is one pool's occupancy.
type PoolStat struct{ Used, Ceiling int }

type Stats struct {
	InstanceID UUID
	Available  bool
	Draining   bool
	// Pools is indexed by Pool-1 for PoolListings..PoolIdempotency.
	Pools [NumGlobalPools]PoolStat
	// InFlight counts attempts with neither introduction consumed yet.
	InFlight int
}

// Inspector is implemented by stores that tests can look inside.
type Inspector interface {
	// CheckInvariants verifies that every index agrees with the primary
	// records, counts match, and nothing past its deadline is observable.
	CheckInvariants() error
	// Snapshot renders the whole state deterministically (no secrets), so a
	// test can assert that a rejected transition changed nothing.
	Snapshot() string
}
