package client

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestSetPlayersOutOfRangeKeepsListing: a current_players above
// max_players is a 400 on renew (docs/contracts/http.md#renew-a-lease). SetPlayers must refuse
// it at once and change nothing, instead of sending it with the next
// renewal, getting the 400, stopping the Publisher and letting the lease run
// out (the listing vanishes). A valid value still reaches the server.
func TestSetPlayersOutOfRangeKeepsListing(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs, "--lease-ttl", "2s", "--presence-ttl", "2s")
		spec := testSpec("players")
		pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: spec, Conn: newLossy(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close(context.Background())
		cli := srv.api(t, "client")
		for _, n := range []int{spec.MaxPlayers + 1, -2} {
			if err := pub.SetPlayers(n); err == nil {
				t.Fatalf("SetPlayers(%d) accepted", n)
			}
		}
		// Two renewals (every second with a 2 s lease) later, the publisher
		// still runs and the listing is there, unchanged.
		v0 := pub.LeaseVersion()
		for pub.LeaseVersion() < v0+2 {
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				t.Fatalf("no renewal: %v (publisher: %v)", err, pub.Err())
			}
			if err := pub.Err(); err != nil {
				t.Fatalf("publisher stopped after a refused SetPlayers: %v", err)
			}
		}
		l, err := cli.GetListing(ctx, pub.ListingID())
		if err != nil || l.CurrentPlayers != spec.CurrentPlayers {
			t.Fatalf("listing %+v, %v; want current_players %d", l, err, spec.CurrentPlayers)
		}
		// A valid value is applied by the next renewal to start: the second
		// to end from here at the latest (one may be under way with the
		// count it read before).
		if err := pub.SetPlayers(spec.MaxPlayers); err != nil {
			t.Fatal(err)
		}
		v1 := pub.LeaseVersion()
		for pub.LeaseVersion() < v1+2 {
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				t.Fatalf("no renewal: %v (publisher: %v)", err, pub.Err())
			}
		}
		if l, err := cli.GetListing(ctx, pub.ListingID()); err != nil || l.CurrentPlayers != spec.MaxPlayers {
			t.Fatalf("listing %+v, %v; want current_players %d", l, err, spec.MaxPlayers)
		}
	})
}

// TestCloseReleasesCallerConn: a Publisher given the caller's Conn does not
// close it on Close, so the caller keeps using it (for example for the next
// Publish). The Publisher's socket reader must stop too: left running, it
// keeps reading the caller's socket and swallows the caller's datagrams.
func TestCloseReleasesCallerConn(t *testing.T) {
	srv := startServer(t, nil, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("caller-conn"), Conn: conn})
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wantCallerOwnsConn(t, conn)
}

// TestJoinerCloseReleasesCallerConn is TestCloseReleasesCallerConn for a
// Joiner given the caller's Conn.
func TestJoinerCloseReleasesCallerConn(t *testing.T) {
	srv := startServer(t, nil, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("joiner-conn"), ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(context.Background())
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	j, err := NewJoiner(JoinerConfig{API: srv.api(t, "client"), ProtocolVersion: testSpec("").ProtocolVersion, Conn: conn})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Join(ctx, pub.ListingID()); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	wantCallerOwnsConn(t, conn)
}

// wantCallerOwnsConn sends datagrams to conn from another socket and checks
// that every one reaches the caller's reads: no SDK reader is left on it.
func wantCallerOwnsConn(t *testing.T, conn *net.UDPConn) {
	t.Helper()
	sender, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	to := conn.LocalAddr().(*net.UDPAddr).AddrPort()
	const n = 8
	for i := range n {
		if _, err := sender.WriteToUDPAddrPort([]byte{'x', byte(i)}, to); err != nil {
			t.Fatal(err)
		}
	}
	// The bound only keeps a broken Close from hanging the test.
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	for i := range n {
		if _, _, err := conn.ReadFromUDPAddrPort(buf); err != nil {
			t.Fatalf("datagram %d of %d never reached the caller: %v", i+1, n, err)
		}
	}
}
