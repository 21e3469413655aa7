package httpapi

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// Client routes that read listings: browse and get
// (docs/contracts/http.md#browse-listings,
// docs/contracts/http.md#get-a-listing). Items are built from each listing's
// pre-encoded document; they never carry a secret, a handle, a host address or
// the owner.

// DefaultBrowseLimit is the page size when limit is not given.
const DefaultBrowseLimit = 50

// parseDecimal parses 1-16 ASCII digits without sign or leading zeros into
// min..max (max below 10^16).
func parseDecimal(b []byte, min, max uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n >= min && n <= max
}

func validRegion(b []byte) bool {
	if len(b) < 1 || len(b) > engine.MaxRegionLen {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// browse answers GET /v1/listings, and reports whether its read decided the
// caller's revocation (serveOp). Apart from encoding into a pooled buffer
// and the strings of attribute filters it does not allocate. Unknown and
// repeated parameters are rejected (browse_query.go). A region of the
// tenant's interner costs nothing; one not in its current generation is
// interned if the browse finds listings.
func (a *API) browse(ctx *fasthttp.RequestCtx, p *Principal) bool {
	s := acquireBuf()
	defer releaseBuf(s)
	q := &s.query
	learn, err := a.parseQuery(ctx, p, q, &s.filters, true)
	if err != nil {
		a.writeInputError(ctx, err)
		return false
	}
	if a.items != nil {
		// The store copies out only what a page shows, and encoding reads
		// it from one small array.
		start := time.Now()
		items, next, r, err := a.browseItems(p, *q, s.items[:0])
		s.items = items
		a.learnRegion(p, q, learn && len(items) > 0)
		writePage(a, ctx, s, q, items, next, r, err, start, func(b []byte, it *engine.BrowseItem) []byte {
			return appendBrowseItem(b, it, &s.times)
		})
		return a.decided(opBrowse, r, err)
	}
	start := time.Now()
	views, more, r, err := a.store.BrowseVisible(context.Background(), *q, s.views[:0])
	s.views = views
	a.learnRegion(p, q, learn && len(views) > 0)
	writePage(a, ctx, s, q, views, viewsNext(q, views, more), r, err, start, func(b []byte, v *engine.ListingView) []byte {
		return appendListingItem(b, v, false)
	})
	return false
}

// viewsNext is where a page of views from a store without BrowseItems
// ended: after its last view, in the order of q (such a store keeps no
// creation stamp in a view, so a created_at walk goes on by ID only).
func viewsNext(q *engine.Browse, views []engine.ListingView, more bool) engine.BrowseNext {
	if !more || len(views) == 0 {
		return engine.BrowseNext{More: more}
	}
	v := &views[len(views)-1]
	return engine.BrowseNext{More: true, After: v.ID, Since: q.Since,
		AfterKey: engine.OrderKey(q.Order, int32(v.CurrentPlayers), int32(v.Spec.MaxPlayers), 0)}
}

// learnRegion interns the region of a browse that found listings (and
// whose region is not already current): it is real, so later browses of it
// need not allocate. A made-up region finds nothing and is never interned.
func (a *API) learnRegion(p *Principal, q *engine.Browse, learn bool) {
	if learn {
		a.regions.add(p.Tenant, q.Region)
	}
}

// listingItem is what a browse page is made of: a full view or a light item.
type listingItem interface {
	engine.ListingView | engine.BrowseItem
}

// writePage answers one browse page of q from the store's answer: the
// items as appendItem encodes them, then next_after (order id only) and
// next_cursor. start is when the store call began.
func writePage[T listingItem](a *API, ctx *fasthttp.RequestCtx, s *scratch, q *engine.Browse, items []T, next engine.BrowseNext,
	r engine.Result, err error, start time.Time, appendItem func([]byte, *T) []byte) {
	if !a.storeAnswered(ctx, opBrowse, r, err, start) {
		return
	}
	b := append(s.b[:0], `{"items":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, &items[i])
	}
	b = append(b, `],"next_after":`...)
	if next.More && q.Order == engine.OrderID {
		b = appendUUID(b, next.After.UUID)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"next_cursor":`...)
	if next.More {
		c := cursorOf(q, &next)
		b = append(b, '"')
		b = c.append(b)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	s.b = append(b, '}')
	sendJSON(ctx, fasthttp.StatusOK, s)
}

// getListing answers GET /v1/listings/{id}: the browse item plus visibility,
// when the listing is joinable now. It reports whether its read decided the
// caller's revocation (serveOp).
func (a *API) getListing(ctx *fasthttp.RequestCtx, p *Principal, id []byte) bool {
	lid, ok := a.parseID(ctx, id, "listing_id")
	if !ok {
		return false
	}
	start := time.Now()
	v, r, err := a.getListingFor(p, engine.GetListing{
		Tenant: p.Tenant, Listing: engine.ListingID{UUID: lid}, Joinable: true,
	})
	if !a.storeAnswered(ctx, opGetListing, r, err, start) {
		return a.decided(opGetListing, r, err)
	}
	s := acquireBuf()
	defer releaseBuf(s)
	b := appendListingItem(s.b[:0], &v, true)
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
	return a.decided(opGetListing, r, nil)
}
