package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// The tests of this file drive promotions by hand (REPLICAOF) on dedicated
// servers, so each step of a topology change is under the test's control:
// which data the promoted server holds, and whether its library (and the
// primary it last confirmed, scripts/prelude/60_cleanup.lua followPrimary)
// was loaded again by a full resynchronisation.

// replicaServer is a dedicated server that syncs without delay (a full
// resynchronisation otherwise waits five seconds for more replicas).
func replicaServer(t *testing.T) (*redistest.Server, rueidis.Client) {
	t.Helper()
	redistest.SkipIfMissing(t)
	srv, err := redistest.StartWith("--repl-diskless-sync-delay", "0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c := newClient(t, srv.Addr)
	t.Cleanup(c.Close)
	return srv, c
}

func do(t *testing.T, c rueidis.Client, args ...string) {
	t.Helper()
	if err := c.Do(context.Background(), c.B().Arbitrary(args...).Build()).Error(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// follow makes the server of c a replica of primary and waits (bounded)
// until it has everything primary has.
func follow(t *testing.T, c rueidis.Client, primary *redistest.Server, pc rueidis.Client) {
	t.Helper()
	host, port, _ := net.SplitHostPort(primary.Addr)
	do(t, c, "REPLICAOF", host, port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := c.Do(context.Background(), c.B().Info().Section("replication").Build()).ToString()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			n, err := pc.Do(context.Background(), pc.B().Wait().Numreplicas(1).Timeout(1000).Build()).AsInt64()
			if err == nil && n >= 1 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not replicate %s after 30s: %v", c, primary.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// moveTo points the rig at another server of the same deployment (the
// client reaching a promoted replica).
func (g *attemptRig) moveTo(c rueidis.Client, name string) {
	g.t.Helper()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: name, Limits: engine.DefaultLimits(), Keyring: g.k})
	if err != nil {
		g.t.Fatalf("redisstore.New on the promoted server: %v", err)
	}
	g.s = s
}

// TestAttemptsOfAnEarlierPrimaryAreVoid: a promoted replica (a new
// replication ID, the old one kept as its second) voids every attempt it
// inherited, introduced or not, at its first writing call.
func TestAttemptsOfAnEarlierPrimaryAreVoid(t *testing.T) {
	a, ac := replicaServer(t)
	_, bc := replicaServer(t)
	g := newAttemptRig(t, ac, "gen")
	pending, introduced := g.pendingAndIntroduced()
	gen := generation(t, ac, "gen")
	follow(t, bc, a, ac)
	do(t, bc, "REPLICAOF", "NO", "ONE")
	g.moveTo(bc, "gen")
	g.voidedEverywhere(pending, "an attempt bound under the earlier primary")
	g.voidedEverywhere(introduced, "an attempt introduced under the earlier primary")
	wantGeneration(t, bc, "gen", gen+1, "after one new primary")
	g.worksAgain()
}

// TestDemotedPrimaryRepromotedLosingAConsumeVoids is the demote-then-promote
// sequence in which the server that confirmed a primary once (and would
// skip the check on its own data) comes back with another's data: B takes
// over from A holding everything but a consume A acknowledged afterwards,
// writes nothing, and A, demoted, resynchronises from B and is promoted
// again. A's data then still names A's first term as the primary it
// followed, but the full resynchronisation loaded the library again, so
// A's first call reads its replication ID and voids the attempt whose
// introduction was lost instead of introducing it a second time.
func TestDemotedPrimaryRepromotedLosingAConsumeVoids(t *testing.T) {
	a, ac := replicaServer(t)
	b, bc := replicaServer(t)
	g := newAttemptRig(t, ac, "lossy")
	lost := g.boundAttempt()
	follow(t, bc, a, ac)
	do(t, bc, "REPLICAOF", "NO", "ONE") // B takes over, holding lost bound and unconsumed
	if o := g.consume(lost); o != engine.Success {
		t.Fatalf("ConsumeIntroduction on A = %v, want Success (acknowledged, never replicated)", o)
	}
	gen := generation(t, ac, "lossy")
	follow(t, ac, b, bc) // A resynchronises from B: its consume is gone
	if m, err := ac.Do(context.Background(), ac.B().Hget().Key("rdv:{lossy}:a:"+attemptIDOn(t, ac, "lossy", lost)).Field("consumed").Build()).ToString(); err != nil || m != "0" {
		t.Fatalf("A's copy of the attempt after the resync: consumed=%q %v; the test needs it unconsumed", m, err)
	}
	do(t, bc, "REPLICAOF", "127.0.0.1", "1") // B goes (a primary that never answers)
	do(t, ac, "REPLICAOF", "NO", "ONE")      // A's second term
	g.voidedEverywhere(lost, "the attempt whose introduction was lost")
	wantGeneration(t, ac, "lossy", gen+1, "after A's second term")
	g.worksAgain()
}

// TestDemotedThenPromotedOnItsOwnDataKeepsAttempts: a primary demoted and
// promoted again without taking anyone's data (here a replica of a server
// that never answers) holds exactly what it acknowledged, so nothing can
// have been introduced elsewhere and lost: it skips the replication check
// and its attempts stay, pending and introduced alike.
func TestDemotedThenPromotedOnItsOwnDataKeepsAttempts(t *testing.T) {
	_, c := dedicatedServer(t)
	g := newAttemptRig(t, c, "own")
	pending, introduced := g.pendingAndIntroduced()
	gen := generation(t, c, "own")
	l, err := net.Listen("tcp", "127.0.0.1:0") // a primary that never answers
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	do(t, c, "REPLICAOF", "127.0.0.1", fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
	do(t, c, "REPLICAOF", "NO", "ONE")
	if o := g.consume(pending); o != engine.Success {
		t.Fatalf("ConsumeIntroduction of the pending attempt = %v, want Success", o)
	}
	if o := g.consume(introduced); o != engine.ReplayRejected {
		t.Fatalf("ConsumeIntroduction of the introduced attempt = %v, want ReplayRejected", o)
	}
	wantGeneration(t, c, "own", gen, "with no new primary's data")
}

// attemptIDOn reads the ID of the attempt of handle h through c, without
// running a function.
func attemptIDOn(t *testing.T, c rueidis.Client, name string, h engine.Handle) string {
	t.Helper()
	id, err := c.Do(context.Background(), c.B().Hget().Key("rdv:{"+name+"}:ah").Field(h.UUID.String()).Build()).ToString()
	if err != nil {
		t.Fatalf("the attempt's ID: %v", err)
	}
	return id
}
