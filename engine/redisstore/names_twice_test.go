package redisstore

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// namesTwice decides whether apply_batch.lua may decide refreshes inline
// without looking at what earlier refreshes of the call wrote: a false
// "no" would let a repeated listing's second refresh be judged against the
// record as loaded.
func TestNamesTwice(t *testing.T) {
	named := make([]engine.UUID, 128)
	for i := range named {
		named[i] = engine.NewUUID()
	}
	if namesTwice(named) {
		// 128 names in 256 slots share some: probing tells them apart.
		t.Fatal("128 distinct names reported as naming one twice")
	}
	for _, at := range [][2]int{{0, 1}, {0, 127}, {63, 64}, {126, 127}} {
		twice := append([]engine.UUID(nil), named...)
		twice[at[1]] = twice[at[0]]
		if !namesTwice(twice) {
			t.Fatalf("name %d repeated at %d not found", at[0], at[1])
		}
	}
	if !namesTwice(make([]engine.UUID, 129)) {
		t.Fatal("a batch over 128 refreshes must count as naming twice")
	}
	if namesTwice(nil) {
		t.Fatal("an empty batch names nothing twice")
	}
}

func TestNamesTwiceAllocatesNothing(t *testing.T) {
	named := make([]engine.UUID, 64)
	for i := range named {
		named[i] = engine.NewUUID()
	}
	if n := testing.AllocsPerRun(100, func() { namesTwice(named) }); n != 0 {
		t.Fatalf("namesTwice allocates %v times", n)
	}
}
