package storetest

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runStats checks Stats: identity, ceilings, occupancy and InFlight.
func runStats(t *testing.T, f Factory) {
	t.Run("CountsAndCeilings", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) {
			l.MaxListings, l.MaxPresence, l.MaxAttempts = 11, 12, 13
			l.MaxReplay, l.MaxRevocations, l.MaxIdempotency = 14, 15, 16
		}, wholePools)
		st := e.s.Stats()
		if st.InstanceID != e.s.InstanceID() || st.InstanceID.IsZero() || !st.Available || st.Draining || st.InFlight != 0 {
			t.Fatalf("initial stats: %s", fmtStats(st))
		}
		want := pools([6]int{0, 0, 0, 0, 0, 0}, [6]int{11, 12, 13, 14, 15, 16})
		if st.Pools != want {
			t.Fatalf("initial pools %v, want %v", st.Pools, want)
		}
		v := e.visible("publisher-1")
		e.create(e.listingCmd("publisher-1"))
		a := e.attempt(v, "client-1")
		e.attempt(v, "client-2")
		e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: "k"})
		e.s.RevokePrincipal(e.ctx, "x", time.Minute)
		want = pools([6]int{2, 1, 2, 1, 1, 4}, [6]int{11, 12, 13, 14, 15, 16})
		st = e.s.Stats()
		if st.Pools != want || st.InFlight != 2 {
			t.Fatalf("pools %v inflight %d, want %v and 2", st.Pools, st.InFlight, want)
		}
		e.bind(e.bindCmd(a, engine.RoleHost, pub(1), netipZero))
		e.bind(e.bindCmd(a, engine.RoleClient, pub(2), netipZero))
		if st := e.s.Stats(); st.InFlight != 2 {
			t.Fatalf("InFlight = %d before consumption, want 2", st.InFlight)
		}
		_, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction", r, err, engine.Success)
		if st := e.s.Stats(); st.InFlight != 1 || st.Pools[engine.PoolAttempts-1].Used != 2 {
			t.Fatalf("after consumption: inflight %d attempts %d, want 1 and 2", st.InFlight, st.Pools[engine.PoolAttempts-1].Used)
		}
	})
}

func pools(used, ceiling [engine.NumGlobalPools]int) [engine.NumGlobalPools]engine.PoolStat {
	var p [engine.NumGlobalPools]engine.PoolStat
	for i := range p {
		p[i] = engine.PoolStat{Used: used[i], Ceiling: ceiling[i]}
	}
	return p
}
