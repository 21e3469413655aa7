package redisstore

import (
	"encoding/json"
	"strconv"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// browseIndex is an instance's local copy of the visible listings (public,
// lease and presence fresh) with what a BrowseItem shows, ordered per
// (tenant, protocol) and per (tenant, protocol, region) by the in-memory
// store's own ordered set, so a page costs O(log n + page) and no Redis
// CPU. It also keeps what filters and other orderings of the same page
// read (max players, creation time, region, protocol). browseMirror keeps
// it in step with the shared state. Not safe for concurrent use.
type browseIndex struct {
	slots []browseEntry
	free  []int32
	byID  map[engine.UUID]int32
	sets  map[browseKey]*memstore.OrderedSet
	// strs interns tenants' parts and regions: a few distinct values
	// shared by many listings.
	strs map[string]string
}

// browseKey names one ordered set; region "" is every region's.
type browseKey struct {
	game, env string
	proto     uint32
	region    string
}

// browseEntry is one visible listing.
type browseEntry struct {
	id         engine.UUID
	doc        []byte              // immutable
	spec       *engine.ListingSpec // immutable
	game, env  string
	region     string
	proto      uint32
	players    int32
	maxPlayers int32
	leaseDL    int64 // ticks
	created    int64 // ticks (0 for a listing created before it was recorded)
	// attrs are the live indexed attributes (replaced, never changed in
	// place: items share them); keyVer the log's version after the last
	// change of players (engine.Browse.Since).
	attrs  engine.Attributes
	keyVer uint64
}

func newBrowseIndex() *browseIndex {
	return &browseIndex{
		byID: make(map[engine.UUID]int32), sets: make(map[browseKey]*memstore.OrderedSet),
		strs: make(map[string]string),
	}
}

func (x *browseIndex) len() int { return len(x.byID) }

func (x *browseIndex) intern(s string) string {
	if v, ok := x.strs[s]; ok {
		return v
	}
	x.strs[s] = s
	return s
}

// keys are the ordered sets entry e belongs to: every region's and, when
// it has one, its region's.
func (e *browseEntry) keys() (all, region browseKey, regional bool) {
	all = browseKey{game: e.game, env: e.env, proto: e.proto}
	region = all
	region.region = e.region
	return all, region, e.region != ""
}

func (x *browseIndex) link(li int32) {
	e := &x.slots[li]
	all, region, regional := e.keys()
	x.set(all).Insert(e.id, li)
	if regional {
		x.set(region).Insert(e.id, li)
	}
}

func (x *browseIndex) unlink(li int32) {
	e := &x.slots[li]
	all, region, regional := e.keys()
	x.unset(all, e.id)
	if regional {
		x.unset(region, e.id)
	}
}

func (x *browseIndex) set(k browseKey) *memstore.OrderedSet {
	s := x.sets[k]
	if s == nil {
		s = new(memstore.OrderedSet)
		x.sets[k] = s
	}
	return s
}

// unset removes id from set k, and the set once empty, so tenants and
// protocols that come and go leave nothing behind.
func (x *browseIndex) unset(k browseKey, id engine.UUID) {
	s := x.sets[k]
	if s == nil {
		return
	}
	s.Delete(id)
	if s.Len() == 0 {
		delete(x.sets, k)
	}
}

// remove drops listing id, if present.
func (x *browseIndex) remove(id engine.UUID) {
	li, ok := x.byID[id]
	if !ok {
		return
	}
	x.unlink(li)
	delete(x.byID, id)
	x.slots[li] = browseEntry{}
	x.free = append(x.free, li)
}

// apply applies one item of rdv_browse_sync or rdv_browse_snapshot
// (browseItem in scripts/prelude/75_browse_sync.lua): the listing as it
// is now, {id} when it is not visible. It reports false for an item it
// cannot read, having changed nothing.
func (x *browseIndex) apply(m rueidis.RedisMessage) bool {
	f, err := m.ToArray()
	if err != nil || (len(f) != 1 && len(f) != 12) {
		return false
	}
	id, ok := engine.ParseUUID(str(f[0]))
	if !ok {
		return false
	}
	if len(f) == 1 {
		x.remove(id)
		return true
	}
	game, env := splitTenant(str(f[1]))
	proto, _ := strconv.ParseUint(str(f[2]), 10, 32)
	e := browseEntry{
		id: id, game: x.intern(game), env: x.intern(env), region: x.intern(str(f[3])), proto: uint32(proto),
		players: int32(num(f[6])), maxPlayers: int32(num(f[7])), leaseDL: num(f[8]), created: num(f[9]),
		keyVer: uint64(num(f[11])),
	}
	li, had := x.byID[id]
	if had {
		// The document and spec of a listing never change: keep them
		// rather than decode them again on every renewal.
		old := &x.slots[li]
		e.doc, e.spec = old.doc, old.spec
		e.attrs = x.attrs(str(f[10]), old.attrs)
	} else {
		e.attrs = x.attrs(str(f[10]), nil)
		e.spec = new(engine.ListingSpec)
		if json.Unmarshal([]byte(str(f[5])), e.spec) != nil {
			return false
		}
		if doc := str(f[4]); doc != "" {
			e.doc = []byte(doc)
		}
	}
	if had {
		old := &x.slots[li]
		if old.game == e.game && old.env == e.env && old.proto == e.proto && old.region == e.region {
			*old = e
			return true
		}
		x.unlink(li)
	} else {
		li = x.alloc()
		x.byID[id] = li
	}
	x.slots[li] = e
	x.link(li)
	return true
}

// attrs reads an item's attributes, answering old when they are the same
// (most renewals keep them), so an unchanged listing costs no allocation.
func (x *browseIndex) attrs(raw string, old engine.Attributes) engine.Attributes {
	if raw == "" {
		return nil
	}
	if old != nil && attrsAre(old, raw) {
		return old
	}
	return parseAttrs(raw)
}

func (x *browseIndex) alloc() int32 {
	if n := len(x.free); n > 0 {
		li := x.free[n-1]
		x.free = x.free[:n-1]
		return li
	}
	x.slots = append(x.slots, browseEntry{})
	return int32(len(x.slots) - 1)
}

// page appends q's page to dst (q validated): the entries of q's set after
// q.After, at most q.Limit, and whether more follow. wall converts a
// deadline in ticks to Unix milliseconds.
func (x *browseIndex) page(q *engine.Browse, dst []engine.BrowseItem, wall func(int64) int64) ([]engine.BrowseItem, bool) {
	s := x.sets[browseKey{game: q.Tenant.Game, env: q.Tenant.Env, proto: q.ProtocolVersion, region: q.Region}]
	if s == nil {
		return dst, false
	}
	it := s.Seek(q.After.UUID, q.HasAfter)
	for n := 0; ; n++ {
		_, li, ok := it.Next()
		if !ok {
			return dst, false
		}
		if n == q.Limit {
			return dst, true
		}
		e := &x.slots[li]
		dst = append(dst, engine.BrowseItem{
			ID: engine.ListingID{UUID: e.id}, Doc: e.doc, Spec: e.spec, CurrentPlayers: e.players,
			Attributes: e.attrs, LeaseExpiresAt: wall(e.leaseDL),
		})
	}
}

// splitTenant is parseTenant's two parts.
func splitTenant(s string) (game, env string) {
	t := parseTenant(s)
	return t.Game, t.Env
}
