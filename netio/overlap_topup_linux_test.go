package netio

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rendezvous/rendezvous/engine"
)

// queuedBytes is the memory c's receive queue holds (SO_MEMINFO's
// rmem_alloc): how the tests know datagrams wait in the socket.
func queuedBytes(t *testing.T, c batchConn) uint32 {
	t.Helper()
	var uc *net.UDPConn
	switch b := c.(*countingConn).batchConn.(type) {
	case *rawConn:
		uc = b.conn
	case *portableConn:
		uc = b.conn
	default:
		t.Fatalf("unknown batchConn %T", b)
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info [unix.SK_MEMINFO_VARS]uint32
	var errno unix.Errno
	if err := rc.Control(func(fd uintptr) {
		l := uint32(unsafe.Sizeof(info))
		_, _, errno = unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&l)), 0)
	}); err != nil {
		t.Fatal(err)
	}
	if errno != 0 {
		t.Fatalf("SO_MEMINFO: %v", errno)
	}
	return info[unix.SK_MEMINFO_RMEM_ALLOC]
}

// sent is one request and the peer sending it.
type sent struct {
	p   *peer
	req []byte
}

// queueDuringCommit sends reqs (datagrams of one size) and waits until the
// socket holds all of them: the first one's queued size, times their count.
func queueDuringCommit(t *testing.T, f *overlapFixture, reqs []sent) {
	t.Helper()
	if q := queuedBytes(t, f.conn); q != 0 {
		t.Fatalf("%d bytes queued before the burst", q)
	}
	waitQueued := func(atLeast uint32) uint32 {
		t.Helper()
		for deadline := time.Now().Add(waitBound); ; time.Sleep(time.Millisecond) {
			if q := queuedBytes(t, f.conn); q >= atLeast {
				return q
			}
			if time.Now().After(deadline) {
				t.Fatalf("the socket did not queue %d bytes", atLeast)
			}
		}
	}
	reqs[0].p.send(reqs[0].req)
	one := waitQueued(1)
	for _, r := range reqs[1:] {
		r.p.send(r.req)
	}
	waitQueued(one * uint32(len(reqs)))
}

// holdTwoBatches sends a refresh (seq 1) whose commit the gate holds, then
// a second (seq 2), read alone into the next batch during that commit. It
// returns both requests.
func holdTwoBatches(t *testing.T, f *overlapFixture, p *peer, v engine.ListingView, pc *engine.Capability) [][]byte {
	t.Helper()
	first := signedReq('p', v.Presence, pc[:], seq(1))
	p.send(first)
	f.gate.awaitEntered(t)
	second := signedReq('p', v.Presence, pc[:], seq(2))
	p.send(second)
	f.conn.awaitReads(t, 2)
	return [][]byte{first, second}
}

// refresher is a peer refreshing its own listing, with every refresh it
// sent, in order.
type refresher struct {
	p    *peer
	v    engine.ListingView
	key  engine.Capability
	reqs [][]byte
}

// newRefreshers makes n refreshers, each with its own listing and peer.
// Bursts are spread over several so that none receives more answers at once
// than its socket buffer holds.
func newRefreshers(f *overlapFixture, n int) []*refresher {
	rs := make([]*refresher, n)
	for i := range rs {
		v, key := f.listing()
		rs[i] = &refresher{p: f.peer(), v: v, key: key}
	}
	return rs
}

// burst makes n refreshes, round-robin over rs, each carrying its listing's
// next sequence number.
func burst(rs []*refresher, n int) []sent {
	out := make([]sent, n)
	for i := range out {
		r := rs[i%len(rs)]
		req := signedReq('p', r.v.Presence, r.key[:], seq(uint64(len(r.reqs)+1)))
		r.reqs = append(r.reqs, req)
		out[i] = sent{r.p, req}
	}
	return out
}

// wantAnsweredInOrder: every refresh succeeded, answered once, in the order
// its peer sent it (each carries its listing's next sequence number, so one
// committed out of order would be refused as stale).
func wantAnsweredInOrder(t *testing.T, rs []*refresher) {
	t.Helper()
	for _, r := range rs {
		for _, req := range r.reqs {
			wantSuccess(t, r.p.expect(txOf(req)), r.key[:], r.p.addr())
		}
		r.p.barrier() // nothing answered twice
	}
}

// wantBatches: the second ApplyBatch carried second ops, all of them total,
// none more than overlapBatch.
func wantBatches(t *testing.T, sizes []int, second, total int) {
	t.Helper()
	if len(sizes) < 2 || sizes[1] != second {
		t.Fatalf("ApplyBatch sizes %v: the batch read during the first commit carried %v ops, want %d",
			sizes, sizes[1:min(2, len(sizes))], second)
	}
	sum := 0
	for _, n := range sizes {
		sum += n
	}
	if sum != total || slices.Max(sizes) > overlapBatch {
		t.Fatalf("ApplyBatch sizes %v: want %d ops in all, none over %d", sizes, total, overlapBatch)
	}
}

// TestOverlapTopsUpTheNextBatch: datagrams that queue while the store
// commits batch N join batch N+1 (read during that commit) before it is
// committed, up to overlapBatch, instead of waiting for batches of their
// own; every refresh is answered once, in order.
func TestOverlapTopsUpTheNextBatch(t *testing.T) {
	for _, path := range []struct {
		name     string
		portable bool
	}{{"recvmmsg", false}, {"portable", true}} {
		for _, n := range []int{40, overlapBatch + batchSize} {
			t.Run(fmt.Sprintf("%s/%d", path.name, n), func(t *testing.T) {
				f := newOverlapFixture(t, path.portable, false)
				rs := newRefreshers(f, 4)
				rs[0].reqs = holdTwoBatches(t, f, rs[0].p, rs[0].v, &rs[0].key)
				queueDuringCommit(t, f, burst(rs, n))
				f.release()
				wantAnsweredInOrder(t, rs)
				wantBatches(t, f.gate.batches(), min(1+n, overlapBatch), 2+n)
			})
		}
	}
}

// TestOverlapTakesABacklogDuringTheCommit: when the blocking read fills
// (more is queued than one read takes), the reader takes the backlog at
// once, up to overlapBatch, while the previous commit still runs, and hands
// the full batch over without waiting for that commit to end.
func TestOverlapTakesABacklogDuringTheCommit(t *testing.T) {
	f := newOverlapFixture(t, false, true)
	rs := newRefreshers(f, 4)
	first := burst(rs[:1], 1)[0]
	first.p.send(first.req)
	f.gate.awaitEntered(t)
	queueDuringCommit(t, f, burst(rs, 2*overlapBatch))
	f.allowSecondRead()
	// A blocking read of batchSize, then non-blocking ones up to
	// overlapBatch, all before the held commit ends.
	want := int32(overlapBatch/batchSize - 1)
	for deadline := time.Now().Add(waitBound); f.conn.tries.Load() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d non-blocking reads took the backlog during the commit, want %d", f.conn.tries.Load(), want)
		}
	}
	f.release()
	wantAnsweredInOrder(t, rs)
	wantBatches(t, f.gate.batches(), overlapBatch, 1+2*overlapBatch)
}

// TestOverlapCloseWhileATopUpWaits: Close while the reader holds a batch
// waiting to be topped up (the previous commit is held) returns once that
// commit ends, and the held batch is still committed, as a batch in flight
// always is; what queued behind it is not read from the closed socket.
func TestOverlapCloseWhileATopUpWaits(t *testing.T) {
	f := newOverlapFixture(t, false, false)
	v, pc := f.listing()
	p := f.peer()
	holdTwoBatches(t, f, p, v, &pc)
	queueDuringCommit(t, f, []sent{
		{p, signedReq('p', v.Presence, pc[:], seq(3))},
		{p, signedReq('p', v.Presence, pc[:], seq(4))},
	})
	closed := make(chan error, 1)
	go func() { closed <- f.med.Close() }()
	select {
	case <-f.conn.closed:
	case <-time.After(waitBound):
		t.Fatal("Close did not close the socket")
	}
	f.release()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(waitBound):
		t.Fatal("Close did not return after the held commit ended")
	}
	if sizes := f.gate.batches(); !slices.Equal(sizes, []int{1, 1}) {
		t.Fatalf("ApplyBatch sizes %v, want [1 1]: both batches in flight committed, nothing read after Close", sizes)
	}
	// The second refresh was committed and the queued ones were not: the
	// store refuses sequence 2 as stale and takes 3.
	for _, c := range []struct {
		seq  uint64
		want engine.Outcome
	}{{2, engine.Conflict}, {3, engine.Success}} {
		ops := []engine.Op{{Kind: engine.OpPresence, Presence: engine.BindPresence{
			Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: c.seq, Public: p.addr()}}}
		if err := f.store.ApplyBatch(t.Context(), ops); err != nil || ops[0].Result.Outcome != c.want {
			t.Fatalf("refresh seq %d after Close: %v %v, want %v", c.seq, ops[0].Result, err, c.want)
		}
	}
}
