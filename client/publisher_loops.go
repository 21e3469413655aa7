package client

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// serve runs one listing's two loops (lease renewal, which may wait on
// HTTP retries, must never delay the presence heartbeat) until one of them
// fails or ctx ends, and returns that failure (nil when ctx ended).
func (p *Publisher) serve(ctx context.Context, ps *presenceState) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- p.runPresence(sctx, ps) }()
	go func() { errc <- p.runLease(sctx) }()
	err := <-errc
	cancel()
	<-errc
	return err
}

// runPresence refreshes presence and handles offers. It returns when ctx
// ends (nil), the socket fails (ErrClosed) or the mediator refuses the
// presence (the listing is gone, or the server no longer knows its
// capability: it restarted).
func (p *Publisher) runPresence(ctx context.Context, ps *presenceState) error {
	interval := refreshEvery(p.created.Presence)
	presence := time.NewTicker(interval)
	defer presence.Stop()
	seen := make(map[engine.Handle]time.Time) // offers already handled, by expiry
	sem := make(chan struct{}, maxHostBinds)  // concurrent binds
	unreachable := false                      // EventUnreachable sent for this outage
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.sock.Done():
			return ErrClosed
		case <-presence.C:
			a, err := p.refreshFollowing(ctx, ps, !unreachable)
			switch {
			case err == nil:
				p.mu.Lock()
				p.public = a.mapped
				p.mu.Unlock()
				if unreachable {
					presence.Reset(interval)
				}
				unreachable = false
			case errors.Is(err, ErrNotFound) || errors.Is(err, ErrRevoked) || errors.Is(err, ErrUnauthorized):
				return fmt.Errorf("presence: %w", err)
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, ErrMediatorTimeout) && !unreachable:
				// Try again (and re-resolve the mediator) every second until
				// answered; say so once instead of going silent.
				unreachable = true
				presence.Reset(unansweredEvery)
				p.emit(Event{Kind: EventUnreachable, Listing: p.ListingID(), Err: err})
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
// transient failures while the lease still runs. It returns nil when ctx
// ends, else the failure that ends the listing.
func (p *Publisher) runLease(ctx context.Context) error {
	renew := time.NewTimer(p.renewIn())
	defer renew.Stop()
	leaseEnd := time.Now().Add(p.leaseTTL()) // by the monotonic clock
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-renew.C:
		}
		err := p.renewLease(ctx)
		switch {
		case err == nil:
			leaseEnd = time.Now().Add(p.leaseTTL())
			renew.Reset(p.renewIn())
		case ctx.Err() != nil:
			return nil
		case transient(err) && time.Until(leaseEnd) > time.Second:
			// The lease still runs: try again soon, well before it ends.
			p.log.Warn("lease renewal failed, retrying while the lease runs", "err", err.Error())
			renew.Reset(min(time.Second, time.Until(leaseEnd)/4))
		case transient(err):
			return fmt.Errorf("%w: renewal kept failing until the lease ended: %w", ErrLeaseLost, err)
		default:
			return err
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
	unanswered, code := failure(err)
	return unanswered || code == "service_unavailable" || code == "capacity_exceeded"
}

func (p *Publisher) renewIn() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.lease.TTL/renewFraction, 100*time.Millisecond)
}

// renewLease renews by compare-and-swap, resynchronising the version from a
// 409's current_version (a retried renewal whose first answer was lost looks
// exactly like that). A listing gone for good is ErrLeaseLost wrapping the
// server's outcome (ErrRevoked, ErrNotFound, ErrExpired).
func (p *Publisher) renewLease(ctx context.Context) error {
	p.mu.Lock()
	id, lease := p.created.ListingID, p.lease
	r := Renewal{CurrentPlayers: p.players, SetAttributes: p.setAttrs, Attributes: p.attrs}
	p.mu.Unlock()
	var err error
	var mediator string
	for range maxRenewResync {
		mediator, err = p.api.renewLease(ctx, id, &lease, r)
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
		current := p.created.ListingID == id
		if current {
			p.lease = lease
		}
		p.mu.Unlock()
		if current {
			p.follow(id, mediator)
		}
		return nil
	case errors.Is(err, ErrRevoked):
		return fmt.Errorf("%w: the publisher's principal is revoked: %w", ErrLeaseLost, err)
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrExpired):
		return fmt.Errorf("%w: %w", ErrLeaseLost, err)
	}
	return err
}

// bindAttempt binds the host side of one offered attempt and queues its
// introduction for Accept.
func (p *Publisher) bindAttempt(ctx context.Context, ps *presenceState, h engine.Handle, deadline time.Time) {
	defer p.binds.Done()
	side := &attemptSide{kind: stun.KindAttemptHost, h: h, key: engine.HostAttemptCapability(&ps.key, h),
		local: ps.local, deadline: deadline, start: time.Now()}
	listing := p.ListingID()
	side.relay = func(ctx context.Context) (*Relay, error) { return p.api.HostRelay(ctx, listing, Handle(h.UUID)) }
	b, err := p.sock.bind(ctx, side.kind, side.h, side.key, side.local, netip.AddrPort{}, deadline)
	if err != nil {
		p.log.Info("attempt bind ended without introduction", "attempt", h.String(), "err", err.Error())
		return
	}
	in := b.intro
	if b.relayOnly {
		side.relayOnly = true
		in = Introduction{Attempt: Handle(h.UUID)}
	}
	in.side = side
	select {
	case p.accepted <- in:
	default:
		p.log.Warn("accept backlog full: introduction dropped", "attempt", h.String())
	}
}
