package redisstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// CheckInvariants verifies that every index and count agrees with the
// records, that every pool is within its ceiling, and that nothing past its
// deadline remains.
func (s *Store) CheckInvariants() error {
	d, err := s.dump()
	if err != nil {
		return err
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	live := func(what, key, score string) {
		if n, err := strconv.ParseInt(score, 10, 64); err != nil || n <= d.now {
			bad("%s %q past its deadline (%s <= %d)", what, key, score, d.now)
		}
	}
	// scheduled checks that record id's deadline is the one its schedule
	// holds, and is still ahead.
	scheduled := func(what, id string, rec, schedule map[string]string) {
		if schedule[id] != rec["dl"] {
			bad("%s %s deadline %s, schedule %s", what, id, rec["dl"], schedule[id])
		}
		live(what, id, rec["dl"])
	}
	lexp, pexp, aexp := d.members("lexp"), d.members("pexp"), d.members("aexp")
	records, pending := d.hash("pr"), d.hash("pn")
	calls, cexp := d.callEntries(), d.members("cexp")
	tenants := map[string][3]int{}
	browse := map[string]map[string]bool{}
	nListings, nAttempts, inflight := 0, 0, 0
	for name, k := range d.keys {
		switch {
		case strings.HasPrefix(name, "l:"):
			id, l := name[2:], d.hash(name)
			nListings++
			scheduled("listing", id, l, lexp)
			if d.hash("ph")[l["pres"]] != id {
				bad("listing %s not found by its presence handle", id)
			}
			if _, ok := d.members("ol:" + l["owner"])[id]; !ok {
				bad("listing %s missing from its owner's set", id)
			}
			if want := oldestPending(d.keys["lp:"+id]); pending[id] != want {
				bad("listing %s: pending offers %q, oldest attempts pending %q", id, pending[id], want)
			}
			field := l["prf"]
			if len(field) != prFieldAt+len(engine.Fingerprint{}) || parseID(id) != engine.UUID([]byte(field[:prFieldAt])) {
				bad("listing %s: presence record field %x", id, field[:min(len(field), prFieldAt)])
			}
			rec, ok := parsePresenceRecord(records[field])
			if !ok {
				bad("listing %s: presence record %q", id, records[field])
			}
			if rec.fresh && rec.pending != (pending[id] != "") {
				bad("listing %s: presence record says pending offers %v, pending offers %q", id, rec.pending, pending[id])
			}
			_, fresh := pexp[id]
			if fresh != rec.fresh {
				bad("listing %s: scheduled presence %v, fresh record %v", id, fresh, rec.fresh)
			}
			if fresh {
				// A refresh moves the record's call reference only; the
				// schedule may lag behind that call's deadline, never run
				// ahead of it.
				dl, named := cexp[rec.ref]
				if _, ok := calls[rec.ref]; !ok || !named {
					bad("presence %s names call %x, which has no entry", id, rec.ref)
				}
				live("presence", id, dl)
				if sched, err := strconv.ParseInt(pexp[id], 10, 64); err != nil || sched > parseNum(dl) {
					bad("presence %s scheduled at %s, after its deadline %s", id, pexp[id], dl)
				}
				if l["public"] == "1" {
					// bva, every visible listing, is the local browse indexes' snapshot.
					for _, b := range []string{"b:" + l["tenant"] + "\x00" + l["proto"] + "\x00", "b:" + l["tenant"] + "\x00" + l["proto"] + "\x00" + l["region"], "bva"} {
						if browse[b] == nil {
							browse[b] = map[string]bool{}
						}
						browse[b][id] = true
					}
				}
			}
			c := tenants[l["tenant"]]
			c[0]++
			tenants[l["tenant"]] = c
		case strings.HasPrefix(name, "a:"):
			id, a := name[2:], d.hash(name)
			nAttempts++
			scheduled("attempt", id, a, aexp)
			if l := d.hash("l:" + a["listing"]); l == nil || l["tenant"] != a["tenant"] {
				bad("attempt %s outlives its listing", id)
			}
			if d.hash("ah")[a["handle"]] != id {
				bad("attempt %s not found by its handle", id)
			}
			if _, ok := d.members("la:" + a["listing"])[id]; !ok {
				bad("attempt %s missing from its listing's list", id)
			}
			if _, pending := d.members("lp:" + a["listing"])[a["handle"]]; pending != (a["host"] == "") {
				bad("attempt %s: pending %v with host binding %q", id, pending, a["host"])
			}
			if _, ok := d.members("ca:" + a["client"])[id]; !ok {
				bad("attempt %s missing from its client's set", id)
			}
			if a["consumed"] == "1" && (a["host"] == "" || a["peer"] == "") {
				bad("attempt %s consumed without both endpoints", id)
			}
			if a["consumed"] != "1" && a["relayed"] != "1" {
				inflight++
			}
			checkRelay(id, a, bad)
			c := tenants[a["tenant"]]
			c[1]++
			tenants[a["tenant"]] = c
		case strings.HasPrefix(name, "b:"):
			if len(k.fields) == 0 {
				bad("empty browse index %q", name)
			}
		}
	}
	if len(calls) != len(cexp) {
		bad("call entries %d, scheduled %d", len(calls), len(cexp))
	}
	for ref, dl := range cexp {
		live("call", fmt.Sprintf("%x", ref), dl)
	}
	if len(records) != nListings || len(pending) > nListings {
		bad("presence records %d, pending counts %d, listings %d", len(records), len(pending), nListings)
	}
	if len(lexp) != nListings || len(d.hash("ph")) != nListings || len(aexp) != nAttempts || len(d.hash("ah")) != nAttempts {
		bad("index sizes: listings %d/%d/%d attempts %d/%d/%d", nListings, len(lexp), len(d.hash("ph")), nAttempts, len(aexp), len(d.hash("ah")))
	}
	if _, ok := d.keys["bva"]; !ok && len(browse["bva"]) > 0 {
		bad("%d visible listings, none in bva", len(browse["bva"]))
	}
	for name := range d.keys {
		if (strings.HasPrefix(name, "b:") || name == "bva") && len(browse[name]) != len(d.members(name)) {
			bad("browse index %q holds %d, want %d", name, len(d.members(name)), len(browse[name]))
		}
		if strings.HasPrefix(name, "ol:") && len(d.members(name)) > s.lim.OwnerListingQuota {
			bad("owner %q over its quota", name[3:])
		}
	}
	idem, iexp := d.hash("idem"), d.members("iexp")
	if len(idem) != len(iexp) {
		bad("idempotency records %d, scheduled %d", len(idem), len(iexp))
	}
	subjects := map[string]int{}
	for k, v := range idem {
		live("idempotency record", k, iexp[k])
		if len(v) > 102 {
			tenant, subject, ok := strings.Cut(v[102:], "|")
			c := tenants[tenant]
			c[2]++
			tenants[tenant] = c
			if ok {
				subjects[subject]++
			}
		}
	}
	si := d.hash("si")
	for subject, want := range subjects {
		if got, _ := strconv.Atoi(si[subject]); got != want || want > s.lim.SubjectIdempotencyQuota {
			bad("subject %q counts %d idempotency records, holds %d (share %d)", subject, got, want, s.lim.SubjectIdempotencyQuota)
		}
	}
	for subject, n := range si {
		if subjects[subject] == 0 {
			bad("subject %q counts %s idempotency records, holds none", subject, n)
		}
	}
	for name := range d.keys {
		if strings.HasPrefix(name, "t:") {
			if _, ok := tenants[name[2:]]; !ok {
				tenants[name[2:]] = [3]int{}
			}
		}
	}
	for t, want := range tenants {
		h := d.hash("t:" + t)
		got := [3]int{}
		for i, f := range []string{"l", "a", "i"} {
			got[i], _ = strconv.Atoi(h[f])
		}
		if got != want {
			bad("tenant %s counts %v, records %v", t, got, want)
		}
	}
	if n, _ := strconv.Atoi(d.hash("meta")["inflight"]); n != inflight {
		bad("in flight %d, unconsumed attempts %d", n, inflight)
	}
	checkTombstones(d, s.lim.MaxAttempts, live, bad)
	for _, z := range []string{"rexp", "vexp"} {
		for m, score := range d.members(z) {
			live(z, m, score)
		}
	}
	for _, c := range []struct {
		name   string
		n, max int
	}{
		{"listings", nListings, s.lim.MaxListings}, {"presence", len(pexp), s.lim.MaxPresence},
		{"attempts", nAttempts, s.lim.MaxAttempts}, {"replay", len(d.members("rexp")), s.lim.MaxReplay},
		{"revocations", len(d.members("vexp")), s.lim.MaxRevocations}, {"idempotency", len(idem), s.lim.MaxIdempotency},
	} {
		if c.n > c.max {
			bad("pool %s holds %d over its ceiling %d", c.name, c.n, c.max)
		}
	}
	return errors.Join(errs...)
}

// oldestPending is what pn holds for a listing whose pending attempts are
// lp: the handles of the oldest four concatenated ("" when none).
func oldestPending(lp *dumpKey) string {
	var b strings.Builder
	if lp != nil {
		for _, f := range lp.fields[:min(len(lp.fields), 4)] {
			b.WriteString(f[0])
		}
	}
	return b.String()
}
