package refstore_test

import (
	"testing"

	"github.com/rendezvous/rendezvous/bench/refstore"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// newContractRefStore is the storetest.Factory for the baseline.
var newContractRefStore = storetest.FactoryOf(refstore.New)

// TestRefStoreContract proves the baseline has the same semantics as
// MemStore, so the benchmarks compare like with like.
func TestRefStoreContract(t *testing.T) {
	storetest.Run(t, newContractRefStore, storetest.WithoutRelay(), storetest.WithoutBrowseQuery())
}

// FuzzRefStoreOps: go test -run '^$' -fuzz FuzzRefStoreOps -fuzztime 30s -fuzzminimizetime 2s ./bench/refstore/
func FuzzRefStoreOps(f *testing.F) {
	storetest.Fuzz(f, newContractRefStore, storetest.WithoutRelay(), storetest.WithoutBrowseQuery())
}
