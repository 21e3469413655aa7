package engine

import "context"

// BrowseVisible walks the ordered index of (tenant, protocol) — or of
// (tenant, protocol, region) when a region is given — from the cursor: the
// index holds exactly the visible listings, so the cost is O(log n + page).
func (s *MemStore) BrowseVisible(ctx context.Context, q Browse, dst []ListingView) ([]ListingView, bool, Result, error) {
	if err := q.Tenant.Validate(); err != nil {
		return dst, false, Result{}, err
	}
	if q.ProtocolVersion == 0 {
		return dst, false, Result{}, errProtocol
	}
	if q.Region != "" && !validRegion(q.Region) {
		return dst, false, Result{}, errRegion
	}
	if q.Limit < 1 || q.Limit > BrowsePageMax {
		return dst, false, Result{}, errLimit
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
	ti := s.findTenant(tk)
	if ti < 0 {
		return dst, false, Result{}, nil
	}
	bi := s.findBrowse(ti, q.ProtocolVersion, q.Region)
	if bi < 0 {
		return dst, false, Result{}, nil
	}
	it := s.browse.at(bi).set.seek(q.After.UUID, q.HasAfter)
	for n := 0; ; n++ {
		e, ok := it.next()
		if !ok {
			return dst, false, Result{}, nil
		}
		if n == q.Limit {
			return dst, true, Result{}, nil
		}
		dst = append(dst, s.listingView(e.slot, now))
	}
}
