package redisstore

import (
	"context"
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
)

var _ engine.ItemBrowser = (*Store)(nil)

// BrowseItems is BrowseVisible served from the instance's local browse
// index (browse_mirror.go): one small call brings the index to what Redis
// holds, then the page is read from memory, walked as the in-memory store
// walks it (filters, orders, continuation, examination bound). Same page,
// order, more flag and outcomes as BrowseVisible.
func (s *Store) BrowseItems(ctx context.Context, q engine.Browse, dst []engine.BrowseItem) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error) {
	return s.browseItems(ctx, q, dst, nil)
}

// browseItems is BrowseItems; with subject, Revoked while *subject has a
// revocation, global or confined to q.Tenant, at the page's instant
// (BrowseItemsAs).
func (s *Store) browseItems(ctx context.Context, q engine.Browse, dst []engine.BrowseItem, subject *engine.Subject) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error) {
	if err := engine.ValidateBrowse(&q); err != nil {
		return dst, engine.BrowseNext{}, engine.Result{}, err
	}
	r, err := s.browseFresh(ctx)
	if err != nil || r.Outcome != engine.Success {
		return dst, engine.BrowseNext{}, r, err
	}
	m := &s.mirror
	m.mu.RLock()
	if subject != nil && m.rev.revoked(&q.Tenant, *subject, m.now) {
		m.mu.RUnlock()
		return dst, engine.BrowseNext{}, engine.Result{Outcome: engine.Revoked}, nil
	}
	dst, next := m.idx.page(&q, m.ver, dst, s.wallMilli)
	m.mu.RUnlock()
	return dst, next, engine.Result{}, nil
}

// wallMilli is wall(ticks) in Unix milliseconds.
func (s *Store) wallMilli(ticks int64) int64 { return s.wall(ticks).UnixMilli() }

func formatUint(n uint64) string { return strconv.FormatUint(n, 10) }
