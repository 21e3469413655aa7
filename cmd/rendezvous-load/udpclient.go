package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// UDP client tuning.
const (
	udpBatch      = 64               // datagrams per sendmmsg/recvmmsg
	udpBufSize    = 1500             // receive buffer per datagram
	udpMaxReq     = 192              // room for one encoded request
	udpFlushEvery = time.Millisecond // a partial send batch waits at most this long
	udpSweepEvery = 50 * time.Millisecond
)

// AnswerFunc receives the outcome of one request sent with ref. m is nil on
// timeout; otherwise it is the parsed answer, aliasing the receive buffer,
// and is valid only during the call. It runs on the client's receiver (or
// sweeper) goroutine and must not block.
type AnswerFunc func(ref int32, code Code, m *stun.Message)

// IndicationFunc receives indications (OFFER, INTRODUCE); same rules as AnswerFunc.
type IndicationFunc func(m *stun.Message)

type udpSlot struct {
	gen      uint32
	inUse    bool
	kind     Kind
	ref      int32
	intended time.Time
	key      *engine.Capability // the request's signing key; nil for plain Bindings
}

// UDPClient sends authenticated STUN requests over one connected socket in
// batches and matches answers to requests by transaction ID: bytes 0-3 name
// a slot of a fixed pending table, bytes 4-7 its generation. Send, the
// receiver and the sweeper share the table under one mutex; nothing is
// allocated per datagram. Close stops its goroutines.
type UDPClient struct {
	conn    *net.UDPConn
	bc      *batchConn
	rec     *RecSwitch
	timeout time.Duration
	onAns   AnswerFunc
	onInd   IndicationFunc

	mu      sync.Mutex
	slots   []udpSlot
	free    []uint32
	out     [][]byte // encoded, waiting for the next flush
	spare   [][]byte // buffers to encode into
	flushCh chan struct{}
	// inflight mirrors len(slots)-len(free) for lock-free polling.
	inflight atomic.Int64

	done chan struct{}
	wg   sync.WaitGroup
	// Malformed counts datagrams stun.Parse refused; under mu.
	Malformed uint64
	// Verify makes the client check the MESSAGE-INTEGRITY-SHA256 of every
	// answer to an authenticated request; one that fails is recorded as
	// CodeBadSignature. Set it before the first Send.
	Verify bool
}

// ErrTableFull is returned by Send when maxPending requests are in flight.
var ErrTableFull = errors.New("udp: every pending slot is in use")

// NewUDPClient connects to server. maxPending bounds requests in flight.
func NewUDPClient(server string, maxPending int, timeout time.Duration, rec *RecSwitch, onAns AnswerFunc, onInd IndicationFunc) (*UDPClient, error) {
	raddr, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve mediator %q: %w", server, err)
	}
	conn, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return nil, fmt.Errorf("cannot open UDP socket: %w", err)
	}
	// Larger kernel buffers absorb bursts of a whole fill; errors are
	// ignored because the default still works, only with more drops.
	_ = conn.SetReadBuffer(4 << 20)
	_ = conn.SetWriteBuffer(4 << 20)
	bc, err := newBatchConn(conn, udpBatch, udpBufSize)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c := &UDPClient{conn: conn, bc: bc, rec: rec, timeout: timeout, onAns: onAns, onInd: onInd,
		slots: make([]udpSlot, maxPending), free: make([]uint32, maxPending),
		out: make([][]byte, 0, udpBatch), spare: make([][]byte, 0, 2*udpBatch),
		flushCh: make(chan struct{}, 1), done: make(chan struct{})}
	for i := range c.free {
		c.free[i] = uint32(maxPending - 1 - i)
	}
	for i := 0; i < 2*udpBatch; i++ {
		c.spare = append(c.spare, make([]byte, 0, udpMaxReq))
	}
	c.wg.Add(3)
	go c.receive()
	go c.flusher()
	go c.sweeper()
	return c, nil
}

// LocalAddr is the socket's bound address (the host's LAN endpoint).
func (c *UDPClient) LocalAddr() *net.UDPAddr { return c.conn.LocalAddr().(*net.UDPAddr) }

// Send encodes r (its TxID is overwritten) and queues it for the next batch.
// Its outcome is recorded under kind and reported to the AnswerFunc with ref.
func (c *UDPClient) Send(kind Kind, ref int32, r *stunRequest, intended time.Time) error {
	return c.send(kind, ref, r, intended)
}

// SendPlain queues an unauthenticated Binding request (as any STUN client
// sends to learn its reflexive address); its outcome is recorded as KindPlain.
func (c *UDPClient) SendPlain(ref int32, intended time.Time) error {
	return c.send(KindPlain, ref, nil, intended)
}

func (c *UDPClient) send(kind Kind, ref int32, r *stunRequest, intended time.Time) error {
	c.mu.Lock()
	if len(c.free) == 0 {
		c.mu.Unlock()
		return ErrTableFull
	}
	idx := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	c.inflight.Add(1)
	s := &c.slots[idx]
	s.gen++
	s.inUse, s.kind, s.ref, s.intended, s.key = true, kind, ref, intended, nil
	if r != nil && c.Verify {
		s.key = r.Key
	}
	var tx [12]byte
	binary.BigEndian.PutUint32(tx[0:4], idx)
	binary.BigEndian.PutUint32(tx[4:8], s.gen)
	var buf []byte
	if n := len(c.spare); n > 0 {
		buf = c.spare[n-1][:0]
		c.spare = c.spare[:n-1]
	} else {
		buf = make([]byte, 0, udpMaxReq) // only when a flush is far behind
	}
	if r != nil {
		r.TxID = tx
		buf = r.Encode(buf)
	} else {
		buf = encodePlainBinding(buf, tx)
	}
	c.out = append(c.out, buf)
	flushNow := len(c.out) >= udpBatch
	if flushNow {
		c.flushLocked()
	}
	c.mu.Unlock()
	if !flushNow {
		select {
		case c.flushCh <- struct{}{}:
		default:
		}
	}
	return nil
}

// flushLocked writes the queued datagrams. Holding mu across the system
// call keeps the batch buffers simple; one sendmmsg of 64 small datagrams is
// a few microseconds.
func (c *UDPClient) flushLocked() {
	if len(c.out) == 0 {
		return
	}
	// Errors (e.g. ECONNREFUSED from an earlier ICMP) surface as timeouts of
	// the affected requests, which is how the report counts them.
	_, _ = c.bc.WriteBatch(c.out)
	c.spare = append(c.spare, c.out...)
	c.out = c.out[:0]
}

func (c *UDPClient) flusher() {
	defer c.wg.Done()
	t := time.NewTicker(udpFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-c.flushCh:
		case <-t.C:
		}
		c.mu.Lock()
		c.flushLocked()
		c.mu.Unlock()
	}
}

func (c *UDPClient) receive() {
	defer c.wg.Done()
	m := new(stun.Message) // reused for every datagram
	for {
		n, err := c.bc.ReadBatch()
		if err != nil {
			select {
			case <-c.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ECONNREFUSED while the server starts
		}
		now := time.Now()
		for i := 0; i < n; i++ {
			c.handle(c.bc.Datagram(i), m, now)
		}
	}
}

// handle parses one datagram into m (owned by the caller, reused) and
// matches it to its pending request. It does not allocate.
func (c *UDPClient) handle(d []byte, m *stun.Message, now time.Time) {
	if stun.Parse(d, m) != nil {
		c.mu.Lock()
		c.Malformed++
		c.mu.Unlock()
		return
	}
	if m.Class() == stun.ClassIndication {
		if c.onInd != nil {
			c.onInd(m)
		}
		return
	}
	if !isAnswer(m) {
		return // neither an answer nor an indication: nothing waits for it
	}
	tx := m.TransactionID()
	idx := binary.BigEndian.Uint32(tx[0:4])
	gen := binary.BigEndian.Uint32(tx[4:8])
	c.mu.Lock()
	if int(idx) >= len(c.slots) || !c.slots[idx].inUse || c.slots[idx].gen != gen {
		c.mu.Unlock()
		return // late (swept as a timeout) or a duplicate
	}
	s := c.slots[idx]
	c.slots[idx].inUse = false
	c.free = append(c.free, idx)
	c.inflight.Add(-1)
	c.mu.Unlock()
	code := answerCode(m)
	// Every answer to an authenticated request but 401 is signed with the
	// request's capability (docs/contracts/udp.md#authentication).
	if s.key != nil && code != CodeUnauthorized && !m.CheckIntegrity(s.key[:]) {
		code = CodeBadSignature
	}
	c.rec.Load().Observe(s.kind, code, now.Sub(s.intended))
	if c.onAns != nil {
		c.onAns(s.ref, code, m)
	}
}

func (c *UDPClient) sweeper() {
	defer c.wg.Done()
	t := time.NewTicker(udpSweepEvery)
	defer t.Stop()
	var expired []udpSlot
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			expired = expired[:0]
			c.mu.Lock()
			for i := range c.slots {
				s := &c.slots[i]
				if s.inUse && now.Sub(s.intended) > c.timeout {
					s.inUse = false
					c.free = append(c.free, uint32(i))
					c.inflight.Add(-1)
					expired = append(expired, *s)
				}
			}
			c.mu.Unlock()
			for _, s := range expired {
				c.rec.Load().Observe(s.kind, CodeTimeout, now.Sub(s.intended))
				if c.onAns != nil {
					c.onAns(s.ref, CodeTimeout, nil)
				}
			}
		}
	}
}

// MalformedCount reports how many datagrams stun.Parse refused.
func (c *UDPClient) MalformedCount() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Malformed
}

// InFlight reports how many requests await an answer, without locking.
func (c *UDPClient) InFlight() int { return int(c.inflight.Load()) }

// Close stops the goroutines and closes the socket. Requests still pending
// are dropped without being recorded.
func (c *UDPClient) Close() {
	close(c.done)
	c.conn.Close()
	c.wg.Wait()
}
