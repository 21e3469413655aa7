package redisstore

import (
	"encoding/json"
	"strconv"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// browseIndex is an instance's local copy of the visible listings (public,
// lease and presence fresh) with what a BrowseItem shows, in the in-memory
// store's own browse indexes (memstore.BrowseScope) per (tenant, protocol)
// and per (tenant, protocol, region), so a page is planned, filtered,
// ordered, bounded and continued by the same walk as on that store, at
// O(log n + page) for the common queries and no Redis CPU. browseMirror
// keeps it in step with the shared state; the walk's change version is the
// log's version the index is at. Not safe for concurrent use.
type browseIndex struct {
	// ents are what the walk reads, rest the other fields, both by slot.
	ents []memstore.BrowseEntry
	rest []browseEntry
	free []int32
	byID map[engine.UUID]int32
	sets map[browseKey]*memstore.BrowseScope
	// strs interns tenants' parts and regions: a few distinct values
	// shared by many listings.
	strs map[string]string
}

// browseKey names one scope; region "" is every region's.
type browseKey struct {
	game, env string
	proto     uint32
	region    string
}

// browseEntry is what a visible listing's item shows besides what the
// walk reads (memstore.BrowseEntry: ID, attributes, creation stamp in
// ticks, key version, players, max players).
type browseEntry struct {
	doc       []byte              // immutable
	spec      *engine.ListingSpec // immutable
	game, env string
	region    string
	proto     uint32
	leaseDL   int64 // ticks
}

func newBrowseIndex() *browseIndex {
	return &browseIndex{
		byID: make(map[engine.UUID]int32), sets: make(map[browseKey]*memstore.BrowseScope),
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

// keys are the scopes entry e belongs to: every region's and, when it has
// one, its region's.
func (e *browseEntry) keys() (all, region browseKey, regional bool) {
	all = browseKey{game: e.game, env: e.env, proto: e.proto}
	region = all
	region.region = e.region
	return all, region, e.region != ""
}

func (x *browseIndex) link(li int32) {
	all, region, regional := x.rest[li].keys()
	x.scope(all).Insert(li, &x.ents[li])
	if regional {
		x.scope(region).Insert(li, &x.ents[li])
	}
}

func (x *browseIndex) unlink(li int32) {
	all, region, regional := x.rest[li].keys()
	x.unscope(all, &x.ents[li])
	if regional {
		x.unscope(region, &x.ents[li])
	}
}

func (x *browseIndex) scope(k browseKey) *memstore.BrowseScope {
	s := x.sets[k]
	if s == nil {
		s = new(memstore.BrowseScope)
		x.sets[k] = s
	}
	return s
}

// unscope removes entry e from scope k, and the scope once empty, so
// tenants and protocols that come and go leave nothing behind.
func (x *browseIndex) unscope(k browseKey, e *memstore.BrowseEntry) {
	s := x.sets[k]
	if s == nil {
		return
	}
	s.Delete(e)
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
	x.ents[li], x.rest[li] = memstore.BrowseEntry{}, browseEntry{}
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
	e := browseEntry{game: x.intern(game), env: x.intern(env), region: x.intern(str(f[3])), proto: uint32(proto),
		leaseDL: num(f[8])}
	w := memstore.BrowseEntry{ID: id, Players: int32(num(f[6])), MaxPlayers: int32(num(f[7])), Created: num(f[9]),
		KeyVersion: uint64(num(f[11]))}
	li, had := x.byID[id]
	if had {
		// The document and spec of a listing never change: keep them
		// rather than decode them again on every renewal.
		old := &x.rest[li]
		e.doc, e.spec = old.doc, old.spec
		w.Attrs = x.attrs(str(f[10]), x.ents[li].Attrs)
	} else {
		e.spec = new(engine.ListingSpec)
		if json.Unmarshal([]byte(str(f[5])), e.spec) != nil {
			return false
		}
		if doc := str(f[4]); doc != "" {
			e.doc = []byte(doc)
		}
		// Attributes unchanged since creation share the spec's copy.
		w.Attrs = x.attrs(str(f[10]), e.spec.Attributes)
	}
	if had {
		old := &x.rest[li]
		if old.game == e.game && old.env == e.env && old.proto == e.proto && old.region == e.region {
			all, region, regional := e.keys()
			x.scope(all).Update(li, &x.ents[li], &w)
			if regional {
				x.scope(region).Update(li, &x.ents[li], &w)
			}
			x.ents[li], *old = w, e
			return true
		}
		x.unlink(li)
	} else {
		li = x.alloc()
		x.byID[id] = li
	}
	x.ents[li], x.rest[li] = w, e
	x.link(li)
	return true
}

// attrs reads an item's attributes, answering old when they are the same
// (most renewals keep them), so an unchanged listing costs no allocation
// and its scopes see the same slice.
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
	x.ents = append(x.ents, memstore.BrowseEntry{})
	x.rest = append(x.rest, browseEntry{})
	return int32(len(x.ents) - 1)
}

// walk collects q's page (q validated) into p with the in-memory store's
// walk, ver being the log's version the index is at.
func (x *browseIndex) walk(q *engine.Browse, ver uint64, p *memstore.BrowsePage) {
	p.N, p.Next = 0, engine.BrowseNext{}
	s := x.sets[browseKey{game: q.Tenant.Game, env: q.Tenant.Env, proto: q.ProtocolVersion, region: q.Region}]
	if s == nil {
		// No listing of q's scope is visible: an empty page, which still
		// starts a walk at this version.
		s = &emptyScope
	}
	s.Walk(q, x.ents, ver, p)
}

// emptyScope is the scope of a query no listing is visible in.
var emptyScope memstore.BrowseScope

// page appends q's page to dst (q validated) and answers where the walk
// goes on. wall converts a deadline in ticks to Unix milliseconds.
func (x *browseIndex) page(q *engine.Browse, ver uint64, dst []engine.BrowseItem, wall func(int64) int64) ([]engine.BrowseItem, engine.BrowseNext) {
	var p memstore.BrowsePage
	x.walk(q, ver, &p)
	for _, li := range p.Slots[:p.N] {
		w, e := &x.ents[li], &x.rest[li]
		dst = append(dst, engine.BrowseItem{
			ID: engine.ListingID{UUID: w.ID}, Doc: e.doc, Spec: e.spec, CurrentPlayers: w.Players,
			Attributes: w.Attrs, LeaseExpiresAt: wall(e.leaseDL),
		})
	}
	return dst, p.Next
}

// quickJoin appends to dst (of capacity quickJoinCandidates) the IDs of
// the first listings of q's quick-join walk (memstore.QuickJoinWalk).
func (x *browseIndex) quickJoin(q *engine.Browse, ver uint64, dst []engine.UUID) []engine.UUID {
	w := memstore.QuickJoinWalk(q, cap(dst))
	var p memstore.BrowsePage
	x.walk(&w, ver, &p)
	for _, li := range p.Slots[:p.N] {
		dst = append(dst, x.ents[li].ID)
	}
	return dst
}

// splitTenant is parseTenant's two parts.
func splitTenant(s string) (game, env string) {
	t := parseTenant(s)
	return t.Game, t.Env
}
