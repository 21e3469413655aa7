package redisstore

import (
	"context"
	"strconv"
	"sync"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// browseMirror keeps an instance's local browse index in step with the
// shared state, so a browse page costs one small call to Redis and is
// served from memory. The functions that change what browse shows append
// the listing to a change log in the same call (scripts/prelude/
// 25_browse_log.lua); per page, the instance sends the version its index
// holds and gets the current version with each listing the entries since
// name, as it is now (rdv_browse_sync). It serves the page from an index
// at that version or a later one, so a change acknowledged anywhere
// before the page's call is in the page, and nothing older than the state
// Redis held during the call is served: browse stays linearizable across
// instances.
//
// An index too far behind the log (its version trimmed), on a log that
// went backwards or whose generation changed (a promotion: meta's gen),
// and the first page of an instance, rebuild from a snapshot, in pages
// (rdv_browse_snapshot), then catch up from the version of the first page.
//
// The same log carries the revocations, so the instance's copy of them
// (rev, browse_revocations.go) is at the index's version, and a request
// checks its caller against it without a call of its own.
type browseMirror struct {
	// mu guards the index, the revocations, their version, time and
	// generation; readers page under RLock.
	mu  sync.RWMutex
	idx *browseIndex
	rev *revocationSet
	ver uint64
	// now is the time (ticks) of a call that found the log at ver or
	// later: what the revocations' deadlines are compared with.
	now   int64
	gen   string
	ready bool
	// apply lets one goroutine at a time bring the index forward; the
	// others wait for it and then find the index current enough.
	apply sync.Mutex
	// The pages' reads (browse_flight.go): flying is how many are in
	// flight, next the one the pages arriving meanwhile share, sent when
	// one in flight returns.
	fmu    sync.Mutex
	flying int
	next   *versionFlight
}

const (
	// syncMax is the most log entries one rdv_browse_sync reads.
	syncMax = 2048
	// snapshotPage is the most listings one rdv_browse_snapshot answers.
	snapshotPage = 1000
	// catchUpCalls bounds the calls of one catch-up or rebuild: a log
	// that changes faster than an instance can read it answers
	// ServiceUnavailable rather than loop.
	catchUpCalls = 64
)

// spec is the spec the index holds for listing id (shared, immutable),
// nil when it holds none.
func (m *browseMirror) spec(id engine.UUID) *engine.ListingSpec {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.ready {
		return nil
	}
	li, ok := m.idx.byID[id]
	if !ok {
		return nil
	}
	return m.idx.rest[li].spec
}

// syncHead is the head of an rdv_browse_sync or rdv_browse_snapshot
// answer: the log's current version and generation, the call's time and,
// for a sync, the version its items bring an index to (-1: rebuild), for a
// snapshot whether more pages follow.
type syncHead struct {
	ver  uint64
	gen  string
	upto int64
	now  int64
}

// advance moves the time the revocations are compared with to that of
// head, a call that found the log at the index's version or older: the
// index then holds what Redis held at that call's instant or later.
// Under mu.Lock.
func (m *browseMirror) advance(h *syncHead) {
	if m.ready && m.gen == h.gen && m.ver >= h.ver && h.now > m.now {
		m.now = h.now
	}
}

// current reports whether the index serves what head says Redis holds.
func (m *browseMirror) current(h *syncHead) bool {
	return m.ready && m.gen == h.gen && m.ver >= h.ver
}

// browseCall makes one rdv_browse_sync, rdv_browse_snapshot or
// rdv_browse_revocations call.
func (s *Store) browseCall(ctx context.Context, fn string, args ...string) (syncHead, []rueidis.RedisMessage, engine.Result, error) {
	m, ok, err := s.call(ctx, fn, args...)
	if err != nil {
		return syncHead{}, nil, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	if r.Outcome != engine.Success {
		return syncHead{}, nil, r, nil
	}
	if len(rest) < 4 {
		return syncHead{}, nil, unreachable, nil
	}
	return syncHead{ver: uint64(num(rest[0])), gen: str(rest[1]), upto: num(rest[2]), now: num(rest[3])}, rest[4:], r, nil
}

func (s *Store) browseSync(ctx context.Context, from uint64, max int) (syncHead, []rueidis.RedisMessage, engine.Result, error) {
	return s.browseCall(ctx, "rdv_browse_sync", formatUint(from), strconv.Itoa(max))
}

// browseFresh makes the index serve at least what Redis holds now. The
// page's one call (shared by the pages arriving while another is in
// flight, browseVersion) reads the log's version and the entries the index
// lacks, and applies them: the index then holds that version, and the page
// is served. When the read could not bring it there (more entries than
// one read takes, a trimmed log, a new generation), the page waits for
// m.apply, and the first to take it reads the rest or rebuilds, with calls
// made after every waiter's read, so the waiters behind it find the index
// current without a call of their own.
// On success the caller may page under m.mu.RLock.
func (s *Store) browseFresh(ctx context.Context) (engine.Result, error) {
	m := &s.mirror
	m.mu.RLock()
	ready := m.ready
	m.mu.RUnlock()
	var head syncHead
	if ready {
		var r engine.Result
		var err error
		head, r, err = s.browseVersion(ctx)
		if err != nil || r.Outcome != engine.Success {
			return r, err
		}
		m.mu.RLock()
		ok := m.current(&head)
		m.mu.RUnlock()
		if ok {
			return engine.Result{}, nil
		}
	}
	m.apply.Lock()
	defer m.apply.Unlock()
	return s.catchUp(ctx, ready, head)
}

// catchUp brings the index to head's version or later (under m.apply),
// reading the entries it lacks, or rebuilds. Without a head (an
// instance's first page) it rebuilds, unless another goroutine built the
// index meanwhile. Every call it makes follows head's, so what it brings
// the index to is at least as new.
func (s *Store) catchUp(ctx context.Context, haveHead bool, head syncHead) (engine.Result, error) {
	m := &s.mirror
	m.mu.RLock()
	done, gen, ready, from := haveHead && m.current(&head), m.gen, m.ready, m.ver
	m.mu.RUnlock()
	if done {
		return engine.Result{}, nil
	}
	if !ready || (haveHead && head.gen != gen) {
		return s.rebuild(ctx)
	}
	// Items of successive calls, applied in order, leave each listing as
	// the last call that named it saw it: the state at the last call's
	// version. Applied one call at a time, readers could see a mix of two
	// versions, so they are applied at once.
	var batches [][]rueidis.RedisMessage
	for calls := 0; ; calls++ {
		if calls >= catchUpCalls {
			return unreachable, nil
		}
		next, items, r, err := s.browseSync(ctx, from, syncMax)
		if err != nil || r.Outcome != engine.Success {
			return r, err
		}
		if next.upto < 0 || next.gen != gen {
			return s.rebuild(ctx)
		}
		head = next
		batches = append(batches, items)
		from = uint64(next.upto)
		if from >= next.ver {
			break
		}
	}
	m.mu.Lock()
	ok := true
	if m.ver < head.ver {
		for _, b := range batches {
			for _, it := range b {
				ok = applySyncItem(m.idx, m.rev, it, head.now) && ok
			}
		}
		m.ver = head.ver
	}
	m.advance(&head)
	m.mu.Unlock()
	if !ok {
		// An item it could not read: start again from a snapshot.
		return s.rebuild(ctx)
	}
	return engine.Result{}, nil
}

// rebuild replaces the index with one read from a snapshot: pages of the
// visible listings, then the log from the first page's version, which
// leaves every listing that changed during the pages as it is now.
func (s *Store) rebuild(ctx context.Context) (engine.Result, error) {
	pages := s.lim.MaxListings/snapshotPage + 2
	for attempt := 0; attempt < 3; attempt++ {
		idx, rev := newBrowseIndex(), newRevocationSet(s.lim.MaxRevocations)
		var first syncHead
		after, restart := "", false
		for page := 0; ; page++ {
			if page > pages {
				return unreachable, nil
			}
			h, items, r, err := s.browseCall(ctx, "rdv_browse_snapshot", after, formatUint(snapshotPage))
			if err != nil || r.Outcome != engine.Success {
				return r, err
			}
			if page == 0 {
				first = h
			} else if h.gen != first.gen {
				restart = true
				break
			}
			for _, it := range items {
				if !idx.apply(it) {
					return unreachable, nil
				}
			}
			if h.upto == 0 || len(items) == 0 {
				break
			}
			a, _ := items[len(items)-1].ToArray()
			after = str(a[0])
		}
		if restart {
			continue
		}
		if ok, r, err := s.loadRevocations(ctx, rev, first.gen); err != nil || !ok {
			if err != nil || r.Outcome != engine.Success {
				return r, err
			}
			continue // a new generation
		}
		from, now := first.ver, first.now
		for calls := 0; ; calls++ {
			if calls >= catchUpCalls {
				return unreachable, nil
			}
			h, items, r, err := s.browseSync(ctx, from, syncMax)
			if err != nil || r.Outcome != engine.Success {
				return r, err
			}
			if h.upto < 0 || h.gen != first.gen {
				restart = true
				break
			}
			for _, it := range items {
				if !applySyncItem(idx, rev, it, h.now) {
					return unreachable, nil
				}
			}
			from, now = uint64(h.upto), h.now
			if from == h.ver {
				break
			}
		}
		if restart {
			continue
		}
		m := &s.mirror
		m.mu.Lock()
		m.idx, m.rev, m.ver, m.now, m.gen, m.ready = idx, rev, from, now, first.gen, true
		m.mu.Unlock()
		return engine.Result{}, nil
	}
	return unreachable, nil
}
