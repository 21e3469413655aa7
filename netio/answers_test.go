package netio

import (
	"strings"
	"testing"
	"time"
)

func TestLifetimeSeconds(t *testing.T) {
	f := func(d time.Duration, want uint32) {
		t.Helper()
		if got := lifetimeSeconds(d); got != want {
			t.Fatalf("lifetimeSeconds(%v) = %d, want %d", d, got, want)
		}
	}
	f(20*time.Second, 20)
	f(19999*time.Millisecond, 19) // rounded down (docs/contracts/udp.md#answers-and-their-sizes)
	f(500*time.Millisecond, 0)
	f(-time.Second, 0)
}

func TestMetricsExported(t *testing.T) {
	f := newFixture(t, Config{})
	v, pc := f.listing()
	p := f.peer()
	wantSuccess(t, p.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], p.addr())
	wantError(t, p.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), 409, pc[:])
	p.send([]byte("junk"))
	p.barrier()
	// Counters are flushed after each batch's send; the barrier's answer
	// was sent, so its batch (and every earlier one) may still be flushing:
	// one more round trip orders it.
	p.barrier()
	out := wantMetrics(t, f.set, "after the round trips",
		`rendezvous_udp_answers_total{method="presence",outcome="success"} 1`,
		`rendezvous_udp_answers_total{method="presence",outcome="conflict"} 1`,
		`rendezvous_udp_dropped_total{reason="malformed"} 1`,
		`rendezvous_udp_batch_size_bucket{le="64"} `,
		`rendezvous_udp_commit_duration_seconds_bucket{le="0.1"} `)
	// Two presence refreshes were committed, each in its own batch or not.
	if strings.Contains(out, "rendezvous_udp_commit_duration_seconds_count 0\n") ||
		strings.Contains(out, "rendezvous_udp_batch_size_count 0\n") {
		t.Fatalf("histograms recorded nothing:\n%s", out)
	}
	if strings.Contains(out, "vmrange") {
		t.Fatalf("metrics hold VictoriaMetrics vmrange buckets:\n%s", out)
	}
}
