package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// run serves the current listing and, each time it is lost, publishes it
// again, until Close or a failure retrying cannot cure. It closes done when
// it returns.
func (p *Publisher) run(ctx context.Context, ps *presenceState) {
	defer close(p.done)
	for {
		err := p.serve(ctx, ps)
		if ctx.Err() != nil {
			return
		}
		kind, err := p.diagnose(ctx, err)
		if ctx.Err() != nil {
			return
		}
		if kind == EventStopped || p.noRepublish {
			p.fatal(err)
			return
		}
		p.mu.Lock()
		lost, lease := p.created.ListingID, p.lease
		p.mu.Unlock()
		// A drained or unreachable server may still hold the listing; it
		// must not linger next to the new one.
		p.deleteBestEffort(ctx, lost, &lease)
		if ps, err = p.republishLoop(ctx, Event{Kind: kind, Listing: lost, Err: err}); err != nil {
			if ctx.Err() == nil {
				p.fatal(err)
			}
			return
		}
	}
}

// diagnose names what ended a listing. The mediator's answer cannot tell a
// revoked principal from a deleted listing or a restarted server (all are
// "unknown presence"), so a presence refusal is explained by renewing the
// lease over HTTP, which answers with the precise outcome. It returns
// EventStopped for failures that retrying cannot cure.
func (p *Publisher) diagnose(ctx context.Context, err error) (EventKind, error) {
	var me *MediatorError
	if errors.As(err, &me) {
		if rerr := p.renewLease(ctx); rerr != nil {
			err = rerr
		} else {
			// %v: the mediator's code must not read as the cause (its 401
			// would match ErrUnauthorized and stop the Publisher).
			err = fmt.Errorf("%w: the lease is valid but the mediator refused the presence: %v", ErrLeaseLost, err)
		}
	}
	switch {
	case permanent(err):
		return EventStopped, err
	case errors.Is(err, ErrDraining):
		return EventDraining, err
	case !errors.Is(err, ErrLeaseLost):
		err = fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return EventLeaseLost, err
}

// permanent reports failures that publishing again cannot cure: the
// principal is revoked, its token is no longer accepted or lacks the role,
// the server refuses the spec, or the socket is gone.
func permanent(err error) bool {
	var pe *ProtocolError
	var ie *InputError
	return errors.Is(err, ErrRevoked) || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) ||
		errors.Is(err, ErrInvalidRequest) || errors.Is(err, ErrClosed) || errors.As(err, &pe) || errors.As(err, &ie)
}

// republishLoop reports loss (with the wait before the first try), then
// tries to publish again with backoff until it succeeds, fails for good, or
// exhausts Republish.Attempts. One idempotency key serves every try, so a
// creation whose answer was lost is replayed, not duplicated.
func (p *Publisher) republishLoop(ctx context.Context, loss Event) (*presenceState, error) {
	bo := Backoff{Min: p.republish.Min, Max: p.republish.Max} // unbounded: tries are counted here
	key := NewIdempotencyKey()
	ev := loss
	for try := 1; ; try++ {
		ev.RetryIn, _ = bo.Next()
		p.emit(ev)
		if err := sleep(ctx, ev.RetryIn); err != nil {
			return nil, err
		}
		ps, err := p.publishAgain(ctx, key)
		if err == nil {
			p.emit(Event{Kind: EventRepublished, Listing: p.ListingID()})
			return ps, nil
		}
		if errors.Is(err, ErrExpired) {
			key = NewIdempotencyKey() // the key's listing is gone: the next try is a new creation
		}
		if permanent(err) || (p.republish.Attempts > 0 && try >= p.republish.Attempts) {
			return nil, err
		}
		ev = Event{Kind: EventRepublishFailed, Listing: loss.Listing, Err: err}
	}
}

// publishAgain creates the listing anew (with the player count and
// attributes last set)
// and makes it current once its first presence refresh is answered.
func (p *Publisher) publishAgain(ctx context.Context, key string) (*presenceState, error) {
	spec := p.spec
	p.mu.Lock()
	if p.players >= 0 {
		spec.CurrentPlayers = p.players
	}
	if p.setAttrs {
		spec.Attributes = p.attrs
	}
	p.mu.Unlock()
	created, err := p.api.CreateListing(ctx, key, spec)
	if err != nil {
		return nil, err
	}
	med, err := resolveMediator(created.Presence.Mediator)
	if err == nil && med != p.sock.Mediator() {
		// Several instances: the new listing may be routed to another.
		p.sock.setMediator(med)
	}
	var ps *presenceState
	if err == nil {
		ps, err = p.startPresence(ctx, created)
	}
	if err != nil {
		p.deleteBestEffort(ctx, created.ListingID, &created.Lease)
		return nil, err
	}
	return ps, nil
}

func (p *Publisher) fatal(err error) {
	p.errv.CompareAndSwap(nil, &err)
	p.log.Warn("publisher stopped", "listing", p.ListingID().String(), "err", err.Error())
	p.emit(Event{Kind: EventStopped, Listing: p.ListingID(), Err: err})
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
