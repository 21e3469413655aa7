package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// Hosts and joiners given every instance of a deployment (several base
// URLs) outlive the instance their HTTP and their mediator were on.

// failoverPair is two server processes on one redis-server (principals
// from haTenants, shared by both), the first of which is killed.
type failoverPair struct {
	a, b   *testServer
	rc     rueidis.Client
	st     *redisstore.Store // reads the deployment's state
	urls   string            // "A,B": A is tried first
	tokens map[string]string
	aID    string
	bID    string
}

func newFailoverPair(t *testing.T, extra ...string) *failoverPair {
	t.Helper()
	principals, tokens := haTenants(t)
	_, rc, st, servers := redisInstances(t, 2, append([]string{"--principals", principals}, extra...)...)
	for _, s := range servers {
		s.tokens = tokens
	}
	fp := &failoverPair{a: servers[0], b: servers[1], rc: rc, st: st, tokens: tokens,
		urls: servers[0].http + "," + servers[1].http}
	fp.aID, fp.bID = fp.a.instanceID(t), fp.b.instanceID(t)
	return fp
}

// kill SIGKILLs instance A and returns when its lease expires in Redis
// (server time; one clock on loopback).
func (fp *failoverPair) kill(t *testing.T, ctx context.Context) time.Time {
	t.Helper()
	if err := fp.a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-fp.a.exited
	dl, err := fp.rc.Do(ctx, fp.rc.B().Zscore().Key("rdv:{failover}:nexp").Member(fp.aID).Build()).AsFloat64()
	if err != nil {
		t.Fatalf("the killed instance's lease deadline: %v", err)
	}
	return time.UnixMicro(int64(dl))
}

// movedWithin waits until listing id's presence reached instance B and
// fails t unless that was within 3 s of A's lease expiry.
func (fp *failoverPair) movedWithin(t *testing.T, ctx context.Context, id string, expiry time.Time) {
	t.Helper()
	st := fp.st
	for deadline := time.Now().Add(hangGuard); presenceInstance(ctx, st, id) != fp.bID; {
		if time.Now().After(deadline) {
			t.Fatalf("the listing's presence never reached instance B (at %q)", presenceInstance(ctx, st, id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	after := time.Since(expiry)
	t.Logf("presence reached instance B %v after A's lease expired", after.Round(time.Millisecond))
	if after > 3*time.Second {
		t.Errorf("presence reached instance B %v after A's lease expired, want within 3s", after)
	}
}

// TestPublisherFollowsTheDeployment: a Publisher whose API lists both
// instances, its HTTP and its mediator both on instance A. SIGKILL A: its
// requests move to B (reported once), its renewals go on there, its
// presence reaches B within 3 s of A's lease expiry under the same listing
// ID (EventMediatorMoved names B), and a joiner whose API also lists A
// first, which joined through A before, joins it through B and punches.
func TestPublisherFollowsTheDeployment(t *testing.T) {
	fp := newFailoverPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	api, err := NewAPI(fp.urls, fp.tokens["publisher"], checkedClient(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var serverMoves, bad []string
	var mediators []Event
	api.OnServerChange = func(from, to string, cause error) {
		mu.Lock()
		defer mu.Unlock()
		serverMoves = append(serverMoves, from+" -> "+to)
	}
	onEvent := func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case EventMediatorMoved:
			mediators = append(mediators, ev)
		case EventUnreachable: // A went silent: expected
			if ev.Mediator != fp.a.mediator {
				bad = append(bad, "unreachable names "+ev.Mediator.String())
			}
		default:
			bad = append(bad, ev.String())
		}
	}
	pub := publishOn(t, ctx, fp.a, api, onEvent)
	id := pub.ListingID()
	if api.Server() != fp.a.http {
		t.Fatalf("the Publisher's requests go to %s before the kill, want A %s", api.Server(), fp.a.http)
	}
	// A joiner given both instances, A first, joins through A before the
	// kill and through B after: its socket follows the attempt's mediator.
	japi, err := NewAPI(fp.urls, fp.tokens["client"], checkedClient(t))
	if err != nil {
		t.Fatal(err)
	}
	attempts := make(chan Event, 2)
	j, err := NewJoiner(JoinerConfig{API: japi, ProtocolVersion: goodSpec().ProtocolVersion, ListenAddr: "127.0.0.1:0",
		OnEvent: func(ev Event) { attempts <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	joinBoth(t, ctx, pub, j, id, "through A")
	if ev := <-attempts; ev.Kind != EventAttemptCreated || ev.Mediator != fp.a.mediator || ev.Listing != id || ev.Attempt.IsZero() {
		t.Fatalf("attempt event %+v, want one naming A's mediator %v", ev, fp.a.mediator)
	}
	version := pub.LeaseVersion()

	expiry := fp.kill(t, ctx)
	fp.movedWithin(t, ctx, id.String(), expiry)
	for deadline := time.Now().Add(hangGuard); pub.LeaseVersion() == version || pub.Mediator() != fp.b.mediator; {
		if time.Now().After(deadline) {
			t.Fatalf("no renewal through B (version %d) or the mediator not B (%v)", pub.LeaseVersion(), pub.Mediator())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pub.ListingID() != id {
		t.Fatalf("the listing was published anew as %s", pub.ListingID())
	}
	mu.Lock()
	if len(serverMoves) != 1 || serverMoves[0] != fp.a.http+" -> "+fp.b.http {
		t.Errorf("requests moved %q, want once from A to B", serverMoves)
	}
	if len(mediators) != 1 || mediators[0].Mediator != fp.b.mediator || mediators[0].Listing != id {
		t.Errorf("mediator moves %v, want one to B's %v for %s", mediators, fp.b.mediator, id)
	}
	mu.Unlock()

	// The joiner joins again, through B, and punches.
	joinBoth(t, ctx, pub, j, id, "through B")
	if ev := <-attempts; ev.Kind != EventAttemptCreated || ev.Mediator != fp.b.mediator || ev.Listing != id || ev.Attempt.IsZero() {
		t.Fatalf("attempt event %+v, want one naming B's mediator %v", ev, fp.b.mediator)
	}
	if japi.Server() != fp.b.http {
		t.Fatalf("the joiner's requests go to %s, want B", japi.Server())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("unexpected events: %q", bad)
	}
}

// joinBoth joins listing id with j and punches from both sides; the path
// carries msg.
func joinBoth(t *testing.T, ctx context.Context, pub *Publisher, j *Joiner, id ListingID, msg string) {
	t.Helper()
	hostPath := make(chan error, 1)
	go func() {
		in, err := pub.Accept(ctx)
		if err == nil {
			_, err = pub.Punch(ctx, in, PunchConfig{})
		}
		hostPath <- err
	}()
	_, path, err := j.JoinAndPunch(ctx, id, PunchConfig{})
	if err != nil {
		t.Fatalf("join and punch: %v", err)
	}
	if err := <-hostPath; err != nil {
		t.Fatalf("the host's punch: %v", err)
	}
	if path.Relayed || !path.Peer.IsValid() {
		t.Fatalf("path %+v, want a direct one", path)
	}
	exchange(t, ctx, j.Socket(), pub.Socket(), path.Peer, msg)
}

// publishOn publishes through api until rendezvous hashing routes the
// listing to instance s's mediator (the others are closed again).
func publishOn(t *testing.T, ctx context.Context, s *testServer, api *API, onEvent func(Event)) *Publisher {
	t.Helper()
	for try := range 16 {
		p, err := Publish(ctx, PublisherConfig{API: api, Spec: testSpec("follow " + strconv.Itoa(try)),
			ListenAddr: "127.0.0.1:0", OnEvent: onEvent})
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		if p.Mediator() == s.mediator {
			t.Cleanup(func() { _ = p.Close(context.Background()) })
			return p
		}
		if err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("16 listings and none routed to the wanted instance")
	return nil
}

// TestCreateRetriedOnAnotherInstanceReplays: instance A creates the
// listing but its answer is lost (the connection closes before it); the
// SDK retries on B with the same Idempotency-Key and gets the same listing,
// replayed, and the deployment holds one listing.
func TestCreateRetriedOnAnotherInstanceReplays(t *testing.T) {
	fp := newFailoverPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	createdOnA := make(chan string, 1)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, fp.a.http+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		var created struct {
			ListingID string `json:"listing_id"`
		}
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			_ = json.Unmarshal(raw, &created)
		}
		select {
		case createdOnA <- created.ListingID:
		default:
			t.Error("a second request reached A")
		}
		conn, _, err := w.(http.Hijacker).Hijack() // the answer is lost with the connection
		if err == nil {
			conn.Close()
		}
	}))
	defer front.Close()
	api, err := NewAPI(front.URL+","+fp.b.http, fp.tokens["publisher"], nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := api.CreateListing(ctx, NewIdempotencyKey(), testSpec("replayed"))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if onA := <-createdOnA; onA == "" || got.ListingID.String() != onA || !got.Replayed {
		t.Fatalf("B answered listing %s (replayed %v), A had created %q", got.ListingID, got.Replayed, onA)
	}
	if api.Server() != fp.b.http {
		t.Fatalf("requests go to %s, want B", api.Server())
	}
	if n := fp.b.stats(t)["listings"]; n != 1 {
		t.Fatalf("the deployment holds %d listings, want 1", n)
	}
}

// TestPeerFollowsTheDeployment: `rendezvous-peer host --server A,B`, its
// HTTP and its mediator on A, prints its mediator; SIGKILL A: it prints
// that its requests went to B and that its presence moved to B's mediator,
// which happens within 3 s of A's lease expiry, keeps its listing, and
// `rendezvous-peer join` given RDV_SERVER=A,B joins it through B, prints
// the attempt's mediator (B's) and chats over the punched path.
func TestPeerFollowsTheDeployment(t *testing.T) {
	fp := newFailoverPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	st := fp.st
	mediatedRe := regexp.MustCompile(`^listing ([0-9a-f-]{36}) is mediated by (\S+) \(HTTP through (\S+)\)$`)
	var host *peerProc
	var listing string
	for try := 0; host == nil; try++ { // until rendezvous hashing routes one to A
		if try == 16 {
			t.Fatal("16 listings and none routed to instance A")
		}
		p := startPeer(t, nil, fp.tokens["publisher"], "host", "--server", fp.urls, "--name", "cli follow "+strconv.Itoa(try),
			"--listen", "127.0.0.1:0", "--echo")
		id := p.waitLine(t, publishedRe)
		line := p.waitLine(t, regexp.MustCompile(`^(listing .* is mediated by .*)$`))
		m := mediatedRe.FindStringSubmatch(line)
		if m == nil || m[1] != id || m[3] != fp.a.http {
			t.Fatalf("mediator line %q: want listing %s through A %s", line, id, fp.a.http)
		}
		if m[2] == fp.a.mediator.String() {
			if pi := presenceInstance(ctx, st, id); pi != fp.aID {
				t.Fatalf("the host prints mediator A but its presence reached %q", pi)
			}
			host, listing = p, id
			continue
		}
		if m[2] != fp.b.mediator.String() {
			t.Fatalf("the host prints mediator %s, neither A's nor B's", m[2])
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t)
	}
	expiry := fp.kill(t, ctx)
	host.waitLine(t, regexp.MustCompile(`^server `+regexp.QuoteMeta(fp.a.http)+` cannot serve \(.*\); requests now go to `+regexp.QuoteMeta(fp.b.http)+`$`))
	fp.movedWithin(t, ctx, listing, expiry)
	host.waitLine(t, regexp.MustCompile(`^listing `+listing+`: presence now goes to mediator `+regexp.QuoteMeta(fp.b.mediator.String())+` `))

	join := startPeerEnv(t, []string{"RDV_SERVER=" + fp.urls}, fp.tokens["client"], "join", "--listing", listing,
		"--say", "hello", "--replies", "1", "--listen", "127.0.0.1:0")
	if code := join.wait(t); code != 0 {
		t.Fatalf("the joiner exited %d:\n%s\n%s", code, join.stdout.String(), join.stderr.String())
	}
	out := join.stdout.String()
	for _, re := range []string{
		`(?m)^server ` + regexp.QuoteMeta(fp.a.http) + ` cannot serve .*; requests now go to ` + regexp.QuoteMeta(fp.b.http) + `$`,
		`(?m)^attempt [0-9a-f-]{36} is mediated by ` + regexp.QuoteMeta(fp.b.mediator.String()) + `$`,
		`(?m)^punched: direct path to 127\.0\.0\.1:`,
		`(?m)^host says: echo: hello$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Fatalf("joiner output lacks %s:\n%s", re, out)
		}
	}
	hostOut := host.stdout.String()
	if strings.Contains(hostOut, "lost") || strings.Contains(hostOut, "published again") {
		t.Fatalf("the host lost or republished its listing:\n%s", hostOut)
	}
	for _, p := range []*peerProc{host, join} {
		all := p.stdout.String() + p.stderr.String()
		if strings.Contains(all, fp.tokens["publisher"]) || strings.Contains(all, fp.tokens["client"]) {
			t.Fatal("rendezvous-peer printed a token")
		}
	}
}

// TestJoinerLeavesADrainingInstance: SIGTERM to instance A, which holds
// a Publisher's HTTP and mediator (an attempt in flight keeps it draining
// instead of exiting). A draining instance still renews leases, naming
// another mediator: the Publisher moves its presence to B and keeps its
// listing. A joiner given A first has its attempt refused by A (503
// draining), moves to B, joins there and punches, all before A has exited.
func TestJoinerLeavesADrainingInstance(t *testing.T) {
	fp := newFailoverPair(t, "--lease-ttl", "2s") // renewals every second
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	api, err := NewAPI(fp.urls, fp.tokens["publisher"], checkedClient(t))
	if err != nil {
		t.Fatal(err)
	}
	moved := make(chan Event, 4)
	var mu sync.Mutex
	var bad []string
	pub := publishOn(t, ctx, fp.a, api, func(ev Event) {
		if ev.Kind == EventMediatorMoved {
			moved <- ev
			return
		}
		mu.Lock()
		bad = append(bad, ev.String())
		mu.Unlock()
	})
	id := pub.ListingID()
	bAPI, err := NewAPI(fp.b.http, fp.tokens["client"], checkedClient(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bAPI.CreateJoinAttempt(ctx, NewIdempotencyKey(), id, goodSpec().ProtocolVersion); err != nil {
		t.Fatalf("join: %v", err)
	}
	if err := fp.a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-moved:
		if ev.Mediator != fp.b.mediator || ev.Listing != id {
			t.Fatalf("moved %v, want listing %s to B's %v", ev, id, fp.b.mediator)
		}
	case <-time.After(hangGuard):
		t.Fatal("the Publisher never left its draining mediator")
	}
	for deadline := time.Now().Add(hangGuard); presenceInstance(ctx, fp.st, id.String()) != fp.bID; {
		if time.Now().After(deadline) {
			t.Fatal("the Publisher's presence never reached B")
		}
		time.Sleep(20 * time.Millisecond)
	}

	japi, err := NewAPI(fp.urls, fp.tokens["client"], checkedClient(t))
	if err != nil {
		t.Fatal(err)
	}
	causes := make(chan error, 4)
	japi.OnServerChange = func(from, to string, cause error) { causes <- cause }
	j, err := NewJoiner(JoinerConfig{API: japi, ProtocolVersion: goodSpec().ProtocolVersion, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	joinBoth(t, ctx, pub, j, id, "past the drain")
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrDraining) {
			t.Fatalf("the joiner's requests left A on %v, want its draining answer", cause)
		}
	default:
		t.Fatal("the joiner's requests never left the draining instance")
	}
	select {
	case <-fp.a.exited:
		t.Fatal("the draining instance exited before the joiner joined: nothing shows the moves came from the drain")
	default:
	}
	if japi.Server() != fp.b.http || pub.ListingID() != id {
		t.Fatalf("the joiner's requests go to %s, listing %s (was %s)", japi.Server(), pub.ListingID(), id)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("unexpected events: %q", bad)
	}
}
