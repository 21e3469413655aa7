package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
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
}

// Publisher keeps one listing alive: its lease (renewed by compare-and-swap
// before expiry, resynchronised on 409) and its presence (a signed UDP
// heartbeat with a rising sequence). It answers OFFERs (pushed or pending) by
// binding with the derived host attempt capability and hands each INTRODUCE to
// Accept. All methods are safe for concurrent use.
type Publisher struct {
	api     *API
	sock    *Socket
	ownConn bool
	log     *slog.Logger
	created CreatedListing
	// maxPlayers is the listing's max_players (immutable): SetPlayers' bound.
	maxPlayers int

	mu      sync.Mutex
	lease   Lease
	players int // -1: unchanged
	public  netip.AddrPort

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
	p := &Publisher{api: cfg.API, log: cfg.Logger, created: *created, maxPlayers: cfg.Spec.MaxPlayers, lease: created.Lease, players: -1,
		accepted: make(chan Introduction, acceptBacklog), done: make(chan struct{})}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	fail := func(err error) (*Publisher, error) {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		// The creation succeeded; undo it so a failed Publish leaves nothing behind.
		_ = cfg.API.DeleteListing(dctx, created.ListingID, &p.lease)
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
	ps := &presenceState{handle: created.Presence.Handle.engine(), key: *created.Presence.Token.engine(), local: cfg.LocalAddr}
	if !ps.local.IsValid() {
		ps.local = localEndpoint(conn, med)
	}
	p.sock.setPresence(ps.handle, ps.key)
	a, err := p.sock.refresh(ctx, ps, presenceTries, presenceRTO)
	if err != nil {
		p.sock.closeIf(p.ownConn)
		return fail(fmt.Errorf("first presence refresh: %w", err))
	}
	p.public = a.mapped
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p.stop = stop
	go p.run(lctx, ps)
	return p, nil
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

// ListingID names the published listing.
func (p *Publisher) ListingID() ListingID { return p.created.ListingID }

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
	if n < 0 || n > p.maxPlayers {
		return &InputError{Field: "current_players", Reason: fmt.Sprintf("must be 0..%d (max_players)", p.maxPlayers)}
	}
	p.mu.Lock()
	p.players = n
	p.mu.Unlock()
	return nil
}

// Done is closed when the Publisher stops (Close, or a fatal error: Err).
func (p *Publisher) Done() <-chan struct{} { return p.done }

// Err is the error that stopped the Publisher (nil while it runs or after a
// plain Close). It matches ErrDraining when the server drains, ErrLeaseLost
// (and the server's outcome) when the lease or presence is gone.
func (p *Publisher) Err() error {
	if e := p.errv.Load(); e != nil {
		return *e
	}
	return nil
}

// Accept returns the next introduced joiner. Punch toward it right away
// (p.Punch). It fails with Err once the Publisher stopped.
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

// Punch hole-punches toward an introduced joiner on the publisher's socket.
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
		lease := p.lease
		p.mu.Unlock()
		err = p.api.DeleteListing(ctx, p.created.ListingID, &lease)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrRevoked) || errors.Is(err, ErrExpired) {
			err = nil // already gone: the goal of Close is met
		}
		p.sock.closeIf(p.ownConn)
	})
	return err
}

func (p *Publisher) fatal(err error) {
	p.errv.CompareAndSwap(nil, &err)
	p.log.Warn("publisher stopped", "listing", p.created.ListingID.String(), "err", err.Error())
}

// run runs the publisher's two loops (lease renewal, which may wait on HTTP
// retries, must never delay the presence heartbeat) and closes done when both
// have stopped. A fatal error in either stops both.
func (p *Publisher) run(ctx context.Context, ps *presenceState) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); defer p.stop(); p.runPresence(ctx, ps) }()
	go func() { defer wg.Done(); defer p.stop(); p.runLease(ctx) }()
	wg.Wait()
	close(p.done)
}

// runPresence refreshes presence and handles offers.
func (p *Publisher) runPresence(ctx context.Context, ps *presenceState) {
	interval := min(p.created.Presence.Interval, p.created.Presence.TTL/3)
	presence := time.NewTicker(max(interval, 100*time.Millisecond))
	defer presence.Stop()
	seen := make(map[engine.Handle]time.Time) // offers already handled, by expiry
	sem := make(chan struct{}, maxHostBinds)  // concurrent binds
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.sock.Done():
			p.fatal(ErrClosed)
			return
		case <-presence.C:
			a, err := p.sock.refresh(ctx, ps, presenceTries, presenceRTO)
			switch {
			case err == nil:
				p.mu.Lock()
				p.public = a.mapped
				p.mu.Unlock()
			case errors.Is(err, ErrNotFound) || errors.Is(err, ErrRevoked) || errors.Is(err, ErrUnauthorized):
				p.fatal(fmt.Errorf("%w: presence: %w", ErrLeaseLost, err))
				return
			case ctx.Err() != nil:
				return
			default:
				// A lost round: the next tick tries again well within the presence TTL.
				p.log.Debug("presence refresh failed", "err", err.Error())
			}
		case h := <-p.sock.offerCh():
			now := time.Now()
			for k, exp := range seen {
				if now.After(exp) {
					delete(seen, k)
				}
			}
			if _, dup := seen[h]; dup || len(seen) >= maxSeenOffers {
				continue
			}
			select {
			case sem <- struct{}{}:
			default:
				continue // at the bind limit: the next presence answer offers it again
			}
			seen[h] = now.Add(engine.MaxAttemptTTL)
			p.binds.Add(1)
			go func() {
				defer func() { <-sem }()
				p.bindAttempt(ctx, ps, h, now.Add(engine.MaxAttemptTTL))
			}()
		}
	}
}

// runLease renews the lease when half its TTL has passed, retrying
// transient failures while the lease still runs.
func (p *Publisher) runLease(ctx context.Context) {
	renew := time.NewTimer(p.renewIn())
	defer renew.Stop()
	leaseEnd := time.Now().Add(p.leaseTTL()) // by the monotonic clock
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
		}
		err := p.renewLease(ctx)
		switch {
		case err == nil:
			leaseEnd = time.Now().Add(p.leaseTTL())
			renew.Reset(p.renewIn())
		case ctx.Err() != nil:
			return
		case transient(err) && time.Until(leaseEnd) > time.Second:
			// The lease still runs: try again soon, well before it ends.
			p.log.Debug("lease renewal failed, retrying", "err", err.Error())
			renew.Reset(min(time.Second, time.Until(leaseEnd)/4))
		default:
			if transient(err) {
				err = fmt.Errorf("%w: renewal kept failing until the lease ended: %w", ErrLeaseLost, err)
			}
			p.fatal(err)
			return
		}
	}
}

func (p *Publisher) leaseTTL() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lease.TTL
}

// transient reports a failure worth retrying while the lease runs: no answer
// at all, or a server shedding load.
func transient(err error) bool {
	var te *transportError
	var ae *APIError
	switch {
	case errors.As(err, &te):
		return true
	case errors.As(err, &ae):
		return ae.Code == "service_unavailable" || ae.Code == "capacity_exceeded"
	}
	return false
}

func (p *Publisher) renewIn() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.lease.TTL/renewFraction, 100*time.Millisecond)
}

// renewLease renews by compare-and-swap, resynchronising the version from a
// 409's current_version (a retried renewal whose first answer was lost looks
// exactly like that).
func (p *Publisher) renewLease(ctx context.Context) error {
	p.mu.Lock()
	lease, players := p.lease, p.players
	p.mu.Unlock()
	var err error
	for range maxRenewResync {
		err = p.api.RenewLease(ctx, p.created.ListingID, &lease, players)
		var ae *APIError
		if errors.As(err, &ae) && ae.Code == "conflict" && ae.CurrentVersion != 0 {
			lease.Version = ae.CurrentVersion
			continue
		}
		break
	}
	switch {
	case err == nil:
		p.mu.Lock()
		p.lease = lease
		p.mu.Unlock()
		return nil
	case errors.Is(err, ErrDraining):
		return err
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrExpired) || errors.Is(err, ErrRevoked):
		return fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return err
}

// bindAttempt binds the host side of one offered attempt and queues its
// introduction for Accept.
func (p *Publisher) bindAttempt(ctx context.Context, ps *presenceState, h engine.Handle, deadline time.Time) {
	defer p.binds.Done()
	key := engine.HostAttemptCapability(&ps.key, h)
	in, err := p.sock.bind(ctx, stun.KindAttemptHost, h, key, ps.local, deadline)
	if err != nil {
		p.log.Info("attempt bind ended without introduction", "attempt", h.String(), "err", err.Error())
		return
	}
	select {
	case p.accepted <- in:
	default:
		p.log.Warn("accept backlog full: introduction dropped", "attempt", h.String())
	}
}
