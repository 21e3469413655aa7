package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// Snapshot and CheckInvariants (engine.Inspector) read a dump of every key
// of the deployment (scripts/inspect.lua) after cleanup. They walk the whole
// keyspace: tests only, never in production.

// dumpKey is one key of the dump: hash fields or set members (sorted by
// name), or sorted-set members with their scores (in score order).
type dumpKey struct {
	name, kind string
	fields     [][2]string // hash: field, value; zset: member, score; set: member, ""
}

type dump struct {
	now  int64
	keys map[string]*dumpKey
}

func (s *Store) dump() (*dump, error) {
	m, ok, _ := s.call(context.Background(), "rdv_inspect")
	a, err := m.ToArray()
	if !ok || err != nil || len(a) != 2 {
		return nil, fmt.Errorf("redisstore: inspect failed (reply %v, %v)", ok, err)
	}
	d := &dump{now: num(a[0]), keys: map[string]*dumpKey{}}
	entries, _ := a[1].ToArray()
	for _, e := range entries {
		f, _ := e.ToArray()
		if len(f) != 3 {
			return nil, errors.New("redisstore: inspect returned a malformed entry")
		}
		k := &dumpKey{name: str(f[0]), kind: str(f[1])}
		c, _ := f[2].ToArray()
		switch k.kind {
		case "hash", "zset":
			for i := 0; i+1 < len(c); i += 2 {
				k.fields = append(k.fields, [2]string{str(c[i]), str(c[i+1])})
			}
			if k.kind == "hash" {
				slices.SortFunc(k.fields, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
			}
		default:
			for _, v := range c {
				k.fields = append(k.fields, [2]string{str(v), ""})
			}
			slices.SortFunc(k.fields, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
		}
		d.keys[k.name] = k
	}
	return d, nil
}

// secretFields are left out of Snapshot: fingerprints of capabilities. So
// are meta's clock (the clamp), which any call may move, the primary it
// last saw (replid, gen), which the first call on a new primary moves, and
// the instances' fencing tokens (f:<id>), which belong to the registry.
// A presence record (hash "pr") is shown by its listing's ID, without its
// key's fingerprint, and decoded.
var (
	secretFields = map[string]bool{"lkey": true, "hkey": true, "ckey": true, "prf": true}
	movingMeta   = map[string]bool{"clock": true, "replid": true, "gen": true}
)

// Snapshot renders the state deterministically, without fingerprints.
func (s *Store) Snapshot() string {
	d, err := s.dump()
	if err != nil {
		return err.Error()
	}
	names := make([]string, 0, len(d.keys))
	for n := range d.keys {
		if !registryKey(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "instance=%v\n", s.id)
	for _, n := range names {
		k := d.keys[n]
		fmt.Fprintf(&b, "%q %s:", n, k.kind)
		for _, f := range k.fields {
			if secretFields[f[0]] || (n == "meta" && (movingMeta[f[0]] || strings.HasPrefix(f[0], "f:"))) {
				continue
			}
			if n == "pr" {
				f = showPresenceRecord(f)
			}
			fmt.Fprintf(&b, " %q=%q", f[0], f[1])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// registryKey reports whether a key belongs to the instance registry
// (instance_registry.lua), which Snapshot leaves out: renewals move it,
// and it is the deployment's membership, not the store's state.
func registryKey(n string) bool {
	return n == "nexp" || n == "nepoch" || strings.HasPrefix(n, "n:")
}

// hash returns key's hash as a map (nil if absent).
func (d *dump) hash(key string) map[string]string {
	k := d.keys[key]
	if k == nil {
		return nil
	}
	m := make(map[string]string, len(k.fields))
	for _, f := range k.fields {
		m[f[0]] = f[1]
	}
	return m
}

// callEntries returns the calls' entries (keys "c:<reference>") by
// reference: the instance each names.
func (d *dump) callEntries() map[string]string {
	m := map[string]string{}
	for name, k := range d.keys {
		if ref, ok := strings.CutPrefix(name, "c:"); ok && len(k.fields) == 1 {
			m[ref] = k.fields[0][0]
		}
	}
	return m
}

// members returns a set's or sorted set's members with their scores.
func (d *dump) members(key string) map[string]string { return d.hash(key) }

// showPresenceRecord renders a "pr" field and value for Snapshot: the
// listing's ID and the decoded record.
func showPresenceRecord(f [2]string) [2]string {
	if len(f[0]) >= prFieldAt {
		f[0] = engine.UUID([]byte(f[0][:prFieldAt])).String()
	}
	r, ok := parsePresenceRecord(f[1])
	if !ok {
		return f
	}
	f[1] = fmt.Sprintf("seq=%d", r.seq)
	if r.fresh {
		f[1] += fmt.Sprintf(" pending=%v call=%x public=%v local=%v", r.pending, r.ref, r.public, r.local)
	}
	return f
}
