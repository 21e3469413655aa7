package httpapi

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// Client routes that read listings: browse and get (CONTRACT.md §3.4, §3.5).
// Items are built from each listing's pre-encoded document; they never
// carry a secret, a handle, a host address or the owner.

// DefaultBrowseLimit is the page size when limit is not given.
const DefaultBrowseLimit = 50

// parseBrowse reads the query of GET /v1/listings. Unknown and repeated
// parameters are rejected. It does not allocate for a region already seen.
func (a *API) parseBrowse(ctx *fasthttp.RequestCtx, p *Principal, q *engine.Browse) error {
	*q = engine.Browse{Tenant: p.Tenant, Limit: DefaultBrowseLimit}
	var seenProto, seenRegion, seenLimit, seenAfter bool
	var err error
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
			q.Region = a.regions.get(v)
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
	return err
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

// browse answers GET /v1/listings. Apart from encoding into a pooled buffer
// it does not allocate.
func (a *API) browse(ctx *fasthttp.RequestCtx, p *Principal) {
	var q engine.Browse
	if err := a.parseBrowse(ctx, p, &q); err != nil {
		a.writeInputError(ctx, err)
		return
	}
	s := acquireBuf()
	defer releaseBuf(s)
	if a.items != nil {
		a.browseItems(ctx, &q, s)
		return
	}
	items, more, r, err := a.store.BrowseVisible(context.Background(), q, s.views[:0])
	s.views = items
	if err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	a.metrics.outcome(opBrowse, r.Outcome)
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return
	}
	b := append(s.b[:0], `{"items":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendListingItem(b, &items[i], false)
	}
	var last engine.UUID
	if len(items) > 0 {
		last = items[len(items)-1].ID.UUID
	}
	s.b = appendNextAfter(b, more && len(items) > 0, last)
	sendJSON(ctx, fasthttp.StatusOK, s)
}

// browseItems is browse through engine.ItemBrowser: the store copies out
// only what a page shows, and encoding reads it from one small array.
func (a *API) browseItems(ctx *fasthttp.RequestCtx, q *engine.Browse, s *scratch) {
	items, more, r, err := a.items.BrowseItems(context.Background(), *q, s.items[:0])
	s.items = items
	if err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	a.metrics.outcome(opBrowse, r.Outcome)
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return
	}
	b := append(s.b[:0], `{"items":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBrowseItem(b, &items[i], &s.times)
	}
	var last engine.UUID
	if len(items) > 0 {
		last = items[len(items)-1].ID.UUID
	}
	s.b = appendNextAfter(b, more && len(items) > 0, last)
	sendJSON(ctx, fasthttp.StatusOK, s)
}

// appendNextAfter ends a page: the last item's ID as next_after when more
// follow, else null.
func appendNextAfter(b []byte, more bool, last engine.UUID) []byte {
	b = append(b, `],"next_after":`...)
	if more {
		b = appendUUID(b, last)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// getListing answers GET /v1/listings/{id}: the browse item plus visibility,
// when the listing is joinable now.
func (a *API) getListing(ctx *fasthttp.RequestCtx, p *Principal, id []byte) {
	lid, ok := a.parseID(ctx, id, "listing_id")
	if !ok {
		return
	}
	v, r, err := a.store.GetListing(context.Background(), engine.GetListing{
		Tenant: p.Tenant, Listing: engine.ListingID{UUID: lid}, Joinable: true,
	})
	if err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	a.metrics.outcome(opGetListing, r.Outcome)
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return
	}
	s := acquireBuf()
	defer releaseBuf(s)
	b := appendListingItem(s.b[:0], &v, true)
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
}
