package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// PublisherConfig configures Publish.
type PublisherConfig struct {
	API  *API
	Spec ListingSpec
	// Conn is the socket for mediator traffic and the punched paths. Nil
	// opens one on ListenAddr; the Publisher then owns and closes it.
	Conn       PacketConn
	ListenAddr string // default "0.0.0.0:0"
	// LocalAddr overrides the LAN endpoint reported as RDV-LOCAL-ADDRESS
	// (default: discovered from the socket and the route to the mediator).
	LocalAddr netip.AddrPort
	// IdempotencyKey for the creation (default: generated). Reused on every
	// retry of the creation.
	IdempotencyKey string
	// Logger receives operational events (never secrets). Default: discard.
	Logger *slog.Logger
	// OnEvent, if set, is told of each Event (the server unreachable, the
	// listing lost, a drain, each republish try, the stop). Calls are
	// serialised and made from the Publisher's own goroutines: OnEvent must
	// return quickly and must not call Close, which waits for them.
	OnEvent func(Event)
	// Republish shapes the waits before each try to publish again after
	// the listing was lost: exponential from Min to Max with jitter, so a
	// fleet of hosts does not return all at once. A zero Min is 1 s, a zero
	// Max 30 s (or Min, if larger); Attempts 0 means unbounded tries (until
	// Close), Attempts > 0 bounds the tries after one loss, after which the
	// Publisher stops with the last error.
	Republish Backoff
	// NoRepublish stops the Publisher at the first loss (Err says why)
	// instead of publishing again.
	NoRepublish bool
}

// defaultRepublish is PublisherConfig.Republish's zero value.
var defaultRepublish = Backoff{Min: time.Second, Max: 30 * time.Second}

// Publisher keeps one listing alive: its lease (renewed by compare-and-swap
// before expiry, resynchronised on 409) and its presence (a signed UDP
// heartbeat with a rising sequence). It answers OFFERs (pushed or pending) by
// binding with the derived host attempt capability and hands each INTRODUCE to
// Accept. When the listing is lost (lease or presence gone, the server
// drained or restarted) it publishes the same spec again on the same socket,
// with backoff, and reports each step to OnEvent; it stops for good only when
// retrying cannot help (the principal is revoked or no longer accepted, the
// spec is refused) or on Close. All methods are safe for concurrent use.
type Publisher struct {
	api         *API
	sock        *Socket
	ownConn     bool
	log         *slog.Logger
	spec        ListingSpec
	local       netip.AddrPort // RDV-LOCAL-ADDRESS
	onEvent     func(Event)
	evMu        sync.Mutex // serialises onEvent
	republish   Backoff
	noRepublish bool

	mu      sync.Mutex
	created CreatedListing // the current listing (replaced on republish)
	lease   Lease
	players int // -1: unchanged
	// attrs replace the listing's attributes with every renewal once
	// SetAttributes set them (setAttrs).
	attrs    Attributes
	setAttrs bool
	public   netip.AddrPort

	accepted chan Introduction
	done     chan struct{} // closed when the loops stop
	stop     context.CancelFunc
	errv     atomic.Pointer[error]
	closed   sync.Once
	binds    sync.WaitGroup
}

const (
	acceptBacklog  = 16
	maxHostBinds   = 16   // concurrent attempt binds on the host
	maxSeenOffers  = 1024 // offers remembered (for an attempt lifetime) to bind each once
	presenceTries  = 3
	presenceRTO    = 500 * time.Millisecond
	renewFraction  = 2 // renew when 1/renewFraction of the lease TTL has passed
	maxRenewResync = 3
)

// Publish creates the listing, sends the first presence refresh (so the
// listing is browsable when Publish returns) and starts the lease and
// presence loops. Call Close to delete the listing.
func Publish(ctx context.Context, cfg PublisherConfig) (*Publisher, error) {
	if cfg.API == nil {
		return nil, &ConfigError{Field: "API", Reason: "required"}
	}
	if err := cfg.Spec.Validate(); err != nil {
		return nil, err
	}
	key := cfg.IdempotencyKey
	if key == "" {
		key = NewIdempotencyKey()
	}
	created, err := cfg.API.CreateListing(ctx, key, cfg.Spec)
	if err != nil {
		return nil, err
	}
	p := &Publisher{api: cfg.API, log: cfg.Logger, spec: cfg.Spec, onEvent: cfg.OnEvent, republish: cfg.Republish,
		noRepublish: cfg.NoRepublish, created: *created, lease: created.Lease, players: -1,
		accepted: make(chan Introduction, acceptBacklog), done: make(chan struct{})}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.republish.Min <= 0 {
		p.republish.Min = defaultRepublish.Min
	}
	if p.republish.Max <= 0 {
		p.republish.Max = max(defaultRepublish.Max, p.republish.Min)
	}
	fail := func(err error) (*Publisher, error) {
		// The creation succeeded; undo it so a failed Publish leaves nothing behind.
		p.deleteBestEffort(ctx, created.ListingID, &created.Lease)
		return nil, err
	}
	med, err := resolveMediator(created.Presence.Mediator)
	if err != nil {
		return fail(err)
	}
	conn, own, err := openConn(cfg.Conn, cfg.ListenAddr)
	if err != nil {
		return fail(err)
	}
	p.ownConn = own
	p.sock = NewSocket(conn, med)
	p.local = cfg.LocalAddr
	if !p.local.IsValid() {
		p.local = localEndpoint(conn, med)
	}
	ps, err := p.startPresence(ctx, created)
	if err != nil {
		p.sock.closeIf(p.ownConn)
		return fail(fmt.Errorf("first presence refresh: %w", err))
	}
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p.stop = stop
	go p.run(lctx, ps)
	return p, nil
}

// startPresence makes created the current listing once its first presence
// refresh is answered, so it is browsable from then on.
func (p *Publisher) startPresence(ctx context.Context, created *CreatedListing) (*presenceState, error) {
	ps := &presenceState{handle: created.Presence.Handle.engine(), key: *created.Presence.Token.engine(), local: p.local}
	p.sock.setPresence(ps.handle, ps.key)
	a, err := p.sock.refresh(ctx, ps, presenceTries, presenceRTO)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.created, p.lease, p.public = *created, created.Lease, a.mapped
	p.mu.Unlock()
	return ps, nil
}

// deleteBestEffort deletes a listing the Publisher gives up (a failed
// Publish, a lost listing that may linger); failures change nothing worth
// reporting: the lease runs out on its own.
func (p *Publisher) deleteBestEffort(ctx context.Context, id ListingID, lease *Lease) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = p.api.DeleteListing(dctx, id, lease)
}

func resolveMediator(s string) (netip.AddrPort, error) {
	ua, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, &ProtocolError{Op: "create listing", Reason: "mediator address unusable: " + err.Error()}
	}
	return unmapAP(ua.AddrPort()), nil
}

// closeIf closes the Socket and its socket if own, else releases the
// caller's socket (stops reading it, leaves it open).
func (s *Socket) closeIf(own bool) {
	if own {
		s.Close() // nothing useful to do with a close error of a socket we give up
		return
	}
	s.release()
}

// ListingID names the current listing. It changes when the Publisher
// publishes again (EventRepublished).
func (p *Publisher) ListingID() ListingID {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.created.ListingID
}

// Mediator is the mediator address (of the server instance) that mediates
// the current listing: where its presence goes. It changes when the
// listing's mediator moves (EventMediatorMoved) or a listing published
// again is routed elsewhere.
func (p *Publisher) Mediator() netip.AddrPort { return p.sock.Mediator() }

// Socket is the publisher's socket: read application datagrams from it and
// punch on it.
func (p *Publisher) Socket() *Socket { return p.sock }

// Public is the host's public endpoint as the mediator last saw it.
func (p *Publisher) Public() netip.AddrPort {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.public
}

// LeaseVersion is the lease version last confirmed by the server.
func (p *Publisher) LeaseVersion() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lease.Version
}

// SetPlayers updates current_players with the next lease renewal. A value
// outside 0..max_players (which the server would refuse with 400, stopping
// the Publisher) is refused with an *InputError and changes nothing.
func (p *Publisher) SetPlayers(n int) error {
	if n < 0 || n > p.spec.MaxPlayers {
		return &InputError{Field: "current_players", Reason: fmt.Sprintf("must be 0..%d (max_players)", p.spec.MaxPlayers)}
	}
	p.mu.Lock()
	p.players = n
	p.mu.Unlock()
	return nil
}

// SetAttributes replaces the listing's indexed attributes with the next
// lease renewal (and every one after it, and a republished listing starts
// with them); nil or empty clears them. Attributes the server would refuse
// are refused with an *InputError and change nothing.
func (p *Publisher) SetAttributes(as Attributes) error {
	if err := as.Validate(); err != nil {
		return err
	}
	as = maps.Clone(as)
	p.mu.Lock()
	p.attrs, p.setAttrs = as, true
	p.mu.Unlock()
	return nil
}

// Done is closed when the Publisher stops (Close, or a fatal error: Err).
func (p *Publisher) Done() <-chan struct{} { return p.done }

// Err is the error that stopped the Publisher (nil while it runs, which
// includes publishing again, or after a plain Close). It matches the cause:
// ErrRevoked (with ErrLeaseLost) when the publisher's principal is revoked,
// ErrUnauthorized when its token is no longer accepted; with NoRepublish
// also ErrDraining when the server drains and ErrLeaseLost (with the
// server's outcome, e.g. ErrNotFound) when the listing is gone.
func (p *Publisher) Err() error {
	if e := p.errv.Load(); e != nil {
		return *e
	}
	return nil
}

// Accept returns the next introduced joiner. Punch toward it right away
// (p.Punch). For a relay-only attempt the Introduction carries no address
// (RelayOnly reports true) and Punch connects through the relay. It fails
// with Err once the Publisher stopped.
func (p *Publisher) Accept(ctx context.Context) (Introduction, error) {
	select {
	case in := <-p.accepted:
		return in, nil
	case <-ctx.Done():
		return Introduction{}, ctx.Err()
	case <-p.done:
		if err := p.Err(); err != nil {
			return Introduction{}, err
		}
		return Introduction{}, ErrClosed
	}
}

// Punch hole-punches toward an introduced joiner on the publisher's socket,
// falling back to the relay (see the package-level Punch).
func (p *Publisher) Punch(ctx context.Context, in Introduction, cfg PunchConfig) (Path, error) {
	return Punch(ctx, p.sock, in, RoleHost, cfg)
}

// Close stops the loops, deletes the listing (best effort within ctx) and
// closes the socket if the Publisher opened it (a socket the caller gave is
// left open and no longer read).
func (p *Publisher) Close(ctx context.Context) error {
	var err error
	p.closed.Do(func() {
		p.stop()
		<-p.done
		p.binds.Wait()
		p.mu.Lock()
		id, lease := p.created.ListingID, p.lease
		p.mu.Unlock()
		err = p.api.DeleteListing(ctx, id, &lease)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrRevoked) || errors.Is(err, ErrExpired) {
			err = nil // already gone: the goal of Close is met
		}
		p.sock.closeIf(p.ownConn)
	})
	return err
}
