package netio

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// The end-to-end benchmarks drive the server from a separate process (this
// test binary re-executed as a load client), so the server's process CPU
// time can be measured alone.

// loadClientEnv names the file holding the load client's loadSpec.
const loadClientEnv = "RDV_NETIO_LOADCLIENT"

// loadSpec tells the load client what to send.
type loadSpec struct {
	Target  string        // server "ip:port"
	Mode    string        // "echo", "binding", "presence", "flood"
	Size    int           // echo datagram size
	Count   int           // answers to collect (echo, binding, presence)
	Key     [32]byte      // keyring key (presence, flood)
	Handles []engine.UUID // presence handles (presence, flood)
	Flows   int           // client sockets
	Window  int           // datagrams in flight per socket
	// Flood: legitimate refreshes per second and how long.
	Rate     int
	Duration time.Duration
}

// loadResult is what the load client reports.
type loadResult struct {
	Sent, Answered, OK     int64
	LegitSent, LegitOK     int64
	ForgedSent, ForgedAnsw int64
}

// TestHelperLoadClient is the load client when this binary is re-executed
// with loadClientEnv set; run normally, it checks the client against an
// in-process echo server.
func TestHelperLoadClient(t *testing.T) {
	if path := os.Getenv(loadClientEnv); path != "" {
		var s loadSpec
		spec, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(spec, &s)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		res := runLoad(s)
		json.NewEncoder(os.Stdout).Encode(res)
		os.Exit(0)
	}
	echo := startEcho(t, 1)
	res := runLoad(loadSpec{Target: echo.addr.String(), Mode: "echo", Size: 100, Count: 500, Flows: 2, Window: 16})
	if res.Answered < 500 {
		t.Fatalf("load client collected %d answers of 500", res.Answered)
	}
}

// runLoad sends datagrams in bursts of Window per flow until Count answers
// arrived.
func runLoad(s loadSpec) loadResult {
	if s.Mode == "flood" {
		return runFlood(s)
	}
	target := netip.MustParseAddrPort(s.Target)
	var res loadResult
	var answered atomic.Int64
	var wg sync.WaitGroup
	keys := engine.NewKeyring(s.Key)
	var seqs []atomic.Uint64
	var next atomic.Int64
	if s.Mode == "presence" {
		seqs = make([]atomic.Uint64, len(s.Handles))
	}
	for f := 0; f < s.Flows; f++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			defer c.Close()
			pc := ipv4.NewPacketConn(c)
			dst := net.UDPAddrFromAddrPort(target)
			make1 := func(buf []byte) []byte {
				switch s.Mode {
				case "echo":
					return buf[:s.Size]
				case "binding":
					b := stun.NewBuilder(buf[:0], stun.BindingRequest, [12]byte{1})
					return b.Bytes()
				}
				i := int(next.Add(1)) % len(s.Handles)
				h := engine.Handle{UUID: s.Handles[i]}
				cp := keys.Presence(h)
				return buildInto(buf[:0], 'p', h, &cp, seqs[i].Add(1), [12]byte{byte(i)})
			}
			out := make([]ipv4.Message, s.Window)
			for i := range out {
				out[i] = ipv4.Message{Buffers: [][]byte{make([]byte, 256)}, Addr: dst}
			}
			in := make([]ipv4.Message, 64)
			for i := range in {
				in[i].Buffers = [][]byte{make([]byte, 2048)}
			}
			send := func(n int) {
				for i := 0; i < n; i++ {
					out[i].Buffers[0] = make1(out[i].Buffers[0][:cap(out[i].Buffers[0])])
				}
				if k, err := pc.WriteBatch(out[:n], 0); err == nil {
					atomic.AddInt64(&res.Sent, int64(k))
				}
			}
			// Burst mode: send a window, collect its answers (or give up
			// after a quiet 20 ms: loss), send the next. Both servers then
			// see the same bursts, whatever their speed.
			var m stun.Message
			for answered.Load() < int64(s.Count) {
				send(s.Window)
				got := 0
				for got < s.Window {
					c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
					n, err := pc.ReadBatch(in, 0)
					if err != nil {
						break
					}
					ok := 0
					for i := 0; i < n; i++ {
						if s.Mode == "echo" || (stun.Parse(in[i].Buffers[0][:in[i].N], &m) == nil && m.Type() == stun.BindingSuccess) {
							ok++
						}
					}
					got += n
					answered.Add(int64(n))
					atomic.AddInt64(&res.OK, int64(ok))
				}
			}
		}()
	}
	wg.Wait()
	res.Answered = answered.Load()
	return res
}

// runFlood refreshes every handle's presence at s.Rate per second from
// 127.0.0.1 while a second flow sends forged refreshes (bad integrity) at
// ten times that rate from 127.0.0.2, for s.Duration.
func runFlood(s loadSpec) loadResult {
	target := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(s.Target))
	keys := engine.NewKeyring(s.Key)
	var res loadResult
	var wg sync.WaitGroup
	deadline := time.Now().Add(s.Duration)
	pace := func(rate int, fn func(burst int)) {
		const tick = 5 * time.Millisecond
		per := rate * int(tick) / int(time.Second)
		for t := time.Now(); t.Before(deadline); t = t.Add(tick) {
			fn(per)
			time.Sleep(time.Until(t.Add(tick)))
		}
	}
	legit, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	forged, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	defer legit.Close()
	defer forged.Close()
	seqs := make([]uint64, len(s.Handles))
	wg.Add(3)
	go func() { // legitimate hosts, round-robin
		defer wg.Done()
		buf := make([]byte, 0, 256)
		i := 0
		pace(s.Rate, func(n int) {
			for k := 0; k < n; k++ {
				h := engine.Handle{UUID: s.Handles[i]}
				cp := keys.Presence(h)
				seqs[i]++
				if _, err := legit.WriteToUDP(buildInto(buf, 'p', h, &cp, seqs[i], [12]byte{byte(i), byte(i >> 8), 0xAA}), target); err == nil {
					atomic.AddInt64(&res.LegitSent, 1)
				}
				i = (i + 1) % len(s.Handles)
			}
		})
	}()
	go func() { // forged refreshes: valid form, wrong key
		defer wg.Done()
		buf := make([]byte, 0, 256)
		var bad engine.Capability
		i := 0
		pace(10*s.Rate, func(n int) {
			for k := 0; k < n; k++ {
				h := engine.Handle{UUID: s.Handles[i%len(s.Handles)]}
				if _, err := forged.WriteToUDP(buildInto(buf, 'p', h, &bad, uint64(1<<40+i), [12]byte{0xBB}), target); err == nil {
					atomic.AddInt64(&res.ForgedSent, 1)
				}
				i++
			}
		})
	}()
	go func() { // count forged answers (401s within the rate limit)
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			forged.SetReadDeadline(deadline.Add(500 * time.Millisecond))
			if _, err := forged.Read(buf); err != nil {
				return
			}
			atomic.AddInt64(&res.ForgedAnsw, 1)
		}
	}()
	buf := make([]byte, 2048)
	var m stun.Message
	for {
		legit.SetReadDeadline(deadline.Add(500 * time.Millisecond))
		n, err := legit.Read(buf)
		if err != nil {
			break
		}
		if stun.Parse(buf[:n], &m) == nil && m.Type() == stun.BindingSuccess {
			atomic.AddInt64(&res.LegitOK, 1)
		}
	}
	wg.Wait()
	return res
}

// echoServer is the physical limit: the same batched recvmmsg/sendmmsg path
// and socket fan-out, sending every datagram straight back.
type echoServer struct {
	addr     netip.AddrPort
	answered atomic.Int64
	reads    atomic.Int64
}

func startEcho(t testing.TB, sockets int) *echoServer {
	t.Helper()
	cfg, addrs, err := Config{Addrs: []string{"127.0.0.1:0"}, Sockets: sockets}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	g, err := listen(addrs[0], sockets, &cfg, map[uint64]bool{}, newSteerKeys()) // same sockets and buffers as the mediator
	if err != nil {
		t.Fatal(err)
	}
	conns := g.conns
	e := &echoServer{addr: conns[0].LocalAddr()}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := newPackets(batchSize, readSlot)
			for {
				n, err := c.ReadBatch(in)
				if err != nil {
					return
				}
				sent, _, _ := c.WriteBatch(in[:n])
				e.answered.Add(int64(sent))
				e.reads.Add(1)
			}
		}()
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	})
	return e
}
