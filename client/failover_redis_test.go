package client

import (
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// instanceID reads the instance ID from a server's "listening" log line.
func (s *testServer) instanceID(t *testing.T) string {
	t.Helper()
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "listening" {
			if id, ok := rec["instance"].(string); ok {
				return id
			}
		}
	}
	t.Fatalf("no listening line with an instance ID:\n%s", s.stderr.String())
	return ""
}

// redisInstances starts n server processes on one new redis-server
// (deployment "failover"; the default presence interval of 5 s and
// instance lease of 3 s), waits until each has learnt of
// the others, and returns the redis-server with a client of it and a store
// on the deployment, to read it. extra flags go to every instance.
func redisInstances(t *testing.T, n int, extra ...string) (*redistest.Server, rueidis.Client, *redisstore.Store, []*testServer) {
	t.Helper()
	rs := redistest.Require(t)
	key := filepath.Join(t.TempDir(), "capability.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0", "--store", "redis",
		"--redis-addr", rs.Addr, "--redis-name", "failover", "--capability-key-file", key,
		"--instance-lease", "3s"}
	args = append(args, extra...)
	servers := make([]*testServer, n)
	for i := range servers {
		servers[i] = startServer(t, nil, args...)
	}
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{rs.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	st, err := redisstore.New(context.Background(), redisstore.Config{Client: rc, Name: "failover", Limits: engine.DefaultLimits(), Keyring: engine.RandomKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // every instance renews (each 750 ms) and learns of the others
	return rs, rc, st, servers
}

// presenceInstance is the instance a listing's presence last reached, as
// the store on the deployment reads it.
func presenceInstance(ctx context.Context, st *redisstore.Store, id string) string {
	lid, ok := engine.ParseUUID(id)
	if !ok {
		return ""
	}
	inst, err := st.PresenceInstance(ctx, engine.ListingID{UUID: lid})
	if err != nil || inst.IsZero() {
		return ""
	}
	return inst.String()
}

// TestHAInstanceSIGKILL (the instance-sigkill fault scenario): three
// server processes on one redis-server, two tenants; Publishers talk HTTP
// to one instance and are routed to all three mediators. The instance that
// is the mediator of some of them is killed (SIGKILL) while they refresh
// presence and both tenants' clients browse, read the other tenant's
// listings and join their own through the surviving instances: each of the
// killed instance's Publishers re-resolves the mediator over HTTP and has
// its presence accepted by another instance within 3 s of the killed
// instance's lease expiring in Redis, under the same listing ID; no listing
// is lost, every answer is typed, no tenant sees the other's listings, no
// attempt is introduced twice and no pool exceeds its ceiling.
func TestHAInstanceSIGKILL(t *testing.T) {
	principals, tokens := haTenants(t)
	_, rc, st, servers := redisInstances(t, 3, "--principals", principals)
	for _, s := range servers {
		s.tokens = tokens
	}
	api := servers[0] // every Publisher's HTTP
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	type watched struct {
		pub   *Publisher
		id    ListingID
		moved atomic.Pointer[netip.AddrPort]
	}
	var mu sync.Mutex
	var bad []string
	byMediator := map[netip.AddrPort][]*watched{}
	byTenant := map[string][]ListingID{}
	for i := range 22 {
		tenant := "demo"
		if i >= 18 {
			tenant = "rival"
		}
		role := strings.TrimPrefix(tenant+"-publisher", "demo-")
		w := &watched{}
		pub, err := Publish(ctx, PublisherConfig{API: api.api(t, role), Spec: testSpec("failover " + strconv.Itoa(i)),
			ListenAddr: "127.0.0.1:0", OnEvent: func(ev Event) {
				switch ev.Kind {
				case EventMediatorMoved:
					w.moved.Store(&ev.Mediator)
				case EventLeaseLost, EventRepublished, EventStopped, EventDraining:
					mu.Lock()
					bad = append(bad, ev.String())
					mu.Unlock()
				}
			}})
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		t.Cleanup(func() { _ = pub.Close(context.Background()) })
		w.pub, w.id = pub, pub.ListingID()
		byMediator[pub.Socket().Mediator()] = append(byMediator[pub.Socket().Mediator()], w)
		byTenant[tenant] = append(byTenant[tenant], w.id)
	}
	// The victim: an instance other than the Publishers' HTTP one that is
	// the mediator of some of them.
	var victim *testServer
	var survivors []*testServer
	for _, s := range servers[1:] {
		if victim == nil && len(byMediator[s.mediator]) > 0 {
			victim = s
		} else {
			survivors = append(survivors, s)
		}
	}
	if victim == nil || len(byMediator) < 2 {
		t.Fatalf("22 listings routed to %d mediators, none of them instance 2 or 3", len(byMediator))
	}
	survivors = append(survivors, api)
	moving := byMediator[victim.mediator]

	// Load through the surviving instances throughout: both tenants'
	// clients, every Publisher taking its introductions.
	f := newHAFigures()
	for tenant, other := range map[string]string{"demo": "rival", "rival": "demo"} {
		tn := &haTenant{own: byTenant[tenant], other: byTenant[other], others: map[ListingID]bool{}}
		for _, id := range tn.other {
			tn.others[id] = true
		}
		for _, s := range survivors {
			tn.clients = append(tn.clients, s.api(t, strings.TrimPrefix(tenant+"-client", "demo-")))
		}
		tn.run(ctx, f)
	}
	for _, ws := range byMediator {
		for _, w := range ws {
			f.accept(ctx, w.pub)
		}
	}
	defer f.Halt()
	// The kill follows at once; the load runs on through the failover.

	victimID := victim.instanceID(t)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	// The lease deadline it left in Redis (server time, µs; one clock here).
	dl, err := rc.Do(ctx, rc.B().Zscore().Key("rdv:{failover}:nexp").Member(victimID).Build()).AsFloat64()
	if err != nil {
		t.Fatalf("the killed instance's lease deadline: %v", err)
	}
	expiry := time.UnixMicro(int64(dl))

	// Each moving listing's presence reaches another instance: its record
	// names another instance as where presence last arrived.
	movedAt := make([]time.Time, len(moving))
	deadline := time.Now().Add(hangGuard)
	for left := len(moving); left > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d listings never refreshed presence through another instance", left, len(moving))
		}
		for i, w := range moving {
			if !movedAt[i].IsZero() {
				continue
			}
			if pi := presenceInstance(ctx, st, w.id.String()); pi != "" && pi != victimID {
				movedAt[i] = time.Now()
				left--
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	var worst time.Duration
	for i, w := range moving {
		after := movedAt[i].Sub(expiry)
		worst = max(worst, after)
		if after > 3*time.Second {
			t.Errorf("listing %d refreshed through another instance %v after the lease expiry, want within 3s", i, after)
		}
		if m := w.moved.Load(); m == nil || *m == victim.mediator {
			t.Errorf("listing %d: no move away from the killed mediator was reported (%v)", i, m)
		}
		if w.pub.ListingID() != w.id {
			t.Errorf("listing %d was published anew as %s", i, w.pub.ListingID())
		}
	}
	t.Logf("%d listings moved off the killed instance; the last %v after its lease expired", len(moving), worst)
	f.recovery, f.recovered = worst, true
	time.Sleep(time.Second) // the load goes on after the move

	// No listing lost: every one is readable by its tenant through a
	// surviving instance; no pool above its ceiling on any survivor.
	for tenant, ids := range byTenant {
		cl := servers[0].api(t, strings.TrimPrefix(tenant+"-client", "demo-"))
		for _, id := range ids {
			if _, err := cl.GetListing(ctx, id); err != nil {
				t.Errorf("listing %s after the failover: %v", id, err)
				f.add(&f.lost)
			}
		}
	}
	for _, s := range survivors {
		f.ceilings(ctx, t, s.api(t, "operator"))
	}
	f.Halt()
	f.report(t, "instance-sigkill", "SIGKILL of one of three instances (one redis-server) while two tenants' Publishers keep presence and their clients browse, read the other tenant's listings (answered not_found) and join their own (double introductions: an attempt handed twice to its host's Accept); recovery: the killed instance's last host refreshing through another, from its lease expiry",
		3*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("events or errors during the failover: %v", bad)
	}
}

// TestPeerHostKeepsItsListingAcrossSIGKILL: `rendezvous-peer host`, whose
// mediator is killed (SIGKILL) while its HTTP goes to another instance,
// says its presence moved to the surviving mediator and keeps its listing.
func TestPeerHostKeepsItsListingAcrossSIGKILL(t *testing.T) {
	_, _, st, servers := redisInstances(t, 2)
	api, victim := servers[0], servers[1]
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	victimID := victim.instanceID(t)
	var host *peerProc
	var listing string
	for try := 0; host == nil; try++ { // until rendezvous hashing routes one to the victim
		if try == 10 {
			t.Fatal("10 listings and none routed to the second instance")
		}
		p := startPeer(t, nil, api.tokens["publisher"], "host", "--server", api.http, "--name", "cli failover "+strconv.Itoa(try), "--listen", "127.0.0.1:0")
		id := p.waitLine(t, publishedRe)
		if presenceInstance(ctx, st, id) == victimID {
			host, listing = p, id
			continue
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	host.waitLine(t, regexp.MustCompile(`^listing `+listing+`: presence now goes to mediator `+regexp.QuoteMeta(api.mediator.String())))
	id, err := ParseListingID(listing)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.api(t, "client").GetListing(ctx, id); err != nil {
		t.Fatalf("the host's listing after its mediator died: %v", err)
	}
	if out := host.stdout.String(); strings.Contains(out, "lost") || strings.Contains(out, "published again") {
		t.Fatalf("the host lost or republished its listing:\n%s", out)
	}
}

// TestPublisherLeavesADrainingMediator: SIGTERM to the instance that is a
// Publisher's mediator. While it drains (an attempt in flight keeps it up),
// the Publisher's next lease renewal names another mediator and the
// Publisher moves there, before the draining instance has exited.
func TestPublisherLeavesADrainingMediator(t *testing.T) {
	_, _, st, servers := redisInstances(t, 2, "--lease-ttl", "2s") // renewals every second
	api, draining := servers[0], servers[1]
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	moved := make(chan netip.AddrPort, 1)
	var pub *Publisher
	for try := 0; pub == nil; try++ { // until rendezvous hashing routes one to the second instance
		if try == 10 {
			t.Fatal("10 listings and none routed to the second instance")
		}
		p, err := Publish(ctx, PublisherConfig{API: api.api(t, "publisher"), Spec: testSpec("drain " + strconv.Itoa(try)),
			ListenAddr: "127.0.0.1:0", OnEvent: func(ev Event) {
				if ev.Kind == EventMediatorMoved {
					select {
					case moved <- ev.Mediator:
					default:
					}
				}
			}})
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		if p.Socket().Mediator() != draining.mediator {
			_ = p.Close(ctx)
			continue
		}
		pub = p
		t.Cleanup(func() { _ = p.Close(context.Background()) })
	}
	// An attempt the client never binds stays in flight, so the instance
	// drains for the attempt lifetime instead of exiting at once.
	if _, err := api.api(t, "client").CreateJoinAttempt(ctx, NewIdempotencyKey(), pub.ListingID(), goodSpec().ProtocolVersion); err != nil {
		t.Fatalf("join: %v", err)
	}
	if err := draining.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-moved:
		if m != api.mediator {
			t.Fatalf("the Publisher moved to %v, want the other instance's %v", m, api.mediator)
		}
	case <-time.After(hangGuard):
		t.Fatal("the Publisher never left its draining mediator")
	}
	select {
	case <-draining.exited:
		t.Fatal("the draining instance exited before its Publisher moved: nothing shows the move came from the drain")
	default:
	}
	apiID := api.instanceID(t)
	for deadline := time.Now().Add(hangGuard); presenceInstance(ctx, st, pub.ListingID().String()) != apiID; {
		if time.Now().After(deadline) {
			t.Fatal("the Publisher's presence never reached the other instance")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
