package client

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// With several server instances, a listing's mediator is the instance its
// presence last reached while that one serves. When it dies (or drains),
// the server names another in every lease renewal's answer: a Publisher
// whose refreshes go unanswered renews to learn it, moves its socket there
// and carries on with the same listing.

const (
	// unansweredEvery is the presence cadence while the mediator is silent.
	unansweredEvery = time.Second
	// reresolveTimeout bounds one re-resolution (a lease renewal).
	reresolveTimeout = 2 * time.Second
	// followPace: while a mediator that answered the round before is
	// silent, the listing's mediator is re-resolved this often, so the
	// move follows a dead instance's lease expiry this soon.
	followPace = 250 * time.Millisecond
)

// refreshEvery is the presence cadence: nine tenths of the interval the
// server told (at most a third of the TTL), so that a dead mediator is
// noticed in time.
//
// The worst case from a dead instance's lease expiry to a refresh accepted
// by another: it died just after an answered refresh and its lease expires
// lease/4 (its renewal period) sooner than a full lease after; the next
// round starts refreshEvery after that refresh and re-resolves followPace
// into it: refreshEvery − 3/4 lease + followPace, 4.5 − 2.25 + 0.25 = 2.5 s
// at the defaults (5 s interval, 3 s lease), plus one lease renewal and one
// refresh round trip.
func refreshEvery(g PresenceGrant) time.Duration {
	return max(min(g.Interval, g.TTL/3)*9/10, 100*time.Millisecond)
}

// refreshFollowing is one presence round: up to presenceTries refreshes,
// the wait doubling from presenceRTO; after each unanswered one the
// listing's mediator is re-resolved, and when it moved the next try goes
// to the new one at once. When the mediator answered the round before
// (fast: it just went silent, perhaps died), it is also re-resolved every
// followPace while each try waits; the round (3.5 s) outlasts the default
// instance lease, so a dead instance's lease expires within it. After a
// silent round (a long outage) only between tries: no need to press the
// server.
func (p *Publisher) refreshFollowing(ctx context.Context, ps *presenceState, fast bool) (answer, error) {
	rto := presenceRTO
	var err error
	for range presenceTries {
		var a answer
		moved := false
		if fast {
			a, moved, err = p.refreshResolving(ctx, ps, rto)
		} else {
			a, err = p.sock.refresh(ctx, ps, 1, rto)
		}
		if !errors.Is(err, ErrMediatorTimeout) {
			return a, err
		}
		if moved || p.reresolve(ctx) {
			rto = presenceRTO
			continue
		}
		rto *= 2
	}
	return answer{}, err
}

// refreshResolving is one refresh waiting up to rto while the listing's
// mediator is re-resolved every followPace; when it moved, the wait ends
// early (moved, ErrMediatorTimeout) so the next try goes to the new one.
func (p *Publisher) refreshResolving(ctx context.Context, ps *presenceState, rto time.Duration) (answer, bool, error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var moved atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(followPace)
		defer t.Stop()
		for {
			select {
			case <-tctx.Done():
				return
			case <-t.C:
			}
			if p.reresolve(tctx) {
				moved.Store(true)
				cancel()
				return
			}
		}
	}()
	a, err := p.sock.refresh(tctx, ps, 1, rto)
	cancel()
	<-done
	if err != nil && moved.Load() && ctx.Err() == nil {
		return answer{}, true, ErrMediatorTimeout
	}
	return a, false, err
}

// reresolve asks the server for the listing's current mediator (by
// renewing its lease) and follows it; it reports whether it moved.
func (p *Publisher) reresolve(ctx context.Context) bool {
	before := p.sock.Mediator()
	rctx, cancel := context.WithTimeout(ctx, reresolveTimeout)
	defer cancel()
	if err := p.renewLease(rctx); err != nil {
		p.log.Debug("cannot re-resolve the mediator", "err", err.Error())
		return false
	}
	return p.sock.Mediator() != before
}

// follow moves the socket to mediator, the one the server named for
// listing id, when it differs and is usable.
func (p *Publisher) follow(id ListingID, mediator string) {
	if mediator == "" {
		return // a server that does not route
	}
	med, err := resolveMediator(mediator)
	if err != nil || med == p.sock.Mediator() {
		return
	}
	p.sock.setMediator(med)
	p.log.Info("listing's mediator moved", "listing", id.String(), "mediator", med.String())
	p.emit(Event{Kind: EventMediatorMoved, Listing: id, Mediator: med})
}
