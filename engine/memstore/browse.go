package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// BrowseVisible walks the browse indexes of (tenant, protocol) — or of
// (tenant, protocol, region) when a region is given — from the cursor, in
// q's order and filter (BrowseScope.Walk): the indexes hold exactly the
// visible listings, so the cost is O(log n + page) for the common queries
// and never more than engine.BrowseExamineMax entries.
func (s *Store) BrowseVisible(ctx context.Context, q engine.Browse, dst []engine.ListingView) ([]engine.ListingView, bool, engine.Result, error) {
	var page BrowsePage
	now, locked, r, err := s.beginPage(ctx, &q, &page, true)
	if !locked {
		return dst, false, r, err
	}
	defer s.end()
	for _, li := range page.Slots[:page.N] {
		dst = append(dst, s.listingView(li, now))
	}
	return dst, page.Next.More, engine.Result{}, nil
}

var _ engine.ItemBrowser = (*Store)(nil)

// BrowseItems is BrowseVisible returning BrowseItems and where the walk
// goes on. It does not allocate when dst has room for q.Limit items.
func (s *Store) BrowseItems(ctx context.Context, q engine.Browse, dst []engine.BrowseItem) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error) {
	var page BrowsePage
	_, locked, r, err := s.beginPage(ctx, &q, &page, false)
	if !locked {
		return dst, engine.BrowseNext{}, r, err
	}
	defer s.end()
	for _, li := range page.Slots[:page.N] {
		l := s.listings.at(li)
		d := &s.docs[li]
		dst = append(dst, engine.BrowseItem{
			ID: l.id, Doc: d.doc, Spec: d.spec, CurrentPlayers: l.players, Attributes: d.attrs,
			LeaseExpiresAt: s.wallMilli(s.leaseExp.deadline(li)),
		})
	}
	return dst, page.Next, engine.Result{}, nil
}

// beginPage validates q, takes the commit lock and collects q's page into p
// (warming what full says, see browsePage). Only when it reports locked does
// the caller hold the lock, and must then call s.end().
func (s *Store) beginPage(ctx context.Context, q *engine.Browse, p *BrowsePage, full bool) (now time.Duration, locked bool, r engine.Result, err error) {
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

// scopeOf returns the browse indexes q walks, or nil when no listing of
// q's scope was ever public.
func (s *Store) scopeOf(tk tenantKey, q *engine.Browse) *BrowseScope {
	ti := s.findTenant(tk)
	if ti < 0 {
		return nil
	}
	bi := s.findBrowse(ti, q.ProtocolVersion, q.Region)
	if bi < 0 {
		return nil
	}
	return &s.browse.at(bi).scope
}

// browsePage collects the slots of q's page under the commit lock, then
// reads each listing's record, lease node and document entry once, in a
// loop whose iterations do not depend on each other: the CPU overlaps
// those cache misses (a page's listings are scattered over the heap) before
// the caller's rendering loop, which then hits the cache. full warms every
// line a ListingView reads, not only a BrowseItem's.
func (s *Store) browsePage(tk tenantKey, q *engine.Browse, p *BrowsePage, full bool) {
	s.scopeOf(tk, q).Walk(q, s.bents, s.browseVersion, p)
	var sink time.Duration
	for _, li := range p.Slots[:p.N] {
		l := s.listings.at(li)
		sink += time.Duration(l.players) + s.leaseExp.nd[li].dl + time.Duration(len(s.docs[li].doc)+len(s.docs[li].attrs))
		if full {
			// A ListingView also reads lines 0 and 2 of the record.
			sink += time.Duration(l.lastSeq + l.version)
		}
	}
	s.warmSink += uint64(sink)
}
