package main

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pion "github.com/pion/stun/v3"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// fakeMediator answers every Binding request on loopback: success for even
// sequences, 508 for odd ones, and drops requests for handles starting with
// 0xff (to exercise timeouts).
type fakeMediator struct {
	conn *net.UDPConn
	wg   sync.WaitGroup
	seen atomic.Int64
}

func startFakeMediator(t *testing.T) *fakeMediator {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMediator{conn: c}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			m.seen.Add(1)
			req := &pion.Message{Raw: append([]byte(nil), buf[:n]...)}
			if req.Decode() != nil {
				continue
			}
			var u pion.Username
			if u.GetFrom(req) != nil || len(u) < 4 || u.String()[2:4] == "ff" {
				continue
			}
			setters := []pion.Setter{pion.NewTransactionIDSetter(req.TransactionID)}
			seq, _ := req.Get(pion.AttrType(stun.AttrSequence))
			if len(seq) == 8 && seq[7]%2 == 1 {
				setters = append(setters, pion.BindingError, pion.ErrorCodeAttribute{Code: 508, Reason: []byte("full")})
			} else {
				setters = append(setters, pion.BindingSuccess, &pion.XORMappedAddress{IP: from.IP, Port: from.Port})
			}
			resp, err := pion.Build(append(setters, pion.Fingerprint)...)
			if err != nil {
				continue
			}
			c.WriteToUDP(resp.Raw, from)
		}
	}()
	t.Cleanup(func() { c.Close(); m.wg.Wait() })
	return m
}

func TestUDPClientMatchesAnswers(t *testing.T) {
	m := startFakeMediator(t)
	var rs RecSwitch
	rs.Store(new(Recorder))
	var mu sync.Mutex
	got := map[int32]Code{}
	c, err := NewUDPClient(m.conn.LocalAddr().String(), 256, 2*time.Second, &rs, func(ref int32, code Code, m *stun.Message) {
		mu.Lock()
		got[ref] = code
		mu.Unlock()
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 200
	for i := 0; i < n; i++ {
		r := testRequest()
		r.Sequence = uint64(i + 1)
		for c.Send(KindPresence, int32(i), r, time.Now()) == ErrTableFull {
			time.Sleep(time.Millisecond)
		}
	}
	for i := 0; i < 5000 && c.InFlight() > 0; i++ {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("%d answers for %d requests", len(got), n)
	}
	for ref, code := range got {
		want := CodeOK
		if (ref+1)%2 == 1 {
			want = CodeStun508
		}
		if code != want {
			t.Fatalf("ref %d: %s, want %s", ref, code, want)
		}
	}
	var cnt Counts
	rs.Load().Load(&cnt)
	if cnt.ByCode[KindPresence][CodeOK] != n/2 || cnt.ByCode[KindPresence][CodeStun508] != n/2 {
		t.Fatalf("recorded %v", cnt.ByCode[KindPresence])
	}
}

func TestUDPClientTimesOutAndBoundsPending(t *testing.T) {
	m := startFakeMediator(t)
	var rs RecSwitch
	rs.Store(new(Recorder))
	var timeouts atomic.Int64
	c, err := NewUDPClient(m.conn.LocalAddr().String(), 4, 100*time.Millisecond, &rs, func(ref int32, code Code, m *stun.Message) {
		if code == CodeTimeout && m == nil {
			timeouts.Add(1)
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := testRequest()
	r.Handle.UUID[0] = 0xff // the fake mediator never answers these
	for i := 0; i < 4; i++ {
		if err := c.Send(KindBind, int32(i), r, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Send(KindBind, 9, r, time.Now()); err != ErrTableFull {
		t.Fatalf("fifth send with 4 slots: %v", err)
	}
	for i := 0; i < 5000 && timeouts.Load() < 4; i++ {
		time.Sleep(time.Millisecond)
	}
	if timeouts.Load() != 4 || c.InFlight() != 0 {
		t.Fatalf("%d timeouts, %d pending", timeouts.Load(), c.InFlight())
	}
	var cnt Counts
	rs.Load().Load(&cnt)
	if cnt.ByCode[KindBind][CodeTimeout] != 4 {
		t.Fatalf("recorded %v", cnt.ByCode[KindBind])
	}
}

// silentClient is a UDP client, with room for maxPending requests and a
// minute's timeout, of a peer that never answers; both close when the test
// ends.
func silentClient(t *testing.T, maxPending int, rec *RecSwitch, onAns AnswerFunc, onInd IndicationFunc) *UDPClient {
	t.Helper()
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	c, err := NewUDPClient(silent.LocalAddr().String(), maxPending, time.Minute, rec, onAns, onInd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestUDPClientSendAllocs(t *testing.T) {
	// A silent peer: AllocsPerRun counts every goroutine's allocations, so
	// nothing else may run in this process while it measures.
	var rs RecSwitch
	rs.Store(new(Recorder))
	c := silentClient(t, 4096, &rs, nil, nil)
	r := testRequest()
	now := time.Now()
	n := testing.AllocsPerRun(1000, func() {
		r.Sequence++
		if err := c.Send(KindPresence, 1, r, now); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("Send allocates %v times per datagram", n)
	}
}

// The receive path (parse, match, record, callback) allocates nothing.
func TestUDPClientReceiveAllocs(t *testing.T) {
	var rs RecSwitch
	rs.Store(new(Recorder))
	var answered int
	c := silentClient(t, 64, &rs, func(ref int32, code Code, m *stun.Message) {
		if code == CodeOK {
			answered++
		}
	}, nil)
	resp, err := pion.Build(pion.NewTransactionIDSetter([12]byte{}), pion.BindingSuccess,
		&pion.XORMappedAddress{IP: net.IPv4(127, 0, 0, 1), Port: 1}, pion.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	raw := resp.Raw
	r := testRequest()
	m := new(stun.Message)
	now := time.Now()
	n := testing.AllocsPerRun(1000, func() {
		if err := c.Send(KindPresence, 1, r, now); err != nil {
			t.Fatal(err)
		}
		copy(raw[8:20], r.TxID[:])
		fixFingerprint(raw)
		c.handle(raw, m, now)
	})
	if n != 0 {
		t.Fatalf("receive path allocates %v times per datagram", n)
	}
	if answered < 1000 || c.InFlight() != 0 {
		t.Fatalf("%d answers matched, %d pending", answered, c.InFlight())
	}
}

// A keeper's presence refresh (build, sign, queue) allocates nothing.
func TestSendPresenceAllocs(t *testing.T) {
	cfg := defaultConfig()
	r := &Run{cfg: &cfg}
	r.rec.Store(new(Recorder))
	h := &held{}
	u, _ := engine.ParseUUID("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0")
	h.Handle = engine.Handle{UUID: u}
	r.listings = []*held{h}
	c := silentClient(t, 4096, &r.rec, r.onAnswer, r.onIndication)
	r.udp = []*UDPClient{c}
	now := time.Now()
	n := testing.AllocsPerRun(1000, func() { r.sendPresence(0, now) })
	if n != 0 {
		t.Fatalf("sendPresence allocates %v times per refresh", n)
	}
	if h.seq.Load() < 1000 {
		t.Fatalf("sequence %d after 1000 refreshes", h.seq.Load())
	}
}
