package engine

import "testing"

// TestQuickJoinHashCanonical: the fingerprint ignores how the filter is
// spelled (order of filters and values, repeats) and sees every part of
// the query.
func TestQuickJoinHashCanonical(t *testing.T) {
	base := func() QuickJoin {
		return QuickJoin{Query: Browse{
			Tenant: Tenant{Game: "g", Env: "e"}, ProtocolVersion: 7, Region: "eu",
			Filter: BrowseFilter{
				MinFreeSlots: 1,
				Strings:      []StringFilter{{Name: "mode", Values: []string{"coop", "pvp"}}, {Name: "map", Values: []string{"x"}}},
				Numbers:      []NumberFilter{{Name: "level", Op: OpGe, Value: 3}, {Name: "level", Op: OpLt, Value: 9}},
			},
		}}
	}
	b := base()
	want := b.Hash()
	same := base()
	same.Query.Filter.Strings = []StringFilter{{Name: "map", Values: []string{"x", "x"}}, {Name: "mode", Values: []string{"pvp", "coop"}}}
	same.Query.Filter.Numbers = []NumberFilter{same.Query.Filter.Numbers[1], same.Query.Filter.Numbers[0]}
	same.Query.Limit, same.Query.Order, same.Query.Desc = 5, OrderCreated, true // ignored by a quick join
	if same.Hash() != want {
		t.Fatal("the same query spelled differently hashes differently")
	}
	for name, change := range map[string]func(*QuickJoin){
		"tenant":     func(q *QuickJoin) { q.Query.Tenant.Env = "f" },
		"protocol":   func(q *QuickJoin) { q.Query.ProtocolVersion = 8 },
		"region":     func(q *QuickJoin) { q.Query.Region = "" },
		"free":       func(q *QuickJoin) { q.Query.Filter.MinFreeSlots = 2 },
		"min":        func(q *QuickJoin) { q.Query.Filter.MinPlayers = 1 },
		"max":        func(q *QuickJoin) { q.Query.Filter.HasMaxPlayers = true },
		"value":      func(q *QuickJoin) { q.Query.Filter.Strings[0].Values = []string{"coop"} },
		"number":     func(q *QuickJoin) { q.Query.Filter.Numbers[0].Value = 4 },
		"op":         func(q *QuickJoin) { q.Query.Filter.Numbers[0].Op = OpGt },
		"relay only": func(q *QuickJoin) { q.Join.RelayOnly = true },
	} {
		q := base()
		change(&q)
		if q.Hash() == want {
			t.Errorf("%s: not in the fingerprint", name)
		}
	}
}
