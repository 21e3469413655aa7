package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// MaxOpsSteps bounds one operation sequence, whatever the input length.
const MaxOpsSteps = 400

// opsLimits are small ceilings so random sequences hit every pool and quota.
func opsLimits(l *engine.Limits) {
	l.MaxListings, l.MaxPresence, l.MaxAttempts = 6, 4, 5
	l.MaxReplay, l.MaxRevocations, l.MaxIdempotency = 3, 2, 10
	l.OwnerListingQuota, l.TenantListingQuota = 3, 5
	l.TenantAttemptQuota, l.SubjectAttemptQuota = 4, 3
	l.TenantIdempotencyQuota, l.SubjectIdempotencyQuota = 8, 4
	l.DrainWindow = 5 * time.Second
}

// runRandomOps runs seeded random sequences through RunOps.
func runRandomOps(t *testing.T, f Factory, o options) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			data := make([]byte, 8*MaxOpsSteps)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			runOps(t, f, data, o)
		})
	}
}

// Fuzz registers seed inputs and runs RunOps on every fuzz input; call it
// from a FuzzXxx function: `func FuzzStoreOps(f *testing.F) { storetest.Fuzz(f, factory) }`.
func Fuzz(f *testing.F, newStore Factory, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 5, 1, 2, 8, 0, 0, 0, 10, 0, 0, 10, 1, 0, 12, 0})
	f.Add([]byte{0, 1, 1, 5, 0, 0, 16, 8, 5, 0, 1, 16, 6, 3, 0, 4, 0})
	f.Add([]byte{0, 0, 0, 5, 0, 1, 8, 0, 0, 0, 19, 0, 10, 0, 0, 1, 16, 2, 10, 0, 1, 2, 12, 0, 16, 6})
	r := rand.New(rand.NewPCG(7, 7))
	for n := 0; n < 4; n++ {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runOps(t, newStore, data, o) })
}

// RunOps decodes data into a sequence of at most MaxOpsSteps store
// operations and clock advances, applies them to a fresh store (with small
// ceilings) and to a model of the contract, and after every step checks the
// store's invariants (Inspector), its Stats, every known listing and attempt
// (and, with the relay fallback, every attempt's status, live or ended)
// against the model, and that every rejected call changed nothing.
func RunOps(t *testing.T, f Factory, data []byte, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	runOps(t, f, data, o)
}

func runOps(t *testing.T, f Factory, data []byte, o options) {
	e := newEnv(t, f, opsLimits)
	m := newModel(e)
	m.relay = !o.noRelay
	m.query = !o.noQuery
	in := &stream{b: data}
	for step := 0; step < MaxOpsSteps && !in.done() && !m.unavailable; step++ {
		m.step(in)
		e.check()
		if m.unavailable {
			st := e.s.Stats()
			for p := engine.PoolListings; p <= engine.PoolAttempts; p++ {
				if st.Pools[p-1].Used != 0 || st.Available {
					t.Fatalf("after MarkUnavailable: available=%v, pool %v holds %d", st.Available, p, st.Pools[p-1].Used)
				}
			}
			return
		}
		m.verify()
	}
}

// stream hands out small integers from the fuzz input; 0 once exhausted.
type stream struct {
	b []byte
	i int
}

func (s *stream) done() bool { return s.i >= len(s.b) }

// n returns a value in [0, k).
func (s *stream) n(k int) int {
	if s.i >= len(s.b) {
		return 0
	}
	v := int(s.b[s.i])
	s.i++
	return v % k
}
