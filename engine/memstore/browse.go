package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// BrowseVisible walks the ordered index of (tenant, protocol) — or of
// (tenant, protocol, region) when a region is given — from the cursor: the
// index holds exactly the visible listings, so the cost is O(log n + page).
func (s *Store) BrowseVisible(ctx context.Context, q engine.Browse, dst []engine.ListingView) ([]engine.ListingView, bool, engine.Result, error) {
	var page browsePage
	now, locked, r, err := s.beginPage(ctx, &q, &page, true)
	if !locked {
		return dst, false, r, err
	}
	defer s.end()
	for _, li := range page.slots[:page.n] {
		dst = append(dst, s.listingView(li, now))
	}
	return dst, page.more, engine.Result{}, nil
}

var _ engine.ItemBrowser = (*Store)(nil)

// BrowseItems is BrowseVisible returning BrowseItems. It does not allocate
// when dst has room for q.Limit items.
func (s *Store) BrowseItems(ctx context.Context, q engine.Browse, dst []engine.BrowseItem) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error) {
	var page browsePage
	_, locked, r, err := s.beginPage(ctx, &q, &page, false)
	if !locked {
		return dst, engine.BrowseNext{}, r, err
	}
	defer s.end()
	for _, li := range page.slots[:page.n] {
		l := s.listings.at(li)
		d := &s.docs[li]
		dst = append(dst, engine.BrowseItem{
			ID: l.id, Doc: d.doc, Spec: d.spec, CurrentPlayers: l.players,
			LeaseExpiresAt: s.wallMilli(s.leaseExp.deadline(li)),
		})
	}
	return dst, page.next(&q, dst), engine.Result{}, nil
}

// next is where page p of q ended, items its last items.
func (p *browsePage) next(q *engine.Browse, items []engine.BrowseItem) engine.BrowseNext {
	if !p.more || len(items) == 0 {
		return engine.BrowseNext{More: p.more}
	}
	return engine.BrowseNext{More: true, After: items[len(items)-1].ID, Since: q.Since}
}

// beginPage validates q, takes the commit lock and collects q's page into p
// (warming what full says, see browsePage). Only when it reports locked does
// the caller hold the lock, and must then call s.end().
func (s *Store) beginPage(ctx context.Context, q *engine.Browse, p *browsePage, full bool) (now time.Duration, locked bool, r engine.Result, err error) {
	if err := engine.ValidateBrowse(q); err != nil {
		return 0, false, engine.Result{}, err
	}
	tk := s.tenantKey(q.Tenant)
	now, locked, r, err = s.beginAvailable(ctx)
	if locked {
		s.browsePage(tk, q, p, full)
	}
	return now, locked, r, err
}

// browsePage is the listing slots of one page, in order.
type browsePage struct {
	slots [engine.BrowsePageMax]int32
	n     int
	more  bool
}

// browsePage collects the slots of q's page under the commit lock, then
// reads each listing's record, lease node and document entry once, in a
// loop whose iterations do not depend on each other: the CPU overlaps
// those cache misses (a page's listings are scattered over the heap) before
// the caller's rendering loop, which then hits the cache. full warms every
// line a ListingView reads, not only a BrowseItem's.
func (s *Store) browsePage(tk tenantKey, q *engine.Browse, p *browsePage, full bool) {
	ti := s.findTenant(tk)
	if ti < 0 {
		return
	}
	bi := s.findBrowse(ti, q.ProtocolVersion, q.Region)
	if bi < 0 {
		return
	}
	it := s.browse.at(bi).set.seek(q.After.UUID, q.HasAfter)
	for {
		e, ok := it.next()
		if !ok {
			break
		}
		if p.n == q.Limit {
			p.more = true
			break
		}
		p.slots[p.n] = e.slot
		p.n++
	}
	var sink time.Duration
	for _, li := range p.slots[:p.n] {
		l := s.listings.at(li)
		sink += time.Duration(l.players) + s.leaseExp.nd[li].dl + time.Duration(len(s.docs[li].doc))
		if full {
			// A ListingView also reads lines 0 and 2 of the record.
			sink += time.Duration(l.lastSeq + l.version)
		}
	}
	s.warmSink += uint64(sink)
}
