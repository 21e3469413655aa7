package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// linSock is one UDP socket of the linearizability run, shared by the
// goroutines of one slot. Its reader routes responses to the request that
// waits for them (by transaction ID) and hands every INTRODUCE to onIntro;
// OFFERs are ignored (the model does not cover them: they are best-effort
// and recovered by presence refreshes).
type linSock struct {
	conn    *net.UDPConn
	addr    netip.AddrPort // as the mediator sees it
	local   netip.AddrPort // the made-up LAN address it reports
	onIntro func(m *stun.Message)

	mu      sync.Mutex
	server  netip.AddrPort // the mediator it talks to (moveTo changes it)
	waiting map[[12]byte]chan *stun.Message
	err     error // first malformed datagram, reported by the test
}

func newLinSock(mediator string, local netip.AddrPort) (*linSock, error) {
	server, err := netip.ParseAddrPort(mediator)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("cannot open a UDP socket: %w", err)
	}
	return &linSock{
		conn: conn, addr: conn.LocalAddr().(*net.UDPAddr).AddrPort(), local: local, server: server,
		waiting: map[[12]byte]chan *stun.Message{},
	}, nil
}

// read runs until the socket is closed.
func (s *linSock) read() {
	for {
		buf := make([]byte, 2048)
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		current := s.server
		s.mu.Unlock()
		if from != current {
			continue
		}
		m := new(stun.Message)
		if err := stun.Parse(buf[:n:n], m); err != nil || !m.HasFingerprint() {
			s.fail(fmt.Errorf("the mediator sent a malformed datagram or one without FINGERPRINT (%v)", err))
			continue
		}
		switch m.Type() {
		case stun.IntroduceIndication:
			s.onIntro(m)
		case stun.OfferIndication:
		default:
			s.mu.Lock()
			ch := s.waiting[m.TransactionID()]
			delete(s.waiting, m.TransactionID())
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (s *linSock) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// roundTrip sends a Binding request for kind:h signed with key (seq 0: no
// RDV-SEQUENCE) and returns the answer's code: 200, or the ERROR-CODE. A
// success must be signed with key; so must every error but 401.
func (s *linSock) roundTrip(kind byte, h engine.Handle, key *engine.Capability, seq uint64) (int, *stun.Message, error) {
	msg, tx, err := signedRequest(kind, h, key, seq, s.local)
	if err != nil {
		return 0, nil, err
	}
	m, err := s.exchange(msg, tx)
	if err != nil {
		return 0, nil, err
	}
	code := 200
	if m.Type() != stun.BindingSuccess {
		c, _, ok := m.ErrorCode()
		if m.Type() != stun.BindingError || !ok {
			return 0, nil, fmt.Errorf("answer of type %#x", m.Type())
		}
		code = c
	}
	if signed := m.CheckIntegrity(key[:]); signed != (code != 401) {
		return 0, nil, fmt.Errorf("answer %d signed %v", code, signed)
	}
	return code, m, nil
}

// barrier sends a plain Binding and waits for its answer: the datagrams the
// mediator sent this socket before it have been read by then.
func (s *linSock) barrier() error {
	var tx [12]byte
	if _, err := rand.Read(tx[:]); err != nil {
		return err
	}
	var buf [64]byte
	b := stun.NewBuilder(buf[:], stun.BindingRequest, tx)
	b.AddFingerprint()
	_, err := s.exchange(b.Bytes(), tx)
	return err
}

// moveTo makes the socket talk to server from now on, as a client of a
// killed instance switches to another: requests still waiting for the old
// one end with errUnknownOutcome (it may have handled them before dying).
func (s *linSock) moveTo(server string) error {
	addr, err := netip.ParseAddrPort(server)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.server = addr
	for tx, ch := range s.waiting {
		close(ch)
		delete(s.waiting, tx)
	}
	return nil
}

// exchange sends msg and waits for the answer to transaction tx.
func (s *linSock) exchange(msg []byte, tx [12]byte) (*stun.Message, error) {
	ch := make(chan *stun.Message, 1)
	s.mu.Lock()
	s.waiting[tx] = ch
	server := s.server
	s.mu.Unlock()
	if _, err := s.conn.WriteToUDPAddrPort(msg, server); err != nil {
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("to %v: %w", server, errUnknownOutcome)
		}
		return m, nil
	case <-time.After(hangGuard):
		return nil, errors.New("no answer from the mediator")
	}
}
