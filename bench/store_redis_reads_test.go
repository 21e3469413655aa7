package bench

import (
	"context"
	"strconv"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// BenchmarkRedisStoreReads measures the Redis store's single reads at the
// full fill, as BenchmarkRedisStore does its transitions, as the HTTP API
// makes them: a listing read (GET /v1/listings/{id}) and an attempt's
// status (GET .../join-attempts/{id}) by its client, each deciding its
// caller's revocation in the same call (GetListingAs, AttemptStatusAs).
// Each is one call of a fixed number of key reads whatever the fill.
func BenchmarkRedisStoreReads(b *testing.B) {
	ctx := context.Background()
	b.Run("op=get", func(b *testing.B) {
		f := redisFixture(b)
		rs := f.s.(*redisstore.Store)
		measureRedis(b, 1, func() {
			for b.Loop() {
				i := f.pick()
				v, r, err := rs.GetListingAs(ctx, "reader", engine.GetListing{Tenant: storeTenant, Listing: f.ls[i].ID, Joinable: true})
				if err != nil || !r.OK() || v.ID != f.ls[i].ID || !v.PresenceFresh {
					b.Fatalf("get: %v %v", r.Outcome, err)
				}
			}
		})
	})
	b.Run("op=status", func(b *testing.B) {
		f := redisFixture(b)
		// Attempts of their own (untimed), so the reads find them live
		// whatever the other benchmarks did to the fill's; on listings
		// that already hold one of the fill's (f.offered), so the
		// refreshes BenchmarkRedisStore measures without a pending offer
		// still have none.
		const n = 256
		ids := make([]engine.AttemptID, n)
		clients := make([]engine.Subject, n)
		for j := range ids {
			i := j % f.offered
			clients[j] = engine.Subject("status-" + strconv.Itoa(j%16))
			a, r, err := f.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: storeTenant, Client: clients[j],
				IdempotencyKey: "status-" + strconv.Itoa(f.serial) + "-" + strconv.Itoa(j), Listing: f.ls[i].ID, ProtocolVersion: 7})
			if err != nil || !r.OK() {
				b.Fatalf("join: %v %v", r.Outcome, err)
			}
			ids[j] = a.ID
		}
		f.serial++
		j := 0
		rs := f.s.(*redisstore.Store)
		measureRedis(b, 1, func() {
			for b.Loop() {
				j = (j + 1) % n
				st, r, err := rs.AttemptStatusAs(ctx, engine.GetAttempt{Tenant: storeTenant, Subject: clients[j], Attempt: ids[j]})
				if err != nil || !r.OK() || st.Attempt != ids[j] {
					b.Fatalf("status: %v %v", r.Outcome, err)
				}
			}
		})
	})
}
