package client

import (
	"fmt"
	"net/netip"
	"time"
)

// EventKind names what happened to a Publisher's listing.
type EventKind uint8

const (
	// EventUnreachable: a presence refresh got no answer after every
	// retransmission (the server is down or the path is lost). The
	// Publisher keeps trying; reported once per outage.
	EventUnreachable EventKind = iota + 1
	// EventLeaseLost: the listing is gone (its lease or presence ran out,
	// it was deleted by an operator, or the server restarted and lost it).
	// The Publisher publishes again unless NoRepublish is set.
	EventLeaseLost
	// EventDraining: the server drains and refuses renewals. The Publisher
	// publishes again (to a restarted server) unless NoRepublish is set.
	EventDraining
	// EventRepublishFailed: one try to publish again failed (Err says why,
	// often ErrDraining or a transport error); the next comes in RetryIn.
	EventRepublishFailed
	// EventRepublished: the listing was published again under a new ID
	// (Listing) and is browsable.
	EventRepublished
	// EventStopped: the Publisher stopped for good; Err is Publisher.Err
	// (for example ErrRevoked when its principal was revoked). Not sent
	// after a plain Close.
	EventStopped
	// EventMediatorMoved: the listing's mediator is now another server
	// instance's (Mediator), learnt over HTTP after refreshes to the old
	// one went unanswered or it began draining; presence goes there, the
	// listing is unchanged.
	EventMediatorMoved
	// EventAttemptCreated (a Joiner's): the join attempt (Attempt) for
	// Listing exists and Mediator mediates it; the Joiner binds there next.
	EventAttemptCreated
)

var eventNames = [...]string{"", "unreachable", "lease lost", "draining", "republish failed", "republished", "stopped", "mediator moved", "attempt created"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one change in a Publisher's life, given to
// PublisherConfig.OnEvent, or a Joiner's step, given to JoinerConfig.OnEvent.
type Event struct {
	Kind EventKind
	// Listing is the listing concerned: the lost one, or for
	// EventRepublished the new one.
	Listing ListingID
	// Attempt is the join attempt (EventAttemptCreated).
	Attempt AttemptID
	// Err is the cause (nil for EventRepublished, EventMediatorMoved and
	// EventAttemptCreated).
	Err error
	// Mediator is the server instance's mediator address that mediates
	// the listing when the event happens (for EventMediatorMoved the new
	// one, for EventRepublished the new listing's) or the attempt
	// (EventAttemptCreated).
	Mediator netip.AddrPort
	// RetryIn is the wait before the next republish try
	// (EventRepublishFailed, EventLeaseLost, EventDraining).
	RetryIn time.Duration
}

func (e Event) String() string {
	s := e.Kind.String() + " (listing " + e.Listing.String()
	if !e.Attempt.IsZero() {
		s += ", attempt " + e.Attempt.String()
	}
	if e.Mediator.IsValid() {
		s += ", mediator " + e.Mediator.String()
	}
	s += ")"
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.RetryIn > 0 {
		s += "; publishing again in " + e.RetryIn.Round(time.Millisecond).String()
	}
	return s
}

// emit hands ev, with the mediator now in use, to OnEvent (calls are
// serialised) and logs it.
func (p *Publisher) emit(ev Event) {
	if !ev.Mediator.IsValid() {
		ev.Mediator = p.sock.Mediator()
	}
	switch ev.Kind {
	case EventRepublished:
		p.log.Info("listing published again", "listing", ev.Listing.String(), "mediator", ev.Mediator.String())
	case EventStopped:
		// fatal logged it
	default:
		attrs := []any{"event", ev.Kind.String(), "listing", ev.Listing.String(), "mediator", ev.Mediator.String()}
		if ev.Err != nil {
			attrs = append(attrs, "err", ev.Err.Error())
		}
		if ev.RetryIn > 0 {
			attrs = append(attrs, "retry_in", ev.RetryIn.String())
		}
		p.log.Warn("publisher", attrs...)
	}
	if p.onEvent == nil {
		return
	}
	p.evMu.Lock()
	defer p.evMu.Unlock()
	p.onEvent(ev)
}
