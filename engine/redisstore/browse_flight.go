package redisstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// versionFlight is one version read (rdv_browse_sync with no entries)
// shared by the pages that wait for it.
type versionFlight struct {
	done chan struct{}
	head syncHead
	r    engine.Result
	err  error
}

// browseVersion answers the log's version and generation as Redis holds
// them at some instant after the call of browseVersion began, in at most
// one call of its own. Pages arriving while a read is in flight cannot use
// it (it may have been answered before they arrived), so they share the
// next one, sent as soon as the one in flight returns: however many pages
// arrive at once, one read is in flight and one gathers pages, and the
// Redis CPU per page falls with the concurrency, never below one read per
// round trip.
func (s *Store) browseVersion(ctx context.Context) (syncHead, engine.Result, error) {
	m := &s.mirror
	m.fmu.Lock()
	if m.flying == nil {
		f := &versionFlight{done: make(chan struct{})}
		m.flying = f
		m.fmu.Unlock()
		s.fly(ctx, f)
		return f.head, f.r, f.err
	}
	if m.next == nil {
		m.next = &versionFlight{done: make(chan struct{})}
	}
	f := m.next
	m.fmu.Unlock()
	select {
	case <-f.done:
		return f.head, f.r, f.err
	case <-ctx.Done():
		return syncHead{}, engine.Result{}, ctx.Err()
	}
}

// fly makes flight f's read, answers its waiters and sends the next
// flight, if pages gathered for one meanwhile, from a goroutine of its own
// (this one's page is answered).
func (s *Store) fly(ctx context.Context, f *versionFlight) {
	m := &s.mirror
	m.mu.RLock()
	from := m.ver
	m.mu.RUnlock()
	f.head, _, f.r, f.err = s.browseSync(context.WithoutCancel(ctx), from, 0)
	close(f.done)
	m.fmu.Lock()
	next := m.next
	m.flying, m.next = next, nil
	m.fmu.Unlock()
	if next != nil {
		go s.fly(context.WithoutCancel(ctx), next)
	}
}
