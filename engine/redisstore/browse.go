package redisstore

import (
	"context"
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// BrowseVisible is one call (browse.lua): a page of the visible listings
// of one (tenant, protocol[, region]) from the browse index. A page with a
// filter or in another order than ascending IDs is walked on the local
// browse index (one small sync call, as BrowseItems), and the views of the
// listings it found are read in the one call: a listing that went in
// between is left out (the page comes short, as under any churn).
func (s *Store) BrowseVisible(ctx context.Context, q engine.Browse, dst []engine.ListingView) ([]engine.ListingView, bool, engine.Result, error) {
	if err := engine.ValidateBrowse(&q); err != nil {
		return dst, false, engine.Result{}, err
	}
	var a [brArgs]string
	a[brTenant], a[brProtocol], a[brRegion] = tenantArg(q.Tenant), strconv.FormatUint(uint64(q.ProtocolVersion), 10), q.Region
	if q.HasAfter {
		a[brAfter] = uuidArg(q.After.UUID)
	}
	a[brLimit] = strconv.Itoa(q.Limit)
	walked, more := false, false
	if !q.Filter.IsZero() || q.Order != engine.OrderID || q.Desc {
		r, err := s.browseFresh(ctx)
		if err != nil || r.Outcome != engine.Success {
			return dst, false, r, err
		}
		var p memstore.BrowsePage
		m := &s.mirror
		m.mu.RLock()
		m.idx.walk(&q, m.ver, &p)
		ids := make([]byte, 0, 36*p.N)
		for _, li := range p.Slots[:p.N] {
			ids = m.idx.ents[li].ID.AppendText(ids)
		}
		m.mu.RUnlock()
		if p.N == 0 {
			return dst, p.Next.More, engine.Result{}, nil
		}
		a[brIDs], walked, more = string(ids), true, p.Next.More
	}
	m, ok, err := s.call(ctx, "rdv_browse", a[:]...)
	if err != nil {
		return dst, false, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	if r.Outcome != engine.Success || len(rest) < 2 {
		return dst, false, r, nil
	}
	views, _ := rest[1].ToArray()
	n := len(dst)
	for _, vm := range views {
		v, ok := s.listingView(vm)
		if !ok {
			return dst[:n], false, engine.Result{Outcome: engine.ServiceUnavailable}, nil
		}
		dst = append(dst, v)
	}
	if walked {
		return dst, more, r, nil
	}
	return dst, replayFlag(rest), r, nil
}
