package httpapi

import (
	"bytes"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// The query of a browse and of a quick join
// (docs/contracts/http.md#browse-listings, docs/contracts/http.md#quick-join):
// protocol, region and the filters of
// docs/contracts/semantics.md#filters-and-order, plus, for a browse only,
// limit, order and where to go on (after or cursor). Every parameter may be
// given once; an unknown, malformed or repeated one is a 400 naming it.

// queryFilters is where a query's attribute filters are collected: fixed
// arrays in the request's scratch, so a filtered browse allocates only the
// strings it names.
type queryFilters struct {
	strs [engine.MaxBrowseFilters]engine.StringFilter
	nums [engine.MaxBrowseFilters]engine.NumberFilter
	vals [engine.MaxBrowseFilters * engine.MaxFilterValues]string
}

// queryState tracks what a query gave, for the repeated and combination
// checks.
type queryState struct {
	proto, region, limit, after, cursor, order, minFree, minPlayers, maxPlayers bool
	cur                                                                         cursor
	nvals                                                                       int
}

// parseQuery reads the query of a browse (forBrowse) or a quick join into q,
// filters holding its attribute filters. learn is as parseBrowse's.
func (a *API) parseQuery(ctx *fasthttp.RequestCtx, p *Principal, q *engine.Browse, filters *queryFilters, forBrowse bool) (learn bool, err error) {
	*q = engine.Browse{Tenant: p.Tenant, Limit: DefaultBrowseLimit}
	q.Filter.Strings, q.Filter.Numbers = filters.strs[:0], filters.nums[:0]
	var st queryState
	for k, v := range ctx.QueryArgs().All() {
		if learn, err = a.queryParam(p, q, filters, &st, k, v, forBrowse, learn); err != nil {
			return learn, err
		}
	}
	if !st.proto {
		return learn, missingField("protocol_version")
	}
	if st.after && q.Order != engine.OrderID {
		return learn, &engine.InputError{Field: "after", Reason: "continues only order=id; other orders go on with cursor"}
	}
	if st.cursor {
		if st.after {
			return learn, &engine.InputError{Field: "cursor", Reason: "cannot be given with after"}
		}
		if st.cur.order != q.Order || st.cur.desc != q.Desc {
			return learn, &engine.InputError{Field: "cursor", Reason: "was issued for another order: repeat the query that returned it"}
		}
		q.HasAfter, q.After, q.AfterKey, q.Since = true, st.cur.after, st.cur.key, st.cur.since
	}
	return learn, nil
}

// queryParam reads one parameter k=v of a query.
func (a *API) queryParam(p *Principal, q *engine.Browse, filters *queryFilters, st *queryState,
	k, v []byte, forBrowse, learn bool) (bool, error) {
	switch string(k) {
	case "protocol_version":
		if err := once(&st.proto, "protocol_version"); err != nil {
			return learn, err
		}
		n, ok := parseDecimal(v, 1, maxUint32)
		if !ok {
			return learn, &engine.InputError{Field: "protocol_version", Reason: "must be an integer in 1..4294967295"}
		}
		q.ProtocolVersion = uint32(n)
	case "region":
		if err := once(&st.region, "region"); err != nil {
			return learn, err
		}
		if !validRegion(v) {
			return learn, &engine.InputError{Field: "region", Reason: "must be 1-32 characters of [a-z0-9-]"}
		}
		r, ok, current := a.regions.lookup(p.Tenant, v)
		if !ok {
			r = string(v)
		}
		q.Region, learn = r, !current
	case "min_free_slots":
		return learn, playersParam(&st.minFree, "min_free_slots", v, &q.Filter.MinFreeSlots)
	case "min_players":
		return learn, playersParam(&st.minPlayers, "min_players", v, &q.Filter.MinPlayers)
	case "max_players":
		q.Filter.HasMaxPlayers = true
		return learn, playersParam(&st.maxPlayers, "max_players", v, &q.Filter.MaxPlayers)
	case "limit":
		return learn, browseParam(q, st, "limit", v, forBrowse)
	case "after":
		return learn, browseParam(q, st, "after", v, forBrowse)
	case "order":
		return learn, browseParam(q, st, "order", v, forBrowse)
	case "cursor":
		return learn, browseParam(q, st, "cursor", v, forBrowse)
	default:
		if attr, ok := bytes.CutPrefix(k, []byte("attr.")); ok {
			return learn, attrFilter(q, filters, st, k, attr, v)
		}
		return learn, unknownField(k)
	}
	return learn, nil
}

// once marks a parameter seen: a second time is an error.
func once(seen *bool, field string) error {
	if *seen {
		return &engine.InputError{Field: field, Reason: "is given more than once"}
	}
	*seen = true
	return nil
}

// playersParam reads a player count filter (0..1024) into dst.
func playersParam(seen *bool, field string, v []byte, dst *int32) error {
	if err := once(seen, field); err != nil {
		return err
	}
	n, ok := parseDecimal(v, 0, engine.MaxPlayers)
	if !ok {
		return &engine.InputError{Field: field, Reason: "must be an integer in 0..1024"}
	}
	*dst = int32(n)
	return nil
}

// browseParam reads limit, after, order or cursor, which only a browse
// takes.
func browseParam(q *engine.Browse, st *queryState, name string, v []byte, forBrowse bool) error {
	if !forBrowse {
		return &engine.InputError{Field: name, Reason: "is not a parameter of quick join"}
	}
	switch name {
	case "limit":
		if err := once(&st.limit, "limit"); err != nil {
			return err
		}
		n, ok := parseDecimal(v, 1, engine.BrowsePageMax)
		if !ok {
			return &engine.InputError{Field: "limit", Reason: "must be an integer in 1..100"}
		}
		q.Limit = int(n)
	case "after":
		if err := once(&st.after, "after"); err != nil {
			return err
		}
		u, ok := engine.ParseUUID(v)
		if !ok {
			return &engine.InputError{Field: "after", Reason: "must be a UUID (8-4-4-4-12 hex)"}
		}
		q.After, q.HasAfter = engine.ListingID{UUID: u}, true
	case "order":
		if err := once(&st.order, "order"); err != nil {
			return err
		}
		o, desc, ok := parseOrder(v)
		if !ok {
			return &engine.InputError{Field: "order", Reason: "must be id, free_slots, current_players or created_at, optionally with a leading -"}
		}
		q.Order, q.Desc = o, desc
	case "cursor":
		if err := once(&st.cursor, "cursor"); err != nil {
			return err
		}
		if !st.cur.decode(v) {
			return &engine.InputError{Field: "cursor", Reason: "is not a cursor this API issued (pass next_cursor back unchanged)"}
		}
	}
	return nil
}

// parseOrder reads [-]name of an order.
func parseOrder(v []byte) (o engine.Order, desc bool, ok bool) {
	if len(v) > 0 && v[0] == '-' {
		v, desc = v[1:], true
	}
	for o := engine.OrderID; o <= engine.OrderCreated; o++ {
		if string(v) == o.String() {
			return o, desc, true
		}
	}
	return 0, false, false
}

// attrFilter reads attr.<name>=<v>[|<v>...] (a string one-of) or
// attr.<name>.<op>=<integer> (a comparison); k is the whole parameter name.
func attrFilter(q *engine.Browse, filters *queryFilters, st *queryState, k, attr, v []byte) error {
	name, opName, isNum := bytes.Cut(attr, []byte{'.'})
	if !validAttrName(name) {
		return paramErr(k, "attribute names are 1-16 characters of [a-z0-9_] starting with a letter")
	}
	f := &q.Filter
	if len(f.Strings)+len(f.Numbers) == engine.MaxBrowseFilters {
		return &engine.InputError{Field: "attr", Reason: "at most 8 attribute filters"}
	}
	if isNum {
		op, ok := parseNumOp(opName)
		if !ok {
			return paramErr(k, "comparisons are eq, ne, lt, le, gt and ge")
		}
		for i := range f.Numbers {
			if f.Numbers[i].Name == string(name) && f.Numbers[i].Op == op {
				return paramErr(k, "is given more than once")
			}
		}
		n, ok := parseAttrInt(v)
		if !ok {
			return paramErr(k, "must be an integer in -(2^53-1)..2^53-1")
		}
		f.Numbers = append(f.Numbers, engine.NumberFilter{Name: string(name), Op: op, Value: n})
		return nil
	}
	for i := range f.Strings {
		if f.Strings[i].Name == string(name) {
			return paramErr(k, "is given more than once (one parameter takes several values: a|b)")
		}
	}
	start := st.nvals
	for rest, more := v, true; more; {
		var val []byte
		val, rest, more = bytes.Cut(rest, []byte{'|'})
		if st.nvals-start == engine.MaxFilterValues {
			return paramErr(k, "takes at most 8 values")
		}
		s := string(val)
		if !validAttrValue(s) {
			return paramErr(k, "values are 1-32 bytes of UTF-8 without control characters, separated by |")
		}
		filters.vals[st.nvals] = s
		st.nvals++
	}
	f.Strings = append(f.Strings, engine.StringFilter{Name: string(name), Values: filters.vals[start:st.nvals:st.nvals]})
	return nil
}

// paramErr is a 400 naming the query parameter k (cut to 64 bytes).
func paramErr(k []byte, reason string) error {
	if len(k) > 64 {
		k = k[:64]
	}
	return &engine.InputError{Field: string(k), Reason: reason}
}

func parseNumOp(b []byte) (engine.NumOp, bool) {
	for op := engine.OpEq; op <= engine.OpGe; op++ {
		if string(b) == op.String() {
			return op, true
		}
	}
	return 0, false
}

// parseAttrInt parses an optionally negative decimal integer without
// leading zeros in ±(2^53-1) ("-0" is not one).
func parseAttrInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	n, ok := parseDecimal(b, 0, engine.MaxAttributeNumber)
	if !ok || neg && n == 0 {
		return 0, false
	}
	if neg {
		return -int64(n), true
	}
	return int64(n), true
}

// validAttrName is engine's rule for attribute names
// (docs/contracts/semantics.md#indexed-attributes), on bytes.
func validAttrName(b []byte) bool {
	if len(b) < 1 || len(b) > engine.MaxAttributeNameLen || b[0] < 'a' || b[0] > 'z' {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validAttrValue is engine's rule for string attribute values
// (docs/contracts/semantics.md#indexed-attributes).
func validAttrValue(s string) bool {
	a := engine.Attributes{{Name: "x", Str: s}}
	return a.Validate() == nil
}
