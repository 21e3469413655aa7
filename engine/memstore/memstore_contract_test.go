package memstore_test

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine/memstore"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// newContractMemStore is the storetest.Factory for the in-memory store.
var newContractMemStore = storetest.FactoryOf(memstore.New)

// TestMemStoreContract runs the whole store contract suite on the in-memory store.
func TestMemStoreContract(t *testing.T) {
	storetest.Run(t, newContractMemStore)
}

// FuzzStoreOps drives the in-memory store through fuzzer-chosen operation sequences and
// clock advances, checking invariants and the contract model after every
// step: go test -run '^$' -fuzz FuzzStoreOps -fuzztime 60s -fuzzminimizetime 2s ./engine/memstore/
// (without a short -fuzzminimizetime the progress line sits at "0/sec" while
// each new interesting input is minimized, up to 60 s each).
func FuzzStoreOps(f *testing.F) {
	storetest.Fuzz(f, newContractMemStore)
}
