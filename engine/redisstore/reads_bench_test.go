package redisstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// BenchmarkAttemptStatus reads the status of 256 live attempts round
// robin, by their client, over 1,000 listings (BenchmarkGetListing's
// fill): a fixed-key read (scripts/attempt_status.lua).
func BenchmarkAttemptStatus(b *testing.B) {
	e := newBenchEnv(b, 1000)
	ctx := context.Background()
	ids := make([]engine.AttemptID, 256)
	for i := range ids {
		a, r, err := e.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: benchTenant, Client: "status", ProtocolVersion: 1,
			IdempotencyKey: "status-" + strconv.Itoa(i), Listing: e.views[i*3].ID})
		if err != nil || !r.OK() {
			b.Fatalf("CreateJoinAttempt: %v %v", r.Outcome, err)
		}
		ids[i] = a.ID
	}
	e.run(b, 1, func(i int) {
		id := ids[i%len(ids)]
		if st, r, err := e.s.AttemptStatus(ctx, engine.GetAttempt{Tenant: benchTenant, Subject: "status", Attempt: id}); err != nil || !r.OK() || st.Attempt != id {
			b.Fatalf("%v %v", r.Outcome, err)
		}
	})
}
