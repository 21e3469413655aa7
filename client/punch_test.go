package client

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// noMediator is an endpoint nothing sends from: these tests have no server.
var noMediator = netip.MustParseAddrPort("127.0.0.1:9")

func punchPair(t *testing.T, ca, cb *lossyConn, cfg PunchConfig, introA, introB Introduction) (Path, Path, error, error) {
	t.Helper()
	sa, sb := NewSocket(ca, noMediator), NewSocket(cb, noMediator)
	t.Cleanup(func() { sa.Close(); sb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type res struct {
		p   Path
		err error
	}
	rb := make(chan res, 1)
	go func() {
		p, err := Punch(ctx, sb, introB, RoleClient, cfg)
		rb <- res{p, err}
	}()
	pa, errA := Punch(ctx, sa, introA, RoleHost, cfg)
	r := <-rb
	return pa, r.p, errA, r.err
}

func TestPunchLoopback(t *testing.T) {
	f := func(name string, dropA, dropB int64, selfLocal bool) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			ca, cb := newLossy(t), newLossy(t)
			h := Handle(engine.NewUUID())
			ca.setDrop(dropFirst(dropA, isProbe), nil)
			cb.setDrop(nil, dropFirst(dropB, isProbe))
			inA := Introduction{Attempt: h, Public: cb.addr()}
			inB := Introduction{Attempt: h, Public: ca.addr()}
			if selfLocal { // a LAN candidate that is our own socket must not "succeed"
				inA.Local, inB.Local = ca.addr(), cb.addr()
			}
			pa, pb, errA, errB := punchPair(t, ca, cb, PunchConfig{Timeout: 10 * time.Second, Interval: 20 * time.Millisecond}, inA, inB)
			if errA != nil || errB != nil {
				t.Fatalf("punch failed: host %v, client %v", errA, errB)
			}
			if pa.Peer != cb.addr() || pb.Peer != ca.addr() {
				t.Fatalf("paths: host→%v (want %v), client→%v (want %v)", pa.Peer, cb.addr(), pb.Peer, ca.addr())
			}
			if ca.out.Load() < dropA || cb.in.Load() < dropB {
				t.Fatalf("the wrapper dropped %d/%d, want at least %d/%d", ca.out.Load(), cb.in.Load(), dropA, dropB)
			}
		})
	}
	f("clean", 0, 0, false)
	f("lost probes and acks", 5, 4, false)
	f("own address as local candidate", 0, 0, true)
}

func TestPunchFailsCleanly(t *testing.T) {
	ca, cb := newLossy(t), newLossy(t)
	sa, sb := NewSocket(ca, noMediator), NewSocket(cb, noMediator)
	defer sa.Close()
	defer sb.Close()
	h := Handle(engine.NewUUID())
	// The peer's socket exists but runs no punch: it ignores our probes.
	_, err := Punch(context.Background(), sa, Introduction{Attempt: h, Public: cb.addr()}, RoleHost,
		PunchConfig{Timeout: 300 * time.Millisecond, Interval: 20 * time.Millisecond})
	var pe *PunchError
	if !errors.Is(err, ErrPunchFailed) || !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *PunchError matching ErrPunchFailed", err)
	}
	if len(pe.Candidates) != 1 || pe.Candidates[0] != cb.addr() {
		t.Fatalf("candidates %v", pe.Candidates)
	}
	sa.mu.Lock()
	n := len(sa.punches)
	sa.mu.Unlock()
	if n != 0 {
		t.Fatalf("a failed punch left %d sessions behind", n)
	}
	// Probes for an attempt nobody punches are never answered (no reflection).
	if got := cb.sent.Load(); got != 0 {
		t.Fatalf("the idle peer sent %d datagrams", got)
	}
}

func TestPunchBadInput(t *testing.T) {
	ca := newLossy(t)
	s := NewSocket(ca, noMediator)
	defer s.Close()
	h := Handle(engine.NewUUID())
	f := func(in Introduction, role Role) {
		t.Helper()
		_, err := Punch(context.Background(), s, in, role, PunchConfig{Timeout: time.Second})
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("got %v, want *InputError", err)
		}
		if ca.sent.Load() != 0 {
			t.Fatalf("a refused punch sent %d datagrams", ca.sent.Load())
		}
	}
	f(Introduction{Attempt: h}, RoleHost)
	f(Introduction{Public: netip.MustParseAddrPort("127.0.0.1:1")}, RoleHost)
	f(Introduction{Attempt: h, Public: netip.MustParseAddrPort("127.0.0.1:1")}, Role('x'))
}

func TestPunchThenAppData(t *testing.T) {
	ca, cb := newLossy(t), newLossy(t)
	h := Handle(engine.NewUUID())
	sa, sb := NewSocket(ca, noMediator), NewSocket(cb, noMediator)
	defer sa.Close()
	defer sb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Punch(ctx, sb, Introduction{Attempt: h, Public: ca.addr()}, RoleClient, PunchConfig{})
		done <- err
	}()
	p, err := Punch(ctx, sa, Introduction{Attempt: h, Public: cb.addr()}, RoleHost, PunchConfig{})
	if err != nil || <-done != nil {
		t.Fatalf("punch: %v", err)
	}
	if _, err := sa.WriteTo([]byte("hello"), p.Peer); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, from, err := sb.ReadFrom(ctx, buf)
	if err != nil || string(buf[:n]) != "hello" || from != ca.addr() {
		t.Fatalf("got %q from %v, err %v", buf[:n], from, err)
	}
}
