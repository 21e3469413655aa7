package client

import (
	"context"
	"errors"
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
)

// refreshFollowing is one presence round: up to presenceTries refreshes,
// the wait doubling from presenceRTO; after each unanswered one the
// listing's mediator is re-resolved, and when it moved the next try goes
// to the new one at once.
func (p *Publisher) refreshFollowing(ctx context.Context, ps *presenceState) (answer, error) {
	rto := presenceRTO
	var err error
	for range presenceTries {
		var a answer
		if a, err = p.sock.refresh(ctx, ps, 1, rto); !errors.Is(err, ErrMediatorTimeout) {
			return a, err
		}
		if p.reresolve(ctx) {
			rto = presenceRTO
			continue
		}
		rto *= 2
	}
	return answer{}, err
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
