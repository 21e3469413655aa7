package netio

import (
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Mediator is the UDP side of the service (docs/contracts/udp.md): one reader
// goroutine per socket reads a batch, authenticates it outside the commit
// lock, commits it with one store.ApplyBatch and writes the answers with one
// batched send; one more goroutine sends OFFERs and pushes other instances
// forwarded here, and, with a Forwarder, one forwards pushes that must
// leave from another instance and one receives them. All methods are safe for
// concurrent use.
type Mediator struct {
	cfg     Config
	store   engine.Store
	keys    *engine.Keyring
	log     *slog.Logger
	met     *mediatorMetrics
	limiter *rateLimiter
	conns   []batchConn
	groups  []socketGroup // one per address: its sockets and their reuseport program
	addrs   []netip.AddrPort
	own     map[uint64]bool // the inodes of conns, for checkPort (foreign.go)
	steer   steerKeys
	recv    int
	send    int
	pushes  chan push  // offers and forwarded pushes, for pushLoop
	fwd     *forwarder // nil without a Forwarder
	origin  time.Time
	// sleep is time.Sleep; tests hold a lingering batch with their own.
	sleep func(time.Duration)
	relay *relayPeers // which relayed addresses a bind may record

	startOnce sync.Once
	closeOnce sync.Once
	closed    atomic.Bool
	done      chan struct{}
	wg        sync.WaitGroup
	closeErr  error

	punch *punchMetrics      // punch_metrics.go
	marks chan engine.Handle // offered.go

	foreignEvery time.Duration // foreign.go; tests shorten it before Start
}

// NewMediator validates cfg and binds every socket; it does not start
// reading (Start does). Errors: *engine.ConfigError for a bad setting, or
// the listen error; nothing stays open after an error.
func NewMediator(cfg Config, store engine.Store, keys *engine.Keyring) (*Mediator, error) {
	if store == nil || keys == nil {
		return nil, &engine.ConfigError{Setting: "mediator", Reason: "store and keyring are required"}
	}
	cfg, addrs, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	m := &Mediator{
		cfg: cfg, store: store, keys: keys, log: cfg.Logger,
		met:     newMediatorMetrics(cfg.Metrics),
		limiter: newRateLimiter(cfg.ErrorRate, cfg.ErrorBurst),
		pushes:  make(chan push, offerQueue),
		origin:  time.Now(),
		sleep:   time.Sleep,
		done:    make(chan struct{}),
	}
	m.punch = newPunchMetrics(cfg.Metrics, cfg.Tenants)
	m.marks = make(chan engine.Handle, offerQueue)
	m.own = map[uint64]bool{} // every socket of this mediator, for listen's exclusivity check
	m.steer = newSteerKeys()
	m.foreignEvery = foreignCheckEvery
	for i, ap := range addrs {
		g, err := listen(ap, cfg.Sockets, &cfg, m.own, m.steer)
		if err != nil {
			for _, c := range m.conns {
				_ = c.Close() // the listen error is the one to report
			}
			return nil, err
		}
		if i == 0 {
			m.recv, m.send = g.recv, g.send
		}
		m.conns = append(m.conns, g.conns...)
		m.groups = append(m.groups, g)
	}
	m.addrs = m.LocalAddrs()
	m.relay = newRelayPeers(cfg.RelayAllowPeers, m.LocalAddrs())
	if cfg.Forwarder != nil {
		m.fwd = &forwarder{bus: cfg.Forwarder, self: store.InstanceID(), out: make(chan outgoing, forwardQueue),
			key: newForwardKey(keys), in: engine.NewHMAC()}
		m.startForwarding()
	}
	return m, nil
}

// Start starts one reader goroutine per socket, the push sender, the check
// for other processes' sockets on the ports (foreign.go) and, with a
// Forwarder, the goroutine that forwards pushes to other instances (the one
// receiving theirs runs from NewMediator on). Calls after the first, or
// after Close, do nothing.
func (m *Mediator) Start() {
	m.startOnce.Do(func() {
		if m.closed.Load() {
			return
		}
		m.wg.Add(len(m.conns) + 3)
		go m.watchPort()
		if m.fwd != nil {
			m.wg.Add(1)
			go m.forwardLoop()
		}
		for _, c := range m.conns {
			if m.cfg.Overlap {
				go m.overlapLoop(c)
			} else {
				go m.readLoop(c)
			}
		}
		go m.pushLoop()
		go m.markLoop()
		path := "recvmmsg"
		if m.cfg.Portable || !rawAvailable {
			path = "portable"
		}
		m.log.Info("udp mediator started", "addrs", m.LocalAddrs(), "sockets", len(m.conns),
			"path", path, "rcvbuf", m.recv, "sndbuf", m.send)
	})
}

// LocalAddrs returns the bound addresses (port 0 resolved), one per
// configured address.
func (m *Mediator) LocalAddrs() []netip.AddrPort {
	var out []netip.AddrPort
	for _, c := range m.conns {
		a := c.LocalAddr()
		if len(out) == 0 || out[len(out)-1] != a {
			out = append(out, a)
		}
	}
	return out
}

// BufferSizes returns the SO_RCVBUF and SO_SNDBUF the kernel granted (as
// getsockopt reports them; Linux doubles the requested value and caps it at
// rmem_max/wmem_max unless the process may force it).
func (m *Mediator) BufferSizes() (recv, send int) { return m.recv, m.send }

// Close stops the readers and the offer sender and closes every socket. It
// is idempotent and returns the first close error.
func (m *Mediator) Close() error {
	m.closeOnce.Do(func() {
		m.closed.Store(true)
		close(m.done)
		var errs []error
		for _, c := range m.conns {
			errs = append(errs, c.Close())
		}
		m.closeErr = errors.Join(errs...)
		m.wg.Wait()
	})
	return m.closeErr
}

// newProcessor makes a reader's processor for batches of at most capacity
// datagrams, forwarding, counting punch outcomes and queueing offered marks
// as m does.
func (m *Mediator) newProcessor(capacity int) *processor {
	p := newProcessor(m.store, m.keys, m.limiter, capacity)
	p.fwd, p.relay = m.fwd, m.relay
	p.punch, p.marks = m.punch, m.marks
	return p
}

// nanotime is the monotonic clock of the rate limiter.
func (m *Mediator) nanotime() int64 { return int64(time.Since(m.origin)) }

// readLoop serves one socket until Close.
func (m *Mediator) readLoop(c batchConn) {
	defer m.wg.Done()
	in := newPackets(batchSize, readSlot)
	p := m.newProcessor(batchSize)
	for {
		n, err := c.ReadBatch(in)
		if err != nil {
			if m.closed.Load() || isClosed(err) {
				return
			}
			m.log.Warn("udp read failed", "addr", c.LocalAddr(), "err", err)
			sleepOnReadError()
			continue
		}
		m.write(c, p, p.run(in[:n], m.nanotime()), n)
	}
}

// sleepOnReadError pauses after a failed read: a persistent error must not
// make a reader spin.
func sleepOnReadError() { time.Sleep(time.Millisecond) }

// write sends the answers of one batch of n datagrams that p processed:
// those c cannot carry one by one from another socket (divert), the rest
// with one batched send; then it records the batch's statistics.
func (m *Mediator) write(c batchConn, p *processor, out []packet, n int) {
	out = m.divert(c, out, &p.stats)
	if len(out) > 0 {
		sent, failed, err := c.WriteBatch(out)
		p.stats.out += sent
		p.stats.drops[dropSendFailed] += failed
		if err != nil && !isClosed(err) {
			m.log.Warn("udp write failed", "addr", c.LocalAddr(), "err", err)
		}
	}
	p.stats.flush(m.met, n)
}

// divert sends the answers c cannot carry (an INTRODUCE to a peer whose
// bind reached a socket of the other address family) from a socket that
// can, one by one, and returns the rest, compacted in place, for c's batched
// write. Swapping packets keeps each write slot's buffer distinct. Zero
// allocations.
func (m *Mediator) divert(c batchConn, out []packet, st *batchStats) []packet {
	local := c.LocalAddr()
	k := 0
	for i := range out {
		if reaches(local, out[i].addr) {
			out[k], out[i] = out[i], out[k]
			k++
			continue
		}
		other := m.connFor(out[i].addr)
		if other == nil {
			st.drops[dropSendFailed]++
			continue
		}
		if err := other.WriteTo(out[i].buf, out[i].addr); err != nil {
			st.drops[dropSendFailed]++
			continue
		}
		st.out++
	}
	return out[:k]
}
