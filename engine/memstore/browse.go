package engine

import (
	"context"
	"time"
)

// BrowseVisible walks the ordered index of (tenant, protocol) — or of
// (tenant, protocol, region) when a region is given — from the cursor: the
// index holds exactly the visible listings, so the cost is O(log n + page).
func (s *MemStore) BrowseVisible(ctx context.Context, q Browse, dst []ListingView) ([]ListingView, bool, Result, error) {
	if err := validBrowse(&q); err != nil {
		return dst, false, Result{}, err
	}
	tk := s.tenantKey(q.Tenant)
	now, err := s.begin(ctx)
	if err != nil {
		return dst, false, Result{}, err
	}
	defer s.end()
	if !s.available.Load() {
		return dst, false, Result{Outcome: ServiceUnavailable}, nil
	}
	var page browsePage
	s.browsePage(tk, &q, &page, true)
	for _, li := range page.slots[:page.n] {
		dst = append(dst, s.listingView(li, now))
	}
	return dst, page.more, Result{}, nil
}

// BrowseItem is one listing of a browse page as a client may see it: the
// pre-encoded document and the few live fields, nothing else (no owner,
// lease, handle or host endpoint). It is a fifth of a ListingView's size
// and needs a third of the memory reads to fill.
type BrowseItem struct {
	ID   ListingID
	Doc  []byte       // immutable, shared: CreateListing.Doc
	Spec *ListingSpec // immutable, shared (for a listing stored without a Doc)
	// CurrentPlayers is the live count (renew may change it).
	CurrentPlayers int32
	// LeaseExpiresAt is the lease's wall-clock deadline in Unix
	// milliseconds (informational, as ListingView.LeaseExpiresAt).
	LeaseExpiresAt int64
}

// ItemBrowser is implemented by stores that can answer a browse with
// BrowseItems: the same page, in the same order, with the same more flag,
// outcome and errors as Store.BrowseVisible, at a lower cost. MemStore
// implements it; a transport should use it when the store does.
type ItemBrowser interface {
	BrowseItems(ctx context.Context, q Browse, dst []BrowseItem) (items []BrowseItem, more bool, r Result, err error)
}

var _ ItemBrowser = (*MemStore)(nil)

// BrowseItems is BrowseVisible returning BrowseItems. It does not allocate
// when dst has room for q.Limit items.
func (s *MemStore) BrowseItems(ctx context.Context, q Browse, dst []BrowseItem) ([]BrowseItem, bool, Result, error) {
	if err := validBrowse(&q); err != nil {
		return dst, false, Result{}, err
	}
	tk := s.tenantKey(q.Tenant)
	_, err := s.begin(ctx)
	if err != nil {
		return dst, false, Result{}, err
	}
	defer s.end()
	if !s.available.Load() {
		return dst, false, Result{Outcome: ServiceUnavailable}, nil
	}
	var page browsePage
	s.browsePage(tk, &q, &page, false)
	for _, li := range page.slots[:page.n] {
		l := s.listings.at(li)
		d := &s.docs[li]
		dst = append(dst, BrowseItem{
			ID: l.id, Doc: d.doc, Spec: d.spec, CurrentPlayers: l.players,
			LeaseExpiresAt: s.wallMilli(s.leaseExp.deadline(li)),
		})
	}
	return dst, page.more, Result{}, nil
}

func validBrowse(q *Browse) error {
	if err := q.Tenant.Validate(); err != nil {
		return err
	}
	if q.ProtocolVersion == 0 {
		return errProtocol
	}
	if q.Region != "" && !validRegion(q.Region) {
		return errRegion
	}
	if q.Limit < 1 || q.Limit > BrowsePageMax {
		return errLimit
	}
	return nil
}

// browsePage is the listing slots of one page, in order.
type browsePage struct {
	slots [BrowsePageMax]int32
	n     int
	more  bool
}

// browsePage collects the slots of q's page under the commit lock, then
// reads each listing's record, lease node and document entry once, in a
// loop whose iterations do not depend on each other: the CPU overlaps
// those cache misses (a page's listings are scattered over the heap) before
// the caller's rendering loop, which then hits the cache. full warms every
// line a ListingView reads, not only a BrowseItem's.
func (s *MemStore) browsePage(tk tenantKey, q *Browse, p *browsePage, full bool) {
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
