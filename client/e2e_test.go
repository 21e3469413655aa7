package client

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// These tests run the real server binary on loopback, on each store
// (eachStore, stores_test.go).

func testSpec(name string) ListingSpec {
	s := goodSpec()
	s.DisplayName = name
	return s
}

// stunKind classifies a datagram for the lossy wrapper: "" if not STUN, else
// "presence", "bind-h", "bind-c", "offer", "introduce" or "answer".
func stunKind(b []byte) string {
	var m stun.Message
	if stun.Parse(b, &m) != nil {
		return ""
	}
	switch {
	case m.Class() == stun.ClassIndication && m.Method() == stun.MethodOffer:
		return "offer"
	case m.Class() == stun.ClassIndication && m.Method() == stun.MethodIntroduce:
		return "introduce"
	case m.Class() != stun.ClassRequest:
		return "answer"
	}
	u, _ := m.Username()
	if len(u) > 0 {
		switch u[0] {
		case 'p':
			return "presence"
		case 'h':
			return "bind-h"
		case 'c':
			return "bind-c"
		}
	}
	return "binding"
}

func is(kind string) func([]byte) bool { return func(b []byte) bool { return stunKind(b) == kind } }

// flow publishes, joins, punches both ways and exchanges one datagram each
// way; it returns the publisher for further checks.
func flow(t *testing.T, ctx context.Context, srv *testServer, hc, jc *lossyConn) *Publisher {
	t.Helper()
	pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("flow"), Conn: hc})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	t.Cleanup(func() { pub.Close(context.Background()) })
	if pub.Public() != hc.addr() {
		t.Fatalf("mediator saw the host at %v, want %v", pub.Public(), hc.addr())
	}
	j, err := NewJoiner(JoinerConfig{API: srv.api(t, "client"), ProtocolVersion: 7, Conn: jc})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for l, err := range j.Browse(ctx, "") {
		if err != nil {
			t.Fatalf("browse: %v", err)
		}
		found = found || l.ListingID == pub.ListingID()
	}
	if !found {
		t.Fatal("the published listing is not in browse")
	}
	type hostRes struct {
		in   Introduction
		path Path
		err  error
	}
	hr := make(chan hostRes, 1)
	go func() {
		in, err := pub.Accept(ctx)
		if err != nil {
			hr <- hostRes{err: err}
			return
		}
		p, err := pub.Punch(ctx, in, PunchConfig{})
		hr <- hostRes{in, p, err}
	}()
	in, path, err := j.JoinAndPunch(ctx, pub.ListingID(), PunchConfig{})
	if err != nil {
		t.Fatalf("join and punch: %v", err)
	}
	h := <-hr
	if h.err != nil {
		t.Fatalf("host: %v", h.err)
	}
	if in.Public != hc.addr() || h.in.Public != jc.addr() || in.Attempt != h.in.Attempt {
		t.Fatalf("introductions: joiner got %+v (host at %v), host got %+v (joiner at %v)", in, hc.addr(), h.in, jc.addr())
	}
	if path.Peer != hc.addr() || h.path.Peer != jc.addr() {
		t.Fatalf("paths: joiner→%v host→%v", path.Peer, h.path.Peer)
	}
	exchange(t, ctx, j.Socket(), pub.Socket(), path.Peer, "from joiner")
	exchange(t, ctx, pub.Socket(), j.Socket(), h.path.Peer, "from host")
	return pub
}

// exchange sends msg from one socket every 250 ms until the other receives
// it, within ctx: a working path carries one of the copies, and one lost
// datagram (UDP, or a relay's new channel) is not a broken path. What else
// arrives meanwhile (a copy left by an earlier exchange) is skipped.
func exchange(t *testing.T, ctx context.Context, from, to *Socket, addr netip.AddrPort, msg string) {
	t.Helper()
	buf := make([]byte, 128)
	for {
		if _, err := from.WriteTo([]byte(msg), addr); err != nil {
			t.Fatal(err)
		}
		wait, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		n, _, err := to.ReadFrom(wait, buf)
		cancel()
		switch {
		case err == nil && string(buf[:n]) == msg:
			return
		case ctx.Err() != nil:
			t.Fatalf("%q never arrived: %v", msg, ctx.Err())
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("waiting for %q: %v", msg, err)
		}
	}
}

func TestFlowLoopback(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs)
		pub := flow(t, ctx, srv, newLossy(t), newLossy(t))
		id := pub.ListingID()
		if err := pub.Close(ctx); err != nil {
			t.Fatalf("close: %v", err)
		}
		if _, err := srv.api(t, "client").GetListing(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after Close the listing answers %v, want not found", err)
		}
		if st := srv.stats(t); st["listings"] != 0 || st["presence"] != 0 || st["attempts"] != 0 {
			t.Fatalf("after Close the server still holds %v", st)
		}
	})
}

func TestFlowIPv6Loopback(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv := startServer(t, nil, append(storeArgs, "--http-addr", "[::1]:0", "--udp-addr", "[::1]:0")...)
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		flow(t, ctx, srv, newLossyOn(t, net.IPv6loopback), newLossyOn(t, net.IPv6loopback))
	})
}

func TestFlowLostDatagrams(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		// A short presence TTL makes the heartbeat (and its pending list) quick.
		srv, ctx := startLoopback(t, storeArgs, "--presence-ttl", "3s")
		hc, jc := newLossy(t), newLossy(t)
		// Host: lose its first presence refresh, every pushed OFFER (only the
		// presence answer's pending list can deliver the attempt), its first
		// bind and first INTRODUCE, and its first probes.
		var offersDropped atomic.Int64
		offers := func(b []byte, _ netip.AddrPort) bool {
			if is("offer")(b) {
				offersDropped.Add(1)
				return true
			}
			return false
		}
		firstPresence, firstBindH, firstProbes := dropFirst(1, is("presence")), dropFirst(1, is("bind-h")), dropFirst(3, isProbe)
		hostIntro := dropFirst(1, is("introduce"))
		hc.setDrop(func(b []byte, a netip.AddrPort) bool {
			return firstPresence(b, a) || firstBindH(b, a) || firstProbes(b, a)
		}, func(b []byte, a netip.AddrPort) bool {
			return offers(b, a) || hostIntro(b, a)
		})
		// Joiner: lose its first two binds and the first INTRODUCE.
		bindC, joinIntro := dropFirst(2, is("bind-c")), dropFirst(1, is("introduce"))
		jc.setDrop(func(b []byte, a netip.AddrPort) bool { return bindC(b, a) },
			func(b []byte, a netip.AddrPort) bool { return joinIntro(b, a) })
		flow(t, ctx, srv, hc, jc)
		if offersDropped.Load() == 0 {
			t.Fatal("the mediator pushed no OFFER: the pending-list recovery was not exercised")
		}
		if hc.out.Load() < 5 || hc.in.Load() < 1 || jc.out.Load() < 2 || jc.in.Load() < 1 {
			t.Fatalf("the wrappers dropped host out %d in %d, joiner out %d in %d: the losses did not happen",
				hc.out.Load(), hc.in.Load(), jc.out.Load(), jc.in.Load())
		}
	})
}

func TestLeaseRenewalAcrossLifetimes(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs, "--lease-ttl", "2s", "--presence-ttl", "2s")
		api := srv.api(t, "publisher")
		pub, err := Publish(ctx, PublisherConfig{API: api, Spec: testSpec("renew"), Conn: newLossy(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close(context.Background())
		cli := srv.api(t, "client")
		// Someone else renews with the same lease (as a retry whose answer was
		// lost would): the publisher's next CAS renewal gets 409 and resyncs.
		lease := pub.created.Lease
		if err := api.RenewLease(ctx, pub.ListingID(), &lease, -1); err != nil {
			t.Fatalf("out-of-band renew: %v", err)
		}
		// Four lease lifetimes; the listing must stay joinable throughout.
		for i := range 8 {
			if err := sleep(ctx, time.Second); err != nil {
				t.Fatal(err)
			}
			if _, err := cli.GetListing(ctx, pub.ListingID()); err != nil {
				t.Fatalf("after %d s the listing is gone: %v (publisher: %v)", i+1, err, pub.Err())
			}
		}
		if v := pub.LeaseVersion(); v < 4 {
			t.Fatalf("lease version %d after four lifetimes: renewal did not happen", v)
		}
		if err := pub.Err(); err != nil {
			t.Fatalf("publisher stopped: %v", err)
		}
	})
}

func TestDrainIsTyped(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs, "--lease-ttl", "2s", "--drain-window", "2s")
		// NoRepublish: the Publisher stops at the drain instead of waiting for
		// a restarted server (TestPublisherRepublishesAfterDrain).
		pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("drain"), Conn: newLossy(t), NoRepublish: true})
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close(context.Background())
		if err := srv.api(t, "operator").Drain(ctx); err != nil {
			t.Fatalf("drain: %v", err)
		}
		j, err := NewJoiner(JoinerConfig{API: srv.api(t, "client"), ProtocolVersion: 7, Conn: newLossy(t)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Join(ctx, pub.ListingID()); !errors.Is(err, ErrDraining) {
			t.Fatalf("join while draining: %v, want ErrDraining", err)
		}
		select {
		case <-pub.Done():
		case <-ctx.Done():
			t.Fatal("the publisher never noticed the drain")
		}
		if err := pub.Err(); !errors.Is(err, ErrDraining) {
			t.Fatalf("publisher error %v, want ErrDraining", err)
		}
		if _, err := pub.Accept(ctx); !errors.Is(err, ErrDraining) {
			t.Fatalf("Accept after drain: %v, want ErrDraining", err)
		}
		if _, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("late"), Conn: newLossy(t)}); !errors.Is(err, ErrDraining) {
			t.Fatalf("publish while draining: %v, want ErrDraining", err)
		}
	})
}

func TestBadInputChangesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs)
		f := func(name string, call func() error, want any) {
			t.Helper()
			err := call()
			switch w := want.(type) {
			case error:
				if !errors.Is(err, w) {
					t.Fatalf("%s: got %v, want %v", name, err, w)
				}
			case **InputError:
				if !errors.As(err, w) {
					t.Fatalf("%s: got %v, want *InputError", name, err)
				}
			}
			if st := srv.stats(t); st["listings"] != 0 || st["attempts"] != 0 || st["idempotency"] != 0 {
				t.Fatalf("%s changed the server: %v", name, st)
			}
		}
		var ie *InputError
		bad := testSpec("x")
		bad.MaxPlayers = 2000
		f("bad spec", func() error {
			_, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: bad, Conn: newLossy(t)})
			return err
		}, &ie)
		f("wrong role", func() error {
			_, err := Publish(ctx, PublisherConfig{API: srv.api(t, "client"), Spec: testSpec("x"), Conn: newLossy(t)})
			return err
		}, ErrForbidden)
		f("unknown listing", func() error {
			j, err := NewJoiner(JoinerConfig{API: srv.api(t, "client"), ProtocolVersion: 7, Conn: newLossy(t)})
			if err != nil {
				return err
			}
			_, err = j.Join(ctx, ListingID(engine.NewUUID()))
			return err
		}, ErrNotFound)
		f("bad token", func() error {
			a, _ := NewAPI(srv.http, "not-a-token", checkedClient(t))
			_, err := a.Whoami(ctx)
			return err
		}, ErrUnauthorized)
	})
}

func TestBrowsePagesRealServer(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs)
		want := map[string]bool{}
		for i := range 5 {
			pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("page"), Conn: newLossy(t)})
			if err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
			defer pub.Close(context.Background())
			want[pub.ListingID().String()] = true
		}
		var got []string
		for l, err := range srv.api(t, "client").Browse(ctx, BrowseQuery{ProtocolVersion: 7, PageSize: 2}) {
			if err != nil {
				t.Fatalf("browse: %v", err)
			}
			got = append(got, l.ListingID.String())
		}
		if len(got) != 5 {
			t.Fatalf("browse returned %d listings over pages of 2, want 5: %v", len(got), got)
		}
		for i, id := range got {
			if !want[id] || (i > 0 && got[i-1] >= id) {
				t.Fatalf("browse order or content wrong: %v", got)
			}
		}
		var other []string
		for l, err := range srv.api(t, "client").Browse(ctx, BrowseQuery{ProtocolVersion: 8}) {
			if err != nil {
				t.Fatal(err)
			}
			other = append(other, l.ListingID.String())
		}
		if len(other) != 0 {
			t.Fatalf("protocol 8 browse returned %v", other)
		}
	})
}

func TestRevokedListingStopsPublisher(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs, "--presence-ttl", "3s")
		// NoRepublish: an operator's listing revocation cannot be told from a
		// lost listing, which is published again by default.
		pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("revoked"), Conn: newLossy(t), NoRepublish: true})
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close(context.Background())
		c := &call{op: "revoke", method: "DELETE", path: "/v1/admin/listings/" + pub.ListingID().String()}
		if err := srv.api(t, "operator").do(ctx, c); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		select {
		case <-pub.Done():
		case <-ctx.Done():
			t.Fatal("the publisher never noticed its listing was revoked")
		}
		if err := pub.Err(); !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrNotFound) {
			t.Fatalf("publisher error %v, want ErrLeaseLost and ErrNotFound", err)
		}
		if err := pub.Close(ctx); err != nil {
			t.Fatalf("Close after the listing is gone: %v", err)
		}
	})
}

func TestJoinTimesOutWithoutHost(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs, "--attempt-ttl", "2s")
		hc := newLossy(t)
		hc.setDrop(func(b []byte, _ netip.AddrPort) bool { return is("bind-h")(b) }, nil) // the host never binds
		pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("silent"), Conn: hc})
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close(context.Background())
		jc := newLossy(t)
		j, err := NewJoiner(JoinerConfig{API: srv.api(t, "client"), ProtocolVersion: 7, Conn: jc})
		if err != nil {
			t.Fatal(err)
		}
		_, err = j.Join(ctx, pub.ListingID())
		if !errors.Is(err, ErrIntroduceTimeout) {
			t.Fatalf("got %v, want ErrIntroduceTimeout", err)
		}
		if jc.sent.Load() < 2 {
			t.Fatalf("the joiner sent %d binds: no retransmission", jc.sent.Load())
		}
		if hc.out.Load() == 0 {
			t.Fatal("the host never tried to bind: the OFFER did not arrive")
		}
	})
}
