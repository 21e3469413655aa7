package client

import (
	"context"
	"crypto/rand"
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// waiter is one in-flight STUN request awaiting its answer, matched by
// transaction ID and verified with key. Slots are preallocated in the Socket.
type waiter struct {
	used bool
	txID [12]byte
	key  engine.Capability
	ch   chan answer
}

// answer is what the SDK keeps of a mediator response: a value, so passing
// it through a channel does not allocate.
type answer struct {
	code      int // 0 on success, else the STUN error code
	reason    [48]byte
	nreason   int
	mapped    netip.AddrPort
	lifetime  uint32
	attempts  [engine.PendingOffersMax]engine.Handle
	nattempts int
	// relayOnly: the answer to an attempt bind says the attempt is
	// relay-only, so no INTRODUCE will come (RDV-RELAY-ONLY).
	relayOnly bool
}

func (a *answer) err(op string) error {
	if a.code == 0 {
		return nil
	}
	return &MediatorError{Op: op, Code: a.code, Reason: string(a.reason[:a.nreason])}
}

// introSlot waits for the INTRODUCE (ch) or RELAY-INTRODUCE (relay: the
// peer's relayed address) of one attempt, verified with key.
type introSlot struct {
	kind  byte
	key   engine.Capability
	ch    chan Introduction
	relay chan netip.AddrPort
}

func newTxID() (id [12]byte) {
	_, _ = rand.Read(id[:]) // never fails since Go 1.24: it crashes the process instead
	return id
}

// exchange sends req (built with transaction ID txID) to the mediator and
// waits up to rto for its verified answer. ok is false on timeout.
func (s *Socket) exchange(ctx context.Context, txID [12]byte, key *engine.Capability, req []byte, rto time.Duration) (a answer, ok bool, err error) {
	w := s.acquireWaiter(txID, key)
	if w == nil {
		return a, false, &ConfigError{Field: "socket", Reason: "too many concurrent mediator requests"}
	}
	defer s.releaseWaiter(w)
	if _, err := s.conn.WriteToUDPAddrPort(req, s.Mediator()); err != nil && !isConnRefused(err) {
		return a, false, err
	}
	t := time.NewTimer(rto)
	defer t.Stop()
	select {
	case a = <-w.ch:
		return a, true, nil
	case <-t.C:
		return a, false, nil
	case <-ctx.Done():
		return a, false, ctx.Err()
	case <-s.done:
		return a, false, ErrClosed
	}
}

func (s *Socket) acquireWaiter(txID [12]byte, key *engine.Capability) *waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.waiters {
		w := &s.waiters[i]
		if !w.used {
			w.used, w.txID, w.key = true, txID, *key
			select { // drain a stale answer from an earlier use
			case <-w.ch:
			default:
			}
			return w
		}
	}
	return nil
}

func (s *Socket) releaseWaiter(w *waiter) {
	s.mu.Lock()
	w.used, w.key = false, engine.Capability{}
	s.mu.Unlock()
}

// handleSTUN processes one datagram from the mediator. Anything unverifiable
// is dropped. Zero allocations.
func (s *Socket) handleSTUN(b []byte) {
	m := &s.msg
	if stun.Parse(b, m) != nil || !m.HasFingerprint() {
		return
	}
	switch m.Class() {
	case stun.ClassSuccess, stun.ClassError:
		s.handleAnswer(m)
	case stun.ClassIndication:
		switch m.Method() {
		case stun.MethodOffer:
			s.handleOffer(m)
		case stun.MethodIntroduce:
			s.handleIntroduce(m)
		case stun.MethodRelayIntroduce:
			s.handleRelayIntroduce(m)
		}
	}
}

func (s *Socket) handleAnswer(m *stun.Message) {
	var a answer
	if m.Class() == stun.ClassError {
		code, reason, ok := m.ErrorCode()
		if !ok {
			return
		}
		a.code = code
		a.nreason = copy(a.reason[:], reason)
	}
	a.mapped, _ = m.XORAddress(stun.AttrXORMappedAddress)
	a.lifetime, _ = m.Uint32(stun.AttrLifetime)
	a.relayOnly = m.Has(stun.AttrRelayOnly)
	for h := range m.Attempts() {
		if a.nattempts == len(a.attempts) {
			break
		}
		a.attempts[a.nattempts] = h
		a.nattempts++
	}
	tx := m.TransactionID()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.waiters {
		w := &s.waiters[i]
		if !w.used || w.txID != tx {
			continue
		}
		// Every answer to an authenticated request is signed, except the
		// unsigned 401 (and 420) the mediator gives when it cannot verify us.
		unsigned := a.code == stun.CodeUnauthorized || a.code == stun.CodeUnknownAttribute
		if !m.CheckIntegrity(w.key[:]) && !(unsigned && !m.HasIntegrity()) {
			return
		}
		select {
		case w.ch <- a:
		default: // a duplicate answer; the first one counts
		}
		return
	}
}

func (s *Socket) handleOffer(m *stun.Message) {
	u, ok := m.Username()
	if !ok {
		return
	}
	kind, h, ok := stun.ParseUsername(u)
	if !ok || kind != stun.KindPresence {
		return
	}
	s.mu.Lock()
	match := !s.presence.IsZero() && h == s.presence
	key := s.presenceKey
	s.mu.Unlock()
	if !match || !m.CheckIntegrity(key[:]) {
		return
	}
	for a := range m.Attempts() {
		s.pushOffer(a)
	}
}

// introSlotFor returns the waiting slot an (relay) introduction is
// addressed to and the peer address it carries (XOR-PEER-ADDRESS), if its
// USERNAME names a slot, it verifies with that slot's key and it carries
// the address; else a nil slot.
func (s *Socket) introSlotFor(m *stun.Message) (engine.Handle, *introSlot, netip.AddrPort) {
	u, ok := m.Username()
	if !ok {
		return engine.Handle{}, nil, netip.AddrPort{}
	}
	kind, h, ok := stun.ParseUsername(u)
	if !ok {
		return h, nil, netip.AddrPort{}
	}
	s.mu.Lock()
	slot := s.intros[h]
	s.mu.Unlock()
	if slot == nil || slot.kind != kind || !m.CheckIntegrity(slot.key[:]) {
		return h, nil, netip.AddrPort{}
	}
	peer, ok := m.XORAddress(stun.AttrXORPeerAddress)
	if !ok {
		return h, nil, netip.AddrPort{}
	}
	return h, slot, peer
}

func (s *Socket) handleIntroduce(m *stun.Message) {
	h, slot, pub := s.introSlotFor(m)
	if slot == nil {
		return
	}
	in := Introduction{Attempt: Handle(h.UUID), Public: pub}
	in.Local, _ = m.XORAddress(stun.AttrPeerLocalAddress)
	select {
	case slot.ch <- in:
	default: // already introduced; a re-sent INTRODUCE changes nothing
	}
}

// handleRelayIntroduce takes the peer's relayed address from a verified
// RELAY-INTRODUCE.
func (s *Socket) handleRelayIntroduce(m *stun.Message) {
	_, slot, peer := s.introSlotFor(m)
	if slot == nil {
		return
	}
	select {
	case slot.relay <- peer:
	default: // a re-sent RELAY-INTRODUCE changes nothing
	}
}

func (s *Socket) registerIntro(h engine.Handle, kind byte, key engine.Capability) *introSlot {
	slot := &introSlot{kind: kind, key: key, ch: make(chan Introduction, 1), relay: make(chan netip.AddrPort, 1)}
	s.mu.Lock()
	s.intros[h] = slot
	s.mu.Unlock()
	return slot
}

// binding reports whether a bind waits for its introduction.
func (s *Socket) binding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.intros) > 0
}

func (s *Socket) unregisterIntro(h engine.Handle) {
	s.mu.Lock()
	delete(s.intros, h)
	s.mu.Unlock()
}
