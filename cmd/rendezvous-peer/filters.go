package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/rendezvous/rendezvous/client"
)

// filterFlags are join's browse filters and order
// (docs/contracts/http.md#browse-listings), for --first and --quick.
type filterFlags struct {
	notFull    bool
	minFree    int
	minPlayers int
	maxPlayers int // -1: none
	attrs      multi
	order      string
}

func (f *filterFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.notFull, "not-full", false, "only listings with a free slot")
	fs.IntVar(&f.minFree, "min-free", 0, "only listings with at least this many free slots")
	fs.IntVar(&f.minPlayers, "min-players", 0, "only listings with at least this many players")
	fs.IntVar(&f.maxPlayers, "max-players", -1, "only listings with at most this many players (0: empty ones)")
	fs.Var(&f.attrs, "attr", "an attribute filter (repeatable): name=value or name=v1|v2 for a string attribute, name.OP=N (OP eq, ne, lt, le, gt, ge) for a numeric one")
	fs.StringVar(&f.order, "order", "", "with --first: id, free_slots, current_players or created_at, with a leading - for descending (-current_players: most players first)")
}

// given reports whether any filter or order was set.
func (f *filterFlags) given() bool {
	return f.notFull || f.minFree != 0 || f.minPlayers != 0 || f.maxPlayers >= 0 || len(f.attrs) > 0 || f.order != ""
}

// query builds the browse query the flags describe.
func (f *filterFlags) query() (client.BrowseQuery, error) {
	q := client.BrowseQuery{MinFreeSlots: f.minFree, MinPlayers: f.minPlayers, Order: f.order}
	if f.notFull {
		q = q.NotFull()
	}
	if f.maxPlayers >= 0 {
		q.MaxPlayers = &f.maxPlayers
	}
	for _, a := range f.attrs {
		name, v, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return q, fmt.Errorf("--attr %q: want name=value or name.OP=N", a)
		}
		if name, op, num := strings.Cut(name, "."); num {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return q, fmt.Errorf("--attr %q: %s.%s takes an integer", a, name, op)
			}
			q = q.WhereNumber(name, op, n)
			continue
		}
		q = q.Where(name, strings.Split(v, "|")...)
	}
	return q, nil
}

// parseAttributes reads host's --attr name=value flags: a value that is a
// decimal integer is a numeric attribute, anything else a string.
func parseAttributes(flags []string) (client.Attributes, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	as := client.Attributes{}
	for _, a := range flags {
		name, v, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--attr %q: want name=value", a)
		}
		if _, dup := as[name]; dup {
			return nil, fmt.Errorf("--attr %q: %s is given twice", a, name)
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			as[name] = n
		} else {
			as[name] = v
		}
	}
	return as, as.Validate()
}
