package memstore

import (
	"encoding/binary"

	"github.com/rendezvous/rendezvous/engine"
)

// uuidIndex maps store-generated UUIDs to slots. It is an open-addressing
// hash table with linear probing and the key stored inline: a lookup
// usually reads one cache line of the table and nothing else, where a Go
// map (sharded or not) reads its directory, a group's control word and
// then the slot. At 250,000 listings that difference is most of a presence
// refresh's cache misses.
//
// Deletion shifts the following run back (no tombstones), so probe runs
// stay as short as the load allows. The table doubles past 3/4 load and
// never shrinks (a store's fill returns to its peak). Growth allocates;
// get, put into a table with room, and del do not.
//
// The UUIDs are random (store-made), so their first 8 bytes, mixed with a
// multiplicative hash, spread evenly; a caller can choose the UUIDs it looks
// up but not the ones stored, so it cannot lengthen a probe run.
//
// Not safe for concurrent use; concurrent readers are fine while no writer
// runs.
type uuidIndex struct {
	tab   []uuidEntry // len is a power of two, or 0
	shift uint8       // 64 - log2(len(tab))
	n     int
}

// uuidEntry is one table cell; slot holds slot+1 so the zero cell is empty.
type uuidEntry struct {
	key  engine.UUID
	slot int32
}

const uuidMinTable = 16

// home is u's preferred cell.
func (x *uuidIndex) home(u *engine.UUID) int {
	h := binary.LittleEndian.Uint64(u[:8]) ^ binary.LittleEndian.Uint64(u[8:])
	return int((h * 0x9e3779b97f4a7c15) >> x.shift)
}

func (x *uuidIndex) get(u engine.UUID) (int32, bool) {
	if len(x.tab) == 0 {
		return 0, false
	}
	mask := len(x.tab) - 1
	for i := x.home(&u); ; i = (i + 1) & mask {
		e := &x.tab[i]
		if e.slot == 0 {
			return 0, false
		}
		if e.key == u {
			return e.slot - 1, true
		}
	}
}

// put maps u to slot i, replacing any previous mapping.
func (x *uuidIndex) put(u engine.UUID, i int32) {
	if (x.n+1)*4 > len(x.tab)*3 {
		x.grow()
	}
	mask := len(x.tab) - 1
	for j := x.home(&u); ; j = (j + 1) & mask {
		e := &x.tab[j]
		if e.slot == 0 {
			*e = uuidEntry{key: u, slot: i + 1}
			x.n++
			return
		}
		if e.key == u {
			e.slot = i + 1
			return
		}
	}
}

func (x *uuidIndex) grow() {
	old := x.tab
	n := max(uuidMinTable, 2*len(old))
	x.tab = make([]uuidEntry, n)
	x.shift = uint8(64 - log2(n))
	x.n = 0
	for k := range old {
		if old[k].slot != 0 {
			x.put(old[k].key, old[k].slot-1)
		}
	}
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// del removes u (a no-op if absent) and shifts the rest of its probe run
// back so that every remaining key is still reachable from its home cell.
func (x *uuidIndex) del(u engine.UUID) {
	if len(x.tab) == 0 {
		return
	}
	mask := len(x.tab) - 1
	i := x.home(&u)
	for {
		e := &x.tab[i]
		if e.slot == 0 {
			return
		}
		if e.key == u {
			break
		}
		i = (i + 1) & mask
	}
	x.n--
	for {
		x.tab[i] = uuidEntry{}
		j := i
		for {
			j = (j + 1) & mask
			if x.tab[j].slot == 0 {
				return
			}
			// The entry at j may move to i only if its home is not in the
			// cyclic range (i, j]: otherwise i is before its home.
			k := x.home(&x.tab[j].key)
			if i <= j {
				if i < k && k <= j {
					continue
				}
			} else if i < k || k <= j {
				continue
			}
			break
		}
		x.tab[i] = x.tab[j]
		i = j
	}
}

func (x *uuidIndex) len() int { return x.n }
