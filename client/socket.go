package client

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Socket owns one UDP socket and demultiplexes everything that arrives on it:
// STUN answers and indications from the mediator, hole-punch probes, and the
// application's own datagrams, which ReadFrom returns. One Socket per role
// carries all of them, so the NAT mapping the mediator observed is the one the
// peer reaches.
//
// A single reader goroutine started by NewSocket reads and dispatches; it does
// not allocate per datagram. All methods are safe for concurrent use. Close
// closes the underlying PacketConn.
type Socket struct {
	conn PacketConn
	// mediator is the server's UDP endpoint; a Publisher moves it when its
	// listing's mediator changes (another instance took over).
	mediator atomic.Pointer[netip.AddrPort]
	done     chan struct{}
	exited   chan struct{} // closed when the reader goroutine returns
	once     sync.Once
	readErr  atomic.Pointer[error]

	mu      sync.Mutex
	waiters [maxWaiters]waiter
	intros  map[engine.Handle]*introSlot
	punches map[engine.Handle]*punchSession
	// relays maps a peer's relayed address to the allocation that reaches
	// it; nrelays is its size, read without the lock on every send.
	relays  map[netip.AddrPort]*relayAllocation
	nrelays atomic.Int32
	// presence verifies OFFERs (zero handle: none expected).
	presence    engine.Handle
	presenceKey engine.Capability
	offers      chan engine.Handle

	// application datagrams: free and ready slots, preallocated.
	free, ready chan *appSlot
	appDrops    atomic.Uint64

	// owned by the reader goroutine
	msg stun.Message
	rx  [rxBufSize]byte
	ack [probeSize]byte
}

const (
	maxWaiters   = 32   // concurrent STUN requests in flight on one Socket
	appQueue     = 64   // application datagrams buffered before dropping
	rxBufSize    = 2048 // larger than any datagram the SDK expects
	offerBacklog = 16
)

type appSlot struct {
	n    int
	from netip.AddrPort
	b    [rxBufSize]byte
}

// NewSocket starts demultiplexing conn. mediator is the server's UDP
// endpoint: only STUN from it is treated as mediator traffic.
func NewSocket(conn PacketConn, mediator netip.AddrPort) *Socket {
	s := &Socket{
		conn:    conn,
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
		intros:  make(map[engine.Handle]*introSlot),
		punches: make(map[engine.Handle]*punchSession),
		relays:  make(map[netip.AddrPort]*relayAllocation),
		offers:  make(chan engine.Handle, offerBacklog),
		free:    make(chan *appSlot, appQueue),
		ready:   make(chan *appSlot, appQueue),
	}
	s.setMediator(mediator)
	for i := range s.waiters {
		s.waiters[i].ch = make(chan answer, 1)
	}
	for range appQueue {
		s.free <- new(appSlot)
	}
	go s.readLoop()
	return s
}

// Mediator returns the mediator endpoint this Socket talks to.
func (s *Socket) Mediator() netip.AddrPort { return *s.mediator.Load() }

// setMediator makes m the mediator: requests go there and only STUN from
// there is mediator traffic.
func (s *Socket) setMediator(m netip.AddrPort) {
	m = unmapAP(m)
	s.mediator.Store(&m)
}

// Conn returns the underlying socket (for its local address; reading from
// it directly would race with the Socket's reader).
func (s *Socket) Conn() PacketConn { return s.conn }

// Done is closed when the Socket is closed or its socket failed.
func (s *Socket) Done() <-chan struct{} { return s.done }

// Close stops the reader and closes the socket. It is idempotent.
func (s *Socket) Close() error {
	var err error
	s.once.Do(func() {
		err = s.conn.Close()
		close(s.done)
		s.closeRelays()
	})
	return err
}

// release stops the Socket without closing a socket the caller owns (and
// may reuse): it ends every wait as Close does, unblocks the reader's
// pending read with a past deadline, waits until the reader has returned,
// then clears the deadline. Idempotent; after Close it does nothing.
func (s *Socket) release() {
	s.once.Do(func() {
		close(s.done)
		_ = s.conn.SetReadDeadline(time.Unix(1, 0)) // an error: the socket is closed, the reader returns anyway
		<-s.exited
		_ = s.conn.SetReadDeadline(time.Time{})
		s.closeRelays()
	})
}

func (s *Socket) readLoop() {
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(s.rx[:])
		if err != nil {
			select {
			case <-s.done:
				close(s.exited)
				return
			default:
			}
			if isTemporary(err) {
				continue
			}
			s.readErr.Store(&err)
			close(s.exited)
			s.Close() // the socket is unusable; Done reports it
			return
		}
		s.dispatch(s.rx[:n], unmapAP(from))
	}
}

// isTemporary reports read errors worth continuing after (an ICMP
// unreachable surfaced as ECONNREFUSED on some platforms, a deadline).
func isTemporary(err error) bool {
	type temporary interface{ Temporary() bool }
	if t, ok := err.(temporary); ok && t.Temporary() {
		return true
	}
	type timeout interface{ Timeout() bool }
	if t, ok := err.(timeout); ok && t.Timeout() {
		return true
	}
	return isConnRefused(err)
}

// dispatch routes one datagram. Zero allocations.
func (s *Socket) dispatch(b []byte, from netip.AddrPort) {
	switch {
	case isProbe(b):
		s.handleProbe(b, from, &s.ack, s.conn)
	case from == *s.mediator.Load() && len(b) >= stun.HeaderSize && b[0]&0xC0 == 0:
		s.handleSTUN(b)
	default:
		s.deliverApp(b, from)
	}
}

func (s *Socket) deliverApp(b []byte, from netip.AddrPort) {
	select {
	case sl := <-s.free:
		sl.n = copy(sl.b[:], b)
		sl.from = from
		s.ready <- sl // never blocks: free and ready share appQueue slots
	default:
		s.appDrops.Add(1)
	}
}

// ReadFrom returns the next application datagram (anything that is neither
// mediator STUN nor a punch probe), copied into b. It blocks until one
// arrives, ctx ends or the Socket closes (ErrClosed).
func (s *Socket) ReadFrom(ctx context.Context, b []byte) (int, netip.AddrPort, error) {
	select {
	case sl := <-s.ready:
		n, from := copy(b, sl.b[:sl.n]), sl.from
		s.free <- sl
		return n, from, nil
	case <-ctx.Done():
		return 0, netip.AddrPort{}, ctx.Err()
	case <-s.done:
		return 0, netip.AddrPort{}, ErrClosed
	}
}

// WriteTo sends an application datagram to addr: through the relay when
// addr is the peer of a relayed path (Path.Peer of a relayed Punch), else
// directly.
func (s *Socket) WriteTo(b []byte, addr netip.AddrPort) (int, error) {
	if a := s.relayTo(addr); a != nil {
		return a.WriteToUDPAddrPort(b, addr)
	}
	return s.conn.WriteToUDPAddrPort(b, addr)
}

// AppDrops counts application datagrams dropped because nobody read them.
func (s *Socket) AppDrops() uint64 { return s.appDrops.Load() }

// offerCh delivers attempt handles the mediator offered (pushed OFFERs and
// pending RDV-ATTEMPTs from presence answers), for the Publisher.
func (s *Socket) offerCh() <-chan engine.Handle { return s.offers }

func (s *Socket) setPresence(h engine.Handle, key engine.Capability) {
	s.mu.Lock()
	s.presence, s.presenceKey = h, key
	s.mu.Unlock()
}

func (s *Socket) pushOffer(h engine.Handle) {
	select {
	case s.offers <- h:
	default: // the backlog is full; the presence answer's pending list recovers it
	}
}

func unmapAP(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
