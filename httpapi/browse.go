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

// parseBrowse reads the query of GET /v1/listings. Unknown and repeated
// parameters are rejected. It does not allocate for a region of the
// tenant's interner. learn is set when the query names a region not in the
// interner's current generation: the browse interns it if it finds listings.
func (a *API) parseBrowse(ctx *fasthttp.RequestCtx, p *Principal, q *engine.Browse) (learn bool, err error) {
	*q = engine.Browse{Tenant: p.Tenant, Limit: DefaultBrowseLimit}
	var seenProto, seenRegion, seenLimit, seenAfter bool
	dup := func(seen *bool, field string) bool {
		if *seen && err == nil {
			err = &engine.InputError{Field: field, Reason: "is given more than once"}
		}
		*seen = true
		return err == nil
	}
	for k, v := range ctx.QueryArgs().All() {
		if err != nil {
			break
		}
		switch string(k) {
		case "protocol_version":
			if !dup(&seenProto, "protocol_version") {
				break
			}
			n, ok := parseDecimal(v, 1, maxUint32)
			if !ok {
				err = &engine.InputError{Field: "protocol_version", Reason: "must be an integer in 1..4294967295"}
				break
			}
			q.ProtocolVersion = uint32(n)
		case "region":
			if !dup(&seenRegion, "region") {
				break
			}
			if !validRegion(v) {
				err = &engine.InputError{Field: "region", Reason: "must be 1-32 characters of [a-z0-9-]"}
				break
			}
			r, ok, current := a.regions.lookup(p.Tenant, v)
			if !ok {
				r = string(v)
			}
			q.Region, learn = r, !current
		case "limit":
			if !dup(&seenLimit, "limit") {
				break
			}
			n, ok := parseDecimal(v, 1, engine.BrowsePageMax)
			if !ok {
				err = &engine.InputError{Field: "limit", Reason: "must be an integer in 1..100"}
				break
			}
			q.Limit = int(n)
		case "after":
			if !dup(&seenAfter, "after") {
				break
			}
			u, ok := engine.ParseUUID(v)
			if !ok {
				err = &engine.InputError{Field: "after", Reason: "must be a UUID (8-4-4-4-12 hex)"}
				break
			}
			q.After, q.HasAfter = engine.ListingID{UUID: u}, true
		default:
			err = unknownField(k)
		}
	}
	if err == nil && !seenProto {
		err = missingField("protocol_version")
	}
	return learn, err
}

// parseDecimal parses 1-10 ASCII digits without sign or leading zeros into
// min..max.
func parseDecimal(b []byte, min, max uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 10 || (len(b) > 1 && b[0] == '0') {
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
// caller's revocation (serveOp). Apart from encoding into a pooled buffer it
// does not allocate.
func (a *API) browse(ctx *fasthttp.RequestCtx, p *Principal) bool {
	var q engine.Browse
	learn, err := a.parseBrowse(ctx, p, &q)
	if err != nil {
		a.writeInputError(ctx, err)
		return false
	}
	s := acquireBuf()
	defer releaseBuf(s)
	if a.items != nil {
		// The store copies out only what a page shows, and encoding reads
		// it from one small array.
		start := time.Now()
		items, next, r, err := a.browseItems(p, q, s.items[:0])
		s.items = items
		a.learnRegion(p, &q, learn && len(items) > 0)
		writePage(a, ctx, s, items, next.More, r, err, start, func(b []byte, it *engine.BrowseItem) []byte {
			return appendBrowseItem(b, it, &s.times)
		})
		return a.decided(opBrowse, r, err)
	}
	start := time.Now()
	views, more, r, err := a.store.BrowseVisible(context.Background(), q, s.views[:0])
	s.views = views
	a.learnRegion(p, &q, learn && len(views) > 0)
	writePage(a, ctx, s, views, more, r, err, start, func(b []byte, v *engine.ListingView) []byte {
		return appendListingItem(b, v, false)
	})
	return false
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

// writePage answers one browse page from the store's answer: the items as
// appendItem encodes them, then next_after. start is when the store call began.
func writePage[T listingItem](a *API, ctx *fasthttp.RequestCtx, s *scratch, items []T, more bool,
	r engine.Result, err error, start time.Time, appendItem func([]byte, *T) []byte) {
	if err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	a.metrics.outcome(opBrowse, r.Outcome, start)
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return
	}
	b := append(s.b[:0], `{"items":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, &items[i])
	}
	s.b = append(b, `],"next_after":`...)
	if more && len(items) > 0 {
		s.b = appendLastID(s.b, &items[len(items)-1])
	} else {
		s.b = append(s.b, "null"...)
	}
	s.b = append(s.b, '}')
	sendJSON(ctx, fasthttp.StatusOK, s)
}

// appendLastID appends the listing ID of a page's last item.
func appendLastID[T listingItem](b []byte, it *T) []byte {
	switch v := any(it).(type) {
	case *engine.ListingView:
		return appendUUID(b, v.ID.UUID)
	case *engine.BrowseItem:
		return appendUUID(b, v.ID.UUID)
	}
	panic("BUG: unknown listing item")
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
	if err != nil {
		a.writeStoreError(ctx, err)
		return false
	}
	a.metrics.outcome(opGetListing, r.Outcome, start)
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return a.decided(opGetListing, r, nil)
	}
	s := acquireBuf()
	defer releaseBuf(s)
	b := appendListingItem(s.b[:0], &v, true)
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
	return a.decided(opGetListing, r, nil)
}
