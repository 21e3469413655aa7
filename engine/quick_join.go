package engine

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// Hash is a quick join's idempotency fingerprint: the query's tenant,
// protocol version, region and filter, and the join's relay-only request.
// The filter is hashed canonically: the order of its attribute filters and
// of a one-of filter's values, and repeated values, do not change it, so a
// retry that spells the same query differently replays.
func (q *QuickJoin) Hash() [32]byte {
	h := sha256.New()
	var n [8]byte
	num := func(v uint64) {
		binary.BigEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	str := func(v string) {
		num(uint64(len(v)))
		h.Write([]byte(v))
	}
	b := &q.Query
	str(b.Tenant.Game)
	str(b.Tenant.Env)
	num(uint64(b.ProtocolVersion))
	str(b.Region)
	f := &b.Filter
	num(uint64(f.MinFreeSlots))
	num(uint64(f.MinPlayers))
	if f.HasMaxPlayers {
		num(1)
		num(uint64(f.MaxPlayers))
	} else {
		num(0)
	}
	strs := slices.Clone(f.Strings)
	for i := range strs {
		strs[i].Values = slices.Compact(slices.Sorted(slices.Values(strs[i].Values)))
	}
	slices.SortFunc(strs, func(a, b StringFilter) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), slices.Compare(a.Values, b.Values))
	})
	strs = slices.CompactFunc(strs, func(a, b StringFilter) bool { return a.Name == b.Name && slices.Equal(a.Values, b.Values) })
	num(uint64(len(strs)))
	for _, sf := range strs {
		str(sf.Name)
		num(uint64(len(sf.Values)))
		for _, v := range sf.Values {
			str(v)
		}
	}
	nums := slices.Clone(f.Numbers)
	slices.SortFunc(nums, func(a, b NumberFilter) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Op, b.Op), cmp.Compare(a.Value, b.Value))
	})
	nums = slices.Compact(nums)
	num(uint64(len(nums)))
	for _, nf := range nums {
		str(nf.Name)
		num(uint64(nf.Op))
		num(uint64(nf.Value))
	}
	if q.Join.RelayOnly {
		num(1)
	} else {
		num(0)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}
