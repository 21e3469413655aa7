package redisstore

import (
	"strconv"
	"strings"
)

// The relay fallback's invariants (CheckInvariants): an attempt's relay
// fields, and the tombstones against their schedule and ceiling.

// checkRelay checks attempt id's relay fields: a relayed address only on a
// bound side, the relay introduction only with both addresses, the direct
// introduction never on a relay-only attempt, outcome reports well formed.
func checkRelay(id string, a map[string]string, bad func(string, ...any)) {
	if a["hrel"] != "" && a["host"] == "" || a["crel"] != "" && a["peer"] == "" {
		bad("attempt %s: relayed address on an unbound side", id)
	}
	if a["relayed"] == "1" && (a["hrel"] == "" || a["crel"] == "") {
		bad("attempt %s: relay introduction without both relayed addresses", id)
	}
	if a["ronly"] == "1" && a["consumed"] == "1" {
		bad("attempt %s: relay-only attempt introduced directly", id)
	}
	for _, f := range []string{"hout", "cout"} {
		if _, ok := parseOutcome(a[f]); !ok || a[f] != "" && (a[f][0] < '1' || a[f][0] > '3') {
			bad("attempt %s: malformed outcome %q", id, a[f])
		}
	}
}

// checkTombstones checks every tombstone: scheduled, not past its deadline,
// not also a live attempt, well formed, listed by its tenant; at most the
// attempts ceiling per tenant.
func checkTombstones(d *dump, ceiling int, live func(what, key, score string), bad func(string, ...any)) {
	xexp := d.members("xexp")
	n := 0
	for name := range d.keys {
		if !strings.HasPrefix(name, "x:") {
			continue
		}
		n++
		id, x := name[2:], d.hash(name)
		score, ok := xexp[id]
		if !ok {
			bad("tombstone %s not scheduled", id)
		}
		live("tombstone", id, score)
		if d.keys["a:"+id] != nil {
			bad("tombstone %s of a live attempt", id)
		}
		end, err := strconv.Atoi(x["end"])
		_, pok := parseProgress(x["progress"])
		if err != nil || end < 1 || end > 5 || !pok || x["tenant"] == "" || x["client"] == "" || x["owner"] == "" {
			bad("tombstone %s malformed: %v", id, x)
		}
	}
	if n != len(xexp) {
		bad("%d tombstones, %d scheduled", n, len(xexp))
	}
	// Each tenant's set holds exactly its tombstones, at their deadlines,
	// at most the attempts ceiling of them.
	listed := 0
	for name := range d.keys {
		if !strings.HasPrefix(name, "xt:") {
			continue
		}
		tenant, xt := name[3:], d.members(name)
		listed += len(xt)
		if len(xt) > ceiling {
			bad("tenant %s holds %d tombstones over the attempts ceiling %d", tenant, len(xt), ceiling)
		}
		for id, score := range xt {
			if d.hash("x:" + id)["tenant"] != tenant || score != xexp[id] {
				bad("tombstone %s listed in tenant %s at %s", id, tenant, score)
			}
		}
	}
	if listed != n {
		bad("%d tombstones, %d listed by tenant", n, listed)
	}
}
