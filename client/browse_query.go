package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// BrowseQuery selects listings (docs/contracts/http.md#browse-listings,
// docs/contracts/semantics.md#filters-and-order). The zero filters match
// every listing; PageSize 0 means the server's default (at most 100).
type BrowseQuery struct {
	ProtocolVersion uint32
	Region          string
	PageSize        int

	// MinFreeSlots keeps listings with at least that many free slots
	// (max_players - current_players): 1 is "not full".
	MinFreeSlots int
	// MinPlayers keeps listings with at least that many players (1: "has
	// players"); MaxPlayers, when not nil, those with at most that many
	// (0: "empty").
	MinPlayers int
	MaxPlayers *int
	// Strings keeps listings whose string attribute is one of the values;
	// Numbers those whose numeric attribute compares so. At most 8 in all.
	Strings []StringFilter
	Numbers []NumberFilter

	// Order is "id" (or ""), "free_slots", "current_players" or
	// "created_at", with a leading "-" for descending: "-current_players"
	// is "most players first". Ties go by listing ID in the same direction.
	Order string
}

// StringFilter matches a string attribute equal to one of 1-8 values.
type StringFilter struct {
	Name   string
	Values []string
}

// NumberFilter matches a numeric attribute comparing to Value by Op: "eq",
// "ne", "lt", "le", "gt" or "ge".
type NumberFilter struct {
	Name  string
	Op    string
	Value int64
}

// NotFull returns q keeping only listings with a free slot.
func (q BrowseQuery) NotFull() BrowseQuery {
	q.MinFreeSlots = max(q.MinFreeSlots, 1)
	return q
}

// Where returns q keeping only listings whose string attribute name is one
// of values.
func (q BrowseQuery) Where(name string, values ...string) BrowseQuery {
	q.Strings = append(q.Strings[:len(q.Strings):len(q.Strings)], StringFilter{Name: name, Values: values})
	return q
}

// WhereNumber returns q keeping only listings whose numeric attribute name
// compares to v by op.
func (q BrowseQuery) WhereNumber(name, op string, v int64) BrowseQuery {
	q.Numbers = append(q.Numbers[:len(q.Numbers):len(q.Numbers)], NumberFilter{Name: name, Op: op, Value: v})
	return q
}

// OrderBy returns q in order (as Order).
func (q BrowseQuery) OrderBy(order string) BrowseQuery {
	q.Order = order
	return q
}

// values checks q locally, as the server would, and encodes it; a quick
// join (browse false) takes neither an order nor a page size.
func (q *BrowseQuery) values(browse bool) (url.Values, error) {
	eq, err := q.engine()
	if err != nil {
		return nil, err
	}
	if !browse && (q.Order != "" || q.PageSize != 0) {
		return nil, &InputError{Field: "order", Reason: "quick join has its own order and no page size"}
	}
	if q.PageSize < 0 || q.PageSize > engine.BrowsePageMax {
		return nil, &InputError{Field: "limit", Reason: "must be 1..100"}
	}
	if err := checked(engine.ValidateBrowse(eq)); err != nil {
		return nil, err
	}
	v := url.Values{}
	v.Set("protocol_version", strconv.FormatUint(uint64(q.ProtocolVersion), 10))
	if q.Region != "" {
		v.Set("region", q.Region)
	}
	if q.PageSize > 0 {
		v.Set("limit", strconv.Itoa(q.PageSize))
	}
	if q.MinFreeSlots > 0 {
		v.Set("min_free_slots", strconv.Itoa(q.MinFreeSlots))
	}
	if q.MinPlayers > 0 {
		v.Set("min_players", strconv.Itoa(q.MinPlayers))
	}
	if q.MaxPlayers != nil {
		v.Set("max_players", strconv.Itoa(*q.MaxPlayers))
	}
	for _, f := range q.Strings {
		v.Set("attr."+f.Name, strings.Join(f.Values, "|"))
	}
	for _, f := range q.Numbers {
		v.Set("attr."+f.Name+"."+f.Op, strconv.FormatInt(f.Value, 10))
	}
	if q.Order != "" && q.Order != "id" {
		v.Set("order", q.Order)
	}
	return v, nil
}

// engine is q as the contract's browse query, for its checks.
func (q *BrowseQuery) engine() (*engine.Browse, error) {
	if q.ProtocolVersion == 0 {
		return nil, &InputError{Field: "protocol_version", Reason: "must be 1..4294967295"}
	}
	eq := &engine.Browse{Tenant: engine.Tenant{Game: "g", Env: "e"}, ProtocolVersion: q.ProtocolVersion, Region: q.Region, Limit: 1,
		Filter: engine.BrowseFilter{MinFreeSlots: int32(min(max(q.MinFreeSlots, -1), engine.MaxPlayers+1)),
			MinPlayers: int32(min(max(q.MinPlayers, -1), engine.MaxPlayers+1))}}
	if q.MaxPlayers != nil {
		eq.Filter.HasMaxPlayers, eq.Filter.MaxPlayers = true, int32(min(max(*q.MaxPlayers, -1), engine.MaxPlayers+1))
	}
	seen := map[string]bool{}
	for _, f := range q.Strings {
		if seen[f.Name] {
			return nil, &InputError{Field: "attr." + f.Name, Reason: "is given more than once (one filter takes several values)"}
		}
		seen[f.Name] = true
		eq.Filter.Strings = append(eq.Filter.Strings, engine.StringFilter{Name: f.Name, Values: f.Values})
	}
	for _, f := range q.Numbers {
		op, ok := engine.ParseNumOp(f.Op)
		if !ok {
			return nil, &InputError{Field: "attr." + f.Name + "." + f.Op, Reason: "comparisons are eq, ne, lt, le, gt and ge"}
		}
		if seen[f.Name+"."+f.Op] {
			return nil, &InputError{Field: "attr." + f.Name + "." + f.Op, Reason: "is given more than once"}
		}
		seen[f.Name+"."+f.Op] = true
		eq.Filter.Numbers = append(eq.Filter.Numbers, engine.NumberFilter{Name: f.Name, Op: op, Value: f.Value})
	}
	o := strings.TrimPrefix(q.Order, "-")
	if q.Order != "" {
		order, ok := engine.ParseOrder(o)
		if !ok {
			return nil, &InputError{Field: "order", Reason: "must be id, free_slots, current_players or created_at, optionally with a leading -"}
		}
		eq.Order = order
	}
	return eq, nil
}

// QuickJoin creates a join attempt on the best listing q finds: not full,
// the most players, then the highest listing ID
// (docs/contracts/semantics.md#quick-join). q takes filters only (no
// Order, no PageSize). The attempt's ListingID names the listing chosen;
// ErrNotFound when none matches. Pass the same idempotencyKey (and q) on
// every retry of one logical quick join: a replay answers the attempt
// first created.
func (a *API) QuickJoin(ctx context.Context, idempotencyKey string, q BrowseQuery, relayOnly bool) (*Attempt, error) {
	if err := engine.ValidateIdempotencyKey(idempotencyKey); err != nil {
		return nil, checked(err)
	}
	v, err := q.values(false)
	if err != nil {
		return nil, err
	}
	c := &call{op: "quick join", method: "POST", path: "/v1/quick-join?" + v.Encode(),
		header: map[string]string{"Idempotency-Key": idempotencyKey}}
	if relayOnly {
		c.body = &struct {
			RelayOnly bool `json:"relay_only"`
		}{true}
	}
	var w wireAttempt
	c.out = &w
	if err := a.do(ctx, c); err != nil {
		return nil, err
	}
	return w.attempt(c)
}
