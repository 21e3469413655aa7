package redisstore_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestPlannedFailoverKeepsAcknowledgedListings creates listings without a
// pause through a store following Sentinel while the primary role is moved
// three times, one failover right after another, and requires every
// listing whose creation was answered before a failover began to be
// readable on the primary it promoted, and at the end every acknowledged
// listing, those answered during a failover included.
//
// The failovers follow Topology.PlannedFailover. RDV_BARE_FAILOVER=1
// issues SENTINEL FAILOVER alone instead and reproduces the loss (the test
// fails): the listings the old primary answered between the chosen
// replica's promotion and the re-pointing of its other replica, about a
// second of them, are gone once that replica resyncs from the new primary.
func TestPlannedFailoverKeepsAcknowledgedListings(t *testing.T) {
	runPlannedFailovers(t, 3, false)
}

// TestPlannedFailoverToALaggingReplicaKeepsAcknowledgedListings: the replica
// Sentinel prefers (replica-priority 1) is stopped for a second before the
// failover, so the primary answers writes its other replica acknowledges
// while the preferred one has them unread. Sentinel picks by the priority
// and offsets of its last INFO (up to 10 s old) and promotes it anyway;
// PlannedFailover waits for every replica to acknowledge the whole stream
// first. With RDV_BARE_FAILOVER=1 the promoted replica lacks the last
// second of acknowledged listings.
func TestPlannedFailoverToALaggingReplicaKeepsAcknowledgedListings(t *testing.T) {
	runPlannedFailovers(t, 1, true)
}

// runPlannedFailovers moves the primary role failovers times under two
// writers creating listings; lagging stops the replica Sentinel will
// promote for a second before each failover.
func runPlannedFailovers(t *testing.T, failovers int, lagging bool) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{})
	start := time.Now()
	ev := watchSentinels(t, top, start)
	c, err := rueidis.NewClient(redisstore.SentinelClientOption(top.SentinelAddrs(), redistest.MasterName, ""))
	if err != nil {
		t.Fatalf("connecting through Sentinel: %v", err)
	}
	defer c.Close()
	limits := engine.DefaultLimits()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: "planned", Limits: limits, Keyring: engine.RandomKeyring()})
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	ctx := context.Background()
	w := startListingWriters(s, start)
	defer w.stop()

	for round := range failovers {
		primary, err := top.PrimaryAddr(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if lagging {
			preferReplica(t, top, primary, ev)
		} else {
			time.Sleep(1500 * time.Millisecond) // writes flow on this primary
		}
		began := time.Since(start)
		ev.add(fmt.Sprintf("test: failover %d asked (primary %s)", round+1, primary))
		promoted, err := failover(ctx, top, primary)
		if err != nil {
			t.Fatalf("%v\n%s", err, ev)
		}
		ev.add(fmt.Sprintf("test: every sentinel names %s", promoted))
		lost, checked := w.missing(t, began, limits.LeaseTTL)
		ev.add(fmt.Sprintf("test: %d of %d listings acknowledged before failover %d missing%s", len(lost), checked, round+1, span(lost)))
		if len(lost) > 0 {
			t.Fatalf("failover %d: %d listings acknowledged before it are missing on the promoted primary; timeline:\n%s", round+1, len(lost), ev)
		}
	}
	// Let the demoted primaries become replicas (Sentinel converts them
	// about 10 s after the switch), then count every loss.
	w.stop()
	time.Sleep(10 * time.Second)
	lost, checked := w.missing(t, time.Since(start), limits.LeaseTTL)
	ev.add(fmt.Sprintf("test: at the end: %d of %d acknowledged listings missing%s (%d creations refused)", len(lost), checked, span(lost), w.refused.Load()))
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged listings missing after %d failovers; timeline:\n%s", len(lost), failovers, ev)
	}
	t.Logf("timeline:\n%s", ev)
}

// failover moves the primary role away from primary: the documented
// procedure, or SENTINEL FAILOVER alone with RDV_BARE_FAILOVER set (to
// reproduce what it loses).
func failover(ctx context.Context, top *redistest.Topology, primary string) (string, error) {
	if os.Getenv("RDV_BARE_FAILOVER") == "" {
		return top.PlannedFailover(ctx, 30*time.Second)
	}
	if _, err := top.Do(ctx, top.Sentinels[0].Addr, "SENTINEL", "FAILOVER", redistest.MasterName); err != nil {
		return "", err
	}
	return top.WaitForPromotion(ctx, primary, 30*time.Second)
}

// preferReplica makes a replica of primary the one the first sentinel will
// promote (replica-priority 1, waiting until the sentinel has read it), then
// stops it for a second of writes and resumes it 300 ms later, in the
// middle of the failover that follows.
func preferReplica(t *testing.T, top *redistest.Topology, primary string, ev *sentinelEvents) {
	t.Helper()
	ctx := context.Background()
	var r *redistest.Server
	for _, n := range top.Nodes {
		if n.Addr != primary {
			r = n
			break
		}
	}
	if _, err := top.Do(ctx, r.Addr, "CONFIG", "SET", "replica-priority", "1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // Sentinel reads a replica's INFO every 10 s
	for sentinelPriority(t, top, r.Addr) != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel does not see replica %s's priority", r.Addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	ev.add("test: stopped the preferred replica " + r.Addr)
	t.Cleanup(func() { _ = r.Resume() })
	time.Sleep(time.Second)
	time.AfterFunc(300*time.Millisecond, func() {
		_ = r.Resume()
		ev.add("test: resumed " + r.Addr)
	})
}

// sentinelPriority is the replica-priority the first sentinel knows for the
// replica at addr.
func sentinelPriority(t *testing.T, top *redistest.Topology, addr string) string {
	t.Helper()
	m, err := top.Do(context.Background(), top.Sentinels[0].Addr, "SENTINEL", "REPLICAS", redistest.MasterName)
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.ToArray()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		f, err := e.AsStrMap()
		if err == nil && f["name"] == addr {
			return f["slave-priority"]
		}
	}
	return ""
}

// listingWriters create listings from two goroutines and remember each
// whose creation was answered Success.
type listingWriters struct {
	s       *redisstore.Store
	start   time.Time
	mu      sync.Mutex
	acked   []ackedListing
	refused atomic.Int64
	stop    func()
}

// ackedListing is a listing whose creation the store answered Success.
type ackedListing struct {
	v  engine.ListingView
	at time.Duration // since the test began
}

var plannedTenant = engine.Tenant{Game: "g", Env: "e"}

func startListingWriters(s *redisstore.Store, start time.Time) *listingWriters {
	w := &listingWriters{s: s, start: start}
	var seq atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				n := seq.Add(1)
				v, r, err := s.CreateListing(context.Background(), engine.CreateListing{Tenant: plannedTenant,
					Owner: engine.Subject(fmt.Sprintf("o%d", n)), IdempotencyKey: fmt.Sprintf("k%d", n),
					Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
						Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4}})
				if err == nil && r.OK() {
					w.mu.Lock()
					w.acked = append(w.acked, ackedListing{v: v, at: time.Since(start)})
					w.mu.Unlock()
				} else {
					w.refused.Add(1) // typed: service_unavailable while the primary moves
				}
				// A few hundred listings a second keep the tenant under
				// its quota for the whole test.
				time.Sleep(3 * time.Millisecond)
			}
		}()
	}
	w.stop = sync.OnceFunc(func() { close(done); wg.Wait() })
	return w
}

// missing lists the listings acknowledged before until (and not old enough
// to have expired) that the store cannot read on the primary it follows.
func (w *listingWriters) missing(t *testing.T, until, leaseTTL time.Duration) (lost []ackedListing, checked int) {
	t.Helper()
	w.mu.Lock()
	all := slices.Clone(w.acked)
	w.mu.Unlock()
	fresh := time.Since(w.start) - leaseTTL + 5*time.Second
	for _, a := range all {
		if a.at >= until || a.at < fresh {
			continue
		}
		checked++
		var o engine.Outcome
		for range 100 { // service_unavailable until the store follows the promotion
			_, r, err := w.s.GetListing(context.Background(), engine.GetListing{Tenant: plannedTenant, Listing: a.v.ID})
			if err != nil {
				t.Fatalf("GetListing: %v", err)
			}
			if o = r.Outcome; o != engine.ServiceUnavailable {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if o != engine.Success {
			lost = append(lost, a)
		}
	}
	return lost, checked
}

// span says when the lost listings were acknowledged: runs of them less
// than 100 ms apart, as first-last.
func span(lost []ackedListing) string {
	if len(lost) == 0 {
		return ""
	}
	sorted := slices.SortedFunc(slices.Values(lost), func(a, b ackedListing) int { return cmp.Compare(a.at, b.at) })
	var runs []string
	first, last := sorted[0].at, sorted[0].at
	flush := func() { runs = append(runs, fmt.Sprintf("%.3f-%.3fs", first.Seconds(), last.Seconds())) }
	for _, l := range sorted[1:] {
		if l.at-last > 100*time.Millisecond {
			flush()
			first = l.at
		}
		last = l.at
	}
	flush()
	return ", acknowledged at " + strings.Join(runs, ", ")
}

// sentinelEvents records what the sentinels publish (+sdown, +switch-master,
// +failover-*, ...) with the time each arrived, for the timeline of a loss.
type sentinelEvents struct {
	start time.Time
	mu    sync.Mutex
	lines []string
}

func watchSentinels(t *testing.T, top *redistest.Topology, start time.Time) *sentinelEvents {
	t.Helper()
	ev := &sentinelEvents{start: start}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, addr := range top.SentinelAddrs() {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, ForceSingleClient: true})
		if err != nil {
			t.Fatalf("connecting to sentinel %s: %v", addr, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Receive(ctx, c.B().Psubscribe().Pattern("*").Build(), func(m rueidis.PubSubMessage) {
				if m.Channel != "__sentinel__:hello" {
					ev.add(fmt.Sprintf("s%d %s %s", i, m.Channel, m.Message))
				}
			})
		}()
		t.Cleanup(c.Close)
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return ev
}

func (e *sentinelEvents) add(what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = append(e.lines, fmt.Sprintf("%8.3fs %s", time.Since(e.start).Seconds(), what))
}

func (e *sentinelEvents) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.lines, "\n")
}
