package redisstore

import (
	"context"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// versionFlight is one read of the log (rdv_browse_sync from the index's
// version) shared by the pages that wait for it.
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

// fly makes flight f's read, applies the changes it brought, answers its
// waiters and sends the next
// flight, if pages gathered for one meanwhile, from a goroutine of its own
// (this one's page is answered).
func (s *Store) fly(ctx context.Context, f *versionFlight) {
	m := &s.mirror
	m.mu.RLock()
	from := m.ver
	m.mu.RUnlock()
	var items []rueidis.RedisMessage
	f.head, items, f.r, f.err = s.browseSync(context.WithoutCancel(ctx), from, syncMax)
	if f.err == nil && f.r.Outcome == engine.Success && f.head.upto >= 0 && uint64(f.head.upto) == f.head.ver {
		// The read brought every change since from: apply them before the
		// waiters look and before the next read, which then starts from
		// here. (Reads that came short, or a new generation, leave the
		// index to catchUp.)
		m.mu.Lock()
		if m.ready && m.gen == f.head.gen && m.ver >= from && m.ver < f.head.ver {
			ok := true
			for _, it := range items {
				ok = m.idx.apply(it) && ok
			}
			if ok {
				m.ver = f.head.ver
			} else {
				m.ready = false // an item it could not read: rebuild
			}
		}
		m.mu.Unlock()
	}
	close(f.done)
	m.fmu.Lock()
	next := m.next
	m.flying, m.next = next, nil
	m.fmu.Unlock()
	if next != nil {
		go s.fly(context.WithoutCancel(ctx), next)
	}
}
