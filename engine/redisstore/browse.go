package redisstore

import (
	"context"
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
)

// BrowseVisible is one call (browse.lua): a page of the visible listings
// of one (tenant, protocol[, region]) from the browse index.
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
	return dst, replayFlag(rest), r, nil
}
