package redisstore

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// TestRevocationSetChecksWithoutAllocating: the copy's check of a request
// finds global and tenant-confined revocations by their members, counts
// them until their deadline only, and allocates nothing.
func TestRevocationSetChecksWithoutAllocating(t *testing.T) {
	r := newRevocationSet(4)
	r.dl["g\x00a"] = 10
	r.dl["t\x00g/e\x00b"] = 10
	in, other := engine.Tenant{Game: "g", Env: "e"}, engine.Tenant{Game: "g", Env: "f"}
	for _, c := range []struct {
		name    string
		t       *engine.Tenant
		subject engine.Subject
		now     int64
		want    bool
	}{
		{"global", nil, "a", 9, true},
		{"global, in a tenant", &other, "a", 9, true},
		{"global at its deadline", &in, "a", 10, false},
		{"in its tenant", &in, "b", 9, true},
		{"in another tenant", &other, "b", 9, false},
		{"confined, asked globally", nil, "b", 9, false},
		{"in its tenant at its deadline", &in, "b", 10, false},
		{"another subject", &in, "c", 0, false},
	} {
		if got := r.revoked(c.t, c.subject, c.now); got != c.want {
			t.Errorf("%s: revoked = %v, want %v", c.name, got, c.want)
		}
	}
	var sink bool
	if n := testing.AllocsPerRun(100, func() { sink = r.revoked(&in, "b", 9) != sink }); n != 0 {
		t.Errorf("a check allocates %v times, want 0", n)
	}
	var none *revocationSet
	if none.revoked(&in, "b", 0) {
		t.Error("an instance without a copy finds a revocation")
	}
}

// TestRevocationSetDropsExpiredPastTheCeiling: entries past their deadline
// leave once the copy holds more than the pool's ceiling.
func TestRevocationSetDropsExpiredPastTheCeiling(t *testing.T) {
	r := newRevocationSet(2)
	r.dl["g\x00a"], r.dl["g\x00b"] = 5, 20
	r.dl["g\x00c"] = 30 // three, one past the ceiling
	r.prune(10)
	if len(r.dl) != 2 || r.dl["g\x00a"] != 0 {
		t.Fatalf("after prune: %v, want b and c", r.dl)
	}
}
