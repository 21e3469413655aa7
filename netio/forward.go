package netio

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Forwarder carries pushed datagrams between the instances of a deployment
// sharing one store (the Redis store implements it). A pushed datagram (an
// OFFER, or an INTRODUCE to the side whose bind reached another instance)
// must leave from the instance whose socket the recipient's NAT mapping
// points at: its NAT drops a datagram from any other address. Delivery is
// at most once: a lost OFFER is recovered by the host's next presence
// refresh (it lists pending attempts), a lost INTRODUCE by the peer's bind
// retransmission (answered with the INTRODUCE again).
type Forwarder interface {
	// Forward hands payload to instance to. delivered is false when no
	// instance listens under that ID (it stopped); err when the bus did not
	// answer. It may block for a round trip, never beyond its own timeout.
	Forward(ctx context.Context, to engine.UUID, payload []byte) (delivered bool, err error)
	// ReceiveForwards calls deliver with every payload forwarded to this
	// instance (one goroutine, in order) until ctx ends, listening again
	// after a lost connection; payloads forwarded meanwhile are lost. It
	// calls subscribed, from the goroutine that called it, each time it
	// starts listening.
	ReceiveForwards(ctx context.Context, deliver func(payload string), subscribed func())
}

// Bounds of forwarding: pushes queued to leave through the bus, and pushes
// received from it waiting for a socket; beyond them a push is dropped and
// counted (recovered as Forwarder says).
const (
	forwardQueue = 1024
	// subscribeWait bounds how long NewMediator waits for the first
	// subscription, so that a started instance already receives forwards;
	// past it, the subscription goes on in the background.
	subscribeWait = 2 * time.Second
)

// outgoing is a push to be sent by instance to.
type outgoing struct {
	to engine.UUID
	p  push
}

// forwarder is a Mediator's side of forwarding; nil without a Forwarder.
type forwarder struct {
	bus  Forwarder
	self engine.UUID
	out  chan outgoing
	key  *forwardKey // seals what leaves, opens what arrives (forward_mac.go)
	// in is the receiving goroutine's HMAC scratch (ReceiveForwards calls
	// deliver from one goroutine).
	in *engine.HMAC
}

// remote reports whether the datagram to a peer whose NAT mapping points at
// instance at must leave from another instance. Zero means unknown (a
// single-instance store): this one.
func (f *forwarder) remote(at engine.UUID) bool {
	return f != nil && !at.IsZero() && at != f.self
}

// enqueue queues p for instance to without blocking; false when the queue
// is full (the caller counts the drop).
func (f *forwarder) enqueue(to engine.UUID, p *push) bool {
	select {
	case f.out <- outgoing{to: to, p: *p}:
		return true
	default:
		return false
	}
}

// forwardLoop publishes queued pushes until Close.
func (m *Mediator) forwardLoop() {
	defer m.wg.Done()
	buf := make([]byte, 0, pushPayloadMax+forwardTrailer)
	h := engine.NewHMAC()
	ctx, cancel := m.closingContext()
	defer cancel()
	for {
		select {
		case <-m.done:
			return
		case o := <-m.fwd.out:
			payload := m.fwd.key.seal(h, o.p.appendPayload(buf[:0]), o.to, time.Now())
			delivered, err := m.fwd.bus.Forward(ctx, o.to, payload)
			switch {
			case err != nil:
				m.met.drops[dropForwardFailed].Inc()
			case !delivered:
				m.met.drops[dropForwardUnreceived].Inc()
			default:
				m.met.forwarded[forwardOut].Inc()
			}
		}
	}
}

// receiveForwards listens for pushes forwarded to this instance until
// Close and queues them for pushLoop; subscribed is closed once listening.
func (m *Mediator) receiveForwards(subscribed chan<- struct{}) {
	defer m.wg.Done()
	ctx, cancel := m.closingContext()
	defer cancel()
	first := true
	m.fwd.bus.ReceiveForwards(ctx, m.deliverForward, func() {
		if first {
			first = false
			close(subscribed)
			return
		}
		m.log.Info("forwarded datagrams: listening again")
	})
}

// closingContext is a context cancelled when the mediator closes (or by
// its cancel), so a call on the bus does not hold Close up.
func (m *Mediator) closingContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-m.done:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

// deliverForward queues one forwarded payload for pushLoop if it is
// authentic, addressed to this instance and not stale (forward_mac.go).
func (m *Mediator) deliverForward(payload string) {
	body, res := m.fwd.key.open(m.fwd.in, []byte(payload), m.fwd.self, time.Now())
	switch res {
	case openForged:
		m.met.drops[dropForwardForged].Inc()
		return
	case openStale:
		m.met.drops[dropForwardStale].Inc()
		return
	}
	var p push
	if !p.parsePayload(string(body)) {
		m.met.drops[dropForwardMalformed].Inc()
		return
	}
	select {
	case m.pushes <- p:
		m.met.forwarded[forwardIn].Inc()
	default:
		m.met.drops[dropForwardInQueue].Inc()
	}
}

// startForwarding starts listening for forwards (NewMediator, with a
// Forwarder) and waits up to subscribeWait for the first subscription.
func (m *Mediator) startForwarding() {
	subscribed := make(chan struct{})
	m.wg.Add(1)
	go m.receiveForwards(subscribed)
	t := time.NewTimer(subscribeWait)
	defer t.Stop()
	select {
	case <-subscribed:
	case <-t.C:
		m.log.Warn("forwarded datagrams: not listening yet; pushes other instances forward here are lost until then")
	}
}
