package redisstore_test

import (
	"bufio"
	"context"
	"errors"
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

// faultEnv is a store on a dedicated server with one visible listing.
type faultEnv struct {
	t   *testing.T
	srv *redistest.Server
	c   rueidis.Client
	s   *redisstore.Store
	k   *engine.Keyring
	v   engine.ListingView
	n   int
}

func newFaultEnv(t *testing.T, timeout time.Duration) *faultEnv {
	srv, c := dedicatedServer(t)
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{
		Client: c, Name: "faults", Limits: engine.DefaultLimits(), Keyring: k, Clock: engine.NewManualClock(), Timeout: timeout,
	})
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	e := &faultEnv{t: t, srv: srv, c: c, s: s, k: k}
	v, r, err := s.CreateListing(context.Background(), e.listingCmd())
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r.Outcome, err)
	}
	e.v = v
	if _, r, err := s.BindHostPresence(context.Background(), e.presenceCmd(1)); err != nil || !r.OK() {
		t.Fatalf("BindHostPresence: %v %v", r.Outcome, err)
	}
	return e
}

func (e *faultEnv) listingCmd() engine.CreateListing {
	e.n++
	return engine.CreateListing{
		Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "publisher", IdempotencyKey: fmt.Sprintf("k%d", e.n),
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4},
	}
}

func (e *faultEnv) presenceCmd(seq uint64) engine.BindPresence {
	c := e.k.Presence(e.v.Presence)
	return engine.BindPresence{Handle: e.v.Presence, Key: engine.FingerprintOf(&c), Seq: seq,
		Public: netipAP("203.0.113.10:4000")}
}

func (e *faultEnv) redis(args ...string) error {
	return e.c.Do(context.Background(), e.c.B().Arbitrary(args...).Build()).Error()
}

// everyTransitionUnavailable requires each kind of call to answer
// ServiceUnavailable (no error, no panic).
func (e *faultEnv) everyTransitionUnavailable(fault string) {
	e.t.Helper()
	ctx := context.Background()
	want := func(what string, r engine.Result, err error) {
		e.t.Helper()
		if err != nil || r.Outcome != engine.ServiceUnavailable {
			e.t.Fatalf("%s under %s = %v, %v; want ServiceUnavailable", what, fault, r.Outcome, err)
		}
	}
	_, r, err := e.s.CreateListing(ctx, e.listingCmd())
	want("CreateListing", r, err)
	lc := e.k.Lease(e.v.Lease)
	_, r, err = e.s.RenewLease(ctx, engine.RenewLease{Tenant: e.v.Tenant, Owner: e.v.Owner, Listing: e.v.ID, Lease: e.v.Lease,
		LeaseKey: engine.FingerprintOf(&lc), ExpectedVersion: e.v.Version, CurrentPlayers: -1})
	want("RenewLease", r, err)
	_, r, err = e.s.BindHostPresence(ctx, e.presenceCmd(2))
	want("BindHostPresence", r, err)
	_, r, err = e.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: e.v.Tenant, Client: "c", IdempotencyKey: "j",
		Listing: e.v.ID, ProtocolVersion: 1})
	want("CreateJoinAttempt", r, err)
	ops := []engine.Op{{Kind: engine.OpPresence, Presence: e.presenceCmd(3)}}
	if err := e.s.ApplyBatch(ctx, ops); err != nil || ops[0].Result.Outcome != engine.ServiceUnavailable {
		e.t.Fatalf("ApplyBatch under %s = %v, %v; want ServiceUnavailable", fault, ops[0].Result.Outcome, err)
	}
	_, _, r, err = e.s.BrowseVisible(ctx, engine.Browse{Tenant: e.v.Tenant, ProtocolVersion: 1, Limit: 10}, nil)
	want("BrowseVisible", r, err)
	if e.s.Available() {
		e.t.Fatalf("Available under %s", fault)
	}
	// Revoked is a read (flagged no-writes): a server refusing writes still
	// answers it; a busy one answers nothing.
	if revoked, err := e.s.Revoked(ctx, "publisher"); fault == "BUSY" && !errors.Is(err, redisstore.ErrUnavailable) ||
		fault != "BUSY" && (err != nil || revoked) {
		e.t.Fatalf("Revoked under %s = %v, %v", fault, revoked, err)
	}
	if err := e.s.BeginDrain(ctx); !errors.Is(err, redisstore.ErrUnavailable) {
		e.t.Fatalf("BeginDrain under %s: error %v, want ErrUnavailable", fault, err)
	}
	if _, err := e.s.EndDrain(ctx); !errors.Is(err, redisstore.ErrUnavailable) {
		e.t.Fatalf("EndDrain under %s: error %v, want ErrUnavailable", fault, err)
	}
}

// recovered requires the store to work again after the fault is lifted.
func (e *faultEnv) recovered() {
	e.t.Helper()
	if _, r, err := e.s.CreateListing(context.Background(), e.listingCmd()); err != nil || !r.OK() {
		e.t.Fatalf("CreateListing after the fault: %v %v", r.Outcome, err)
	}
	if err := e.s.CheckInvariants(); err != nil {
		e.t.Fatalf("invariants after the fault: %v", err)
	}
}

// TestOutOfMemoryIsUnavailableAndChangesNothing: a server at maxmemory
// refuses every writing function before it runs.
func TestOutOfMemoryIsUnavailableAndChangesNothing(t *testing.T) {
	e := newFaultEnv(t, time.Second)
	before := e.s.Snapshot()
	if err := e.redis("CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatal(err)
	}
	e.everyTransitionUnavailable("OOM")
	if err := e.redis("CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	if after := e.s.Snapshot(); after != before {
		t.Fatalf("refused calls changed the store:\n%s\n---\n%s", before, after)
	}
	e.recovered()
}

// TestReadOnlyReplicaIsUnavailableAndChangesNothing: a primary demoted to a
// replica (a failover's old primary) answers READONLY to every write.
func TestReadOnlyReplicaIsUnavailableAndChangesNothing(t *testing.T) {
	e := newFaultEnv(t, time.Second)
	before := e.s.Snapshot()
	// A primary that never answers: the replica keeps its data meanwhile.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	if err := e.redis("REPLICAOF", "127.0.0.1", port); err != nil {
		t.Fatal(err)
	}
	e.everyTransitionUnavailable("READONLY")
	if err := e.redis("REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
	if after := e.s.Snapshot(); after != before {
		t.Fatalf("refused calls changed the store:\n%s\n---\n%s", before, after)
	}
	e.recovered()
}

// TestBusyServerIsUnavailable: another client's script running past the
// busy threshold makes the server answer BUSY.
func TestBusyServerIsUnavailable(t *testing.T) {
	e := newFaultEnv(t, 5*time.Second)
	before := e.s.Snapshot()
	if err := e.redis("CONFIG", "SET", "busy-reply-threshold", "20"); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", e.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A read-only endless script, so SCRIPT KILL may end it.
	script := "local i = 0 while true do i = i + 1 end"
	fmt.Fprintf(conn, "*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n", len(script), script)
	time.Sleep(100 * time.Millisecond) // past the threshold; BUSY replies start then
	e.everyTransitionUnavailable("BUSY")
	killed := false
	for i := 0; i < 100 && !killed; i++ { // bounded: the script is surely killable
		err := e.redis("SCRIPT", "KILL")
		killed = err == nil || strings.Contains(err.Error(), "NOTBUSY")
		if !killed {
			time.Sleep(10 * time.Millisecond)
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.HasPrefix(line, "-") {
		t.Fatalf("the busy script was not killed: %q %v", line, err)
	}
	if after := e.s.Snapshot(); after != before {
		t.Fatalf("refused calls changed the store:\n%s\n---\n%s", before, after)
	}
	e.recovered()
}

// TestScriptErrorChangesNothing: a function that fails part way (here on a
// key of the wrong type) has checked everything before its first write.
func TestScriptErrorChangesNothing(t *testing.T) {
	e := newFaultEnv(t, time.Second)
	if err := e.redis("DEL", "rdv:{faults}:ph"); err != nil {
		t.Fatal(err)
	}
	if err := e.redis("SET", "rdv:{faults}:ph", "not a hash"); err != nil {
		t.Fatal(err)
	}
	before := e.s.Snapshot()
	_, r, err := e.s.CreateListing(context.Background(), e.listingCmd())
	if err != nil || r.Outcome != engine.ServiceUnavailable {
		t.Fatalf("CreateListing on a broken keyspace = %v, %v; want ServiceUnavailable", r.Outcome, err)
	}
	_, r, err = e.s.BindHostPresence(context.Background(), e.presenceCmd(2))
	if err != nil || r.Outcome != engine.ServiceUnavailable {
		t.Fatalf("BindHostPresence on a broken keyspace = %v, %v; want ServiceUnavailable", r.Outcome, err)
	}
	if after := e.s.Snapshot(); after != before {
		t.Fatalf("failed calls changed the store:\n%s\n---\n%s", before, after)
	}
}

// TestStoppedServerTimesOut: a server that stops answering (SIGSTOP) costs
// each call its timeout, then ServiceUnavailable; never a hang.
func TestStoppedServerTimesOut(t *testing.T) {
	e := newFaultEnv(t, 200*time.Millisecond)
	if err := e.srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer e.srv.Resume()
	done := make(chan engine.Result, 1)
	go func() {
		_, r, _ := e.s.GetListing(context.Background(), engine.GetListing{Tenant: e.v.Tenant, Listing: e.v.ID})
		done <- r
	}()
	select {
	case r := <-done:
		if r.Outcome != engine.ServiceUnavailable {
			t.Fatalf("GetListing on a stopped server = %v, want ServiceUnavailable", r.Outcome)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("GetListing on a stopped server did not return")
	}
	if e.s.Available() {
		t.Fatalf("Available on a stopped server")
	}
	if err := e.srv.Resume(); err != nil {
		t.Fatal(err)
	}
	e.recovered()
}

// TestNewFailsOnAServerThatNeverAnswers: connecting and New are bounded by
// their timeouts too.
func TestNewFailsOnAServerThatNeverAnswers(t *testing.T) {
	redistest.SkipIfMissing(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accept and read, never answer
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{l.Addr().String()}, DisableCache: true,
		Dialer: net.Dialer{Timeout: time.Second}, ConnWriteTimeout: time.Second})
	if err != nil {
		return // refused at connect time, within the dial timeout: bounded too
	}
	defer c.Close()
	_, err = redisstore.New(context.Background(), redisstore.Config{Client: c, Limits: engine.DefaultLimits(),
		Keyring: engine.RandomKeyring(), Timeout: 200 * time.Millisecond})
	if err == nil {
		t.Fatalf("New succeeded against a server that never answers")
	}
}
