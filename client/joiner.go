package client

import (
	"context"
	"errors"
	"iter"
	"net/netip"
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// JoinerConfig configures NewJoiner.
type JoinerConfig struct {
	API             *API
	ProtocolVersion uint32
	// Conn is the socket for mediator traffic and the punched path. Nil
	// opens one on ListenAddr; the Joiner then owns and closes it.
	Conn       PacketConn
	ListenAddr string // default "0.0.0.0:0"
	// LocalAddr overrides the LAN endpoint reported as RDV-LOCAL-ADDRESS.
	LocalAddr netip.AddrPort
	// RelayOnly makes every join relay-only: neither side learns the
	// other's public or LAN address, and Punch connects through the relay.
	RelayOnly bool
	// OnEvent, if set, is told of each join attempt created
	// (EventAttemptCreated, naming the mediator that mediates it). It is
	// called from Join's goroutine before the bind and must return quickly.
	OnEvent func(Event)
}

// Joiner browses listings and joins one: it creates a join attempt (with an
// idempotency key reused on retry), binds its socket with the client
// capability and waits for INTRODUCE, retransmitting with backoff. A Joiner
// uses one socket, which talks to the mediator of its latest join attempt
// (with several instances, attempts of different listings may name
// different ones). Safe for concurrent use; Join calls for different
// listings may overlap while their attempts name the same mediator.
type Joiner struct {
	api     *API
	cfg     JoinerConfig
	mu      sync.Mutex
	sock    *Socket
	conn    PacketConn
	ownConn bool
}

// NewJoiner opens (or adopts) the joiner's socket.
func NewJoiner(cfg JoinerConfig) (*Joiner, error) {
	if cfg.API == nil {
		return nil, &ConfigError{Field: "API", Reason: "required"}
	}
	if cfg.ProtocolVersion == 0 {
		return nil, &InputError{Field: "protocol_version", Reason: "must be 1..4294967295"}
	}
	conn, own, err := openConn(cfg.Conn, cfg.ListenAddr)
	if err != nil {
		return nil, err
	}
	return &Joiner{api: cfg.API, cfg: cfg, conn: conn, ownConn: own}, nil
}

// Browse iterates the joinable public listings of the joiner's protocol
// version (and region, if set), page by page.
func (j *Joiner) Browse(ctx context.Context, region string) iter.Seq2[Listing, error] {
	return j.api.Browse(ctx, BrowseQuery{ProtocolVersion: j.cfg.ProtocolVersion, Region: region, PageSize: engine.BrowsePageMax})
}

// BrowseWith iterates the listings q selects (filters and order, see
// BrowseQuery), of the joiner's protocol version whatever q says; a zero
// PageSize asks for full pages.
func (j *Joiner) BrowseWith(ctx context.Context, q BrowseQuery) iter.Seq2[Listing, error] {
	q.ProtocolVersion = j.cfg.ProtocolVersion
	if q.PageSize == 0 {
		q.PageSize = engine.BrowsePageMax
	}
	return j.api.Browse(ctx, q)
}

// Get returns one joinable listing by ID.
func (j *Joiner) Get(ctx context.Context, id ListingID) (*Listing, error) {
	return j.api.GetListing(ctx, id)
}

// Socket returns the joiner's socket once a Join has started (nil before).
func (j *Joiner) Socket() *Socket {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sock
}

// Join asks to be introduced to the host of listing and returns the host's
// endpoints. It ends with ErrIntroduceTimeout if the host never binds before
// the attempt expires, or a typed contract error. For a relay-only attempt
// (JoinerConfig.RelayOnly, or a listing that requires it) it returns an
// Introduction without addresses (RelayOnly reports true) as soon as the
// attempt exists: Punch then connects through the relay.
func (j *Joiner) Join(ctx context.Context, listing ListingID) (Introduction, error) {
	start := time.Now()
	at, err := j.api.CreateJoinAttemptWith(ctx, NewIdempotencyKey(), listing, AttemptRequest{ProtocolVersion: j.cfg.ProtocolVersion, RelayOnly: j.cfg.RelayOnly})
	if err != nil {
		return Introduction{}, err
	}
	return j.bindAttempt(ctx, start, at)
}

// QuickJoin joins the best listing q's filters find (not full, most
// players first: docs/contracts/semantics.md#quick-join), of the joiner's
// protocol version whatever q says, and returns it with the host's
// endpoints as Join does. ErrNotFound when no listing matches.
func (j *Joiner) QuickJoin(ctx context.Context, q BrowseQuery) (ListingID, Introduction, error) {
	start := time.Now()
	q.ProtocolVersion = j.cfg.ProtocolVersion
	at, err := j.api.QuickJoin(ctx, NewIdempotencyKey(), q, j.cfg.RelayOnly)
	if err != nil {
		return ListingID{}, Introduction{}, err
	}
	in, err := j.bindAttempt(ctx, start, at)
	return at.ListingID, in, err
}

// bindAttempt goes on with the attempt at, created at start: it binds the
// joiner's socket and waits for the introduction.
func (j *Joiner) bindAttempt(ctx context.Context, start time.Time, at *Attempt) (Introduction, error) {
	listing := at.ListingID
	med, err := resolveMediator(at.Mediator)
	if err != nil {
		return Introduction{}, err
	}
	if j.cfg.OnEvent != nil {
		j.cfg.OnEvent(Event{Kind: EventAttemptCreated, Listing: listing, Attempt: at.AttemptID, Mediator: med})
	}
	s, err := j.socketFor(med)
	if err != nil {
		return Introduction{}, err
	}
	side := &attemptSide{kind: stun.KindAttemptClient, id: at.AttemptID, h: at.Handle.engine(), key: *at.Token.engine(),
		deadline: time.Now().Add(at.TTL), start: start, relayOnly: at.RelayOnly}
	if r := at.Relay; r != nil {
		side.relay = func(context.Context) (*Relay, error) { return r, nil }
	} else if !at.RelayOnly {
		// The server grants a plain attempt's credential only once the
		// attempt needs the relay: asked after the punch failed.
		api, id := j.api, at.AttemptID
		side.relay = func(ctx context.Context) (*Relay, error) {
			r, err := api.ClientRelay(ctx, id)
			if errors.Is(err, ErrRelayUnavailable) {
				return nil, errRelayOff // the server relays nothing: no fallback
			}
			return r, err
		}
	}
	in := Introduction{Attempt: at.Handle, side: side}
	if at.RelayOnly {
		if side.relay == nil {
			return Introduction{}, &ProtocolError{Op: "create join attempt", Reason: "a relay-only attempt without a relay object"}
		}
		return in, nil // the LAN address is never sent: nobody may learn it
	}
	side.local = j.cfg.LocalAddr
	if !side.local.IsValid() {
		side.local = localEndpoint(j.conn, s.Mediator())
	}
	b, err := s.bind(ctx, side.kind, side.h, side.key, side.local, netip.AddrPort{}, side.deadline)
	if err != nil {
		return Introduction{}, err
	}
	if b.relayOnly { // the listing requires relay-only joins
		side.relayOnly, side.local = true, netip.AddrPort{}
		return in, nil
	}
	b.intro.side = side
	return b.intro, nil
}

// JoinAndPunch joins and then punches toward the host.
func (j *Joiner) JoinAndPunch(ctx context.Context, listing ListingID, cfg PunchConfig) (Introduction, Path, error) {
	in, err := j.Join(ctx, listing)
	if err != nil {
		return in, Path{}, err
	}
	p, err := Punch(ctx, j.Socket(), in, RoleClient, cfg)
	return in, p, err
}

func (j *Joiner) socketFor(med netip.AddrPort) (*Socket, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.sock == nil {
		j.sock = NewSocket(j.conn, med)
		return j.sock, nil
	}
	if j.sock.Mediator() != med {
		// Any instance serves any attempt's datagrams, but a side's
		// introduction leaves from the instance its first bind reached:
		// the socket may follow the new attempt's mediator only while no
		// bind waits for an introduction from the current one.
		if j.sock.binding() {
			return nil, &ProtocolError{Op: "create join attempt", Reason: "attempt names a different mediator than the one another join of this joiner is binding through"}
		}
		j.sock.setMediator(med)
	}
	select {
	case <-j.sock.Done():
		return nil, ErrClosed
	default:
	}
	return j.sock, nil
}

// Close closes the socket if the Joiner opened it; a socket the caller
// gave is left open and no longer read.
func (j *Joiner) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.ownConn {
		if j.sock != nil {
			j.sock.release() // stop reading the caller's socket; it stays open
		}
		return nil
	}
	if j.sock != nil {
		err := j.sock.Close()
		if errors.Is(err, ErrClosed) {
			return nil
		}
		return err
	}
	return j.conn.Close()
}
