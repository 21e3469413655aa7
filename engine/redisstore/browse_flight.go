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

// flightsMax is how many reads the pages of one instance have in flight
// at once: a page arriving while fewer fly sends its own; past it, pages
// gather for the next. One: on a loaded machine, sixteen concurrent pages
// then cost Redis about one read per six pages (0.16 calls per page,
// against 0.39 with four in flight) for as many pages per second.
const flightsMax = 1

// browseVersion answers the log's version and generation as Redis holds
// them at some instant after the call of browseVersion began, in at most
// one call of its own, having applied the changes that read brought. While
// flightsMax reads are in flight, arriving pages cannot use them (they may
// have been answered before the pages arrived), so they share the next
// read, sent as soon as one in flight returns: however many pages arrive
// at once, the reads in flight stay few, and the Redis CPU per page falls
// with the concurrency.
func (s *Store) browseVersion(ctx context.Context) (syncHead, engine.Result, error) {
	m := &s.mirror
	m.fmu.Lock()
	if m.flying < flightsMax {
		m.flying++
		m.fmu.Unlock()
		f := &versionFlight{done: make(chan struct{})}
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
	if f.err == nil && f.r.Outcome == engine.Success {
		// A read that brought every change since from: apply them before
		// the waiters look and before the next read, which then starts
		// from here. (Reads that came short, or a new generation, leave
		// the index to catchUp.)
		full := f.head.upto >= 0 && uint64(f.head.upto) == f.head.ver
		m.mu.Lock()
		if full && m.ready && m.gen == f.head.gen && m.ver >= from && m.ver < f.head.ver {
			ok := true
			for _, it := range items {
				ok = applySyncItem(m.idx, m.rev, it, f.head.now) && ok
			}
			if ok {
				m.ver = f.head.ver
			} else {
				m.ready = false // an item it could not read: rebuild
			}
		}
		m.advance(&f.head)
		m.mu.Unlock()
	}
	close(f.done)
	m.fmu.Lock()
	next := m.next
	if next == nil {
		m.flying--
	}
	m.next = nil
	m.fmu.Unlock()
	if next != nil {
		go s.fly(context.WithoutCancel(ctx), next)
	}
}
