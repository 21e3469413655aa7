package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// held is one listing the load tester created and keeps alive. The lease
// and presence capabilities print redacted; nothing here is ever printed.
type held struct {
	ID       client.ListingID
	Lease    client.Lease // ID and Token; the current version is in version
	Handle   engine.Handle
	PresCap  engine.Capability
	Mediator string // as the server advertised it
	Pub      int
	seq      atomic.Uint64
	version  atomic.Uint64
	live     atomic.Bool  // presence accepted
	lastCode atomic.Int32 // last presence Code
	mu       sync.Mutex   // held by a renewal, and by the soak's delete
	sendMu   sync.Mutex   // held while a presence refresh is numbered and queued
	inflight atomic.Int32 // presence requests awaiting an answer or timeout
	deleted  atomic.Bool  // the run deleted it (soak churn): nothing is sent for it any more
	mode     string       // its attribute mode (set by the fill)
}

// attemptRec is one join attempt the load tester created.
type attemptRec struct {
	Listing int
	Handle  engine.Handle
	Client  engine.Capability
	Host    engine.Capability
	At      time.Time // when it was requested; it lives the server's attempt TTL
}

// Phase is a named interval of the run, drawn on the charts.
type Phase struct {
	Name  string  `json:"name"`
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
}

// Run holds one run's state. Its fields are set up by newRun and by the
// phases in order; the tables (listings, attempts) are appended only by the
// phase filling them and read concurrently after.
type Run struct {
	cfg *Config
	tok *Tokens
	api *apiSet
	// ctx is every HTTP request's context: never cancelled (each request
	// is bounded by --timeout), so a request in flight when a phase ends or
	// the run is interrupted is answered and counted, and a listing it
	// created is known to the cleanup.
	ctx      context.Context
	rec      RecSwitch
	udp      []*UDPClient
	mediator string
	runID    string
	start    time.Time
	out      io.Writer // progress output
	tty      bool      // out is a terminal: the progress line is redrawn in place

	// listings only grows; in soak mode while other goroutines read it, so
	// those read it through heldAt and heldSnapshot.
	listings []*held
	lmu      sync.RWMutex
	extraMu  sync.Mutex
	extra    []created // created but not held (see noteCreated)
	attMu    sync.Mutex
	attempts []attemptRec

	phaseMu sync.Mutex
	phases  []Phase
	series  []SeriesPoint
	// phaseRecs are the finished phases' recorders, by phase name.
	phaseRecs map[string]*Recorder

	// presOver and presOverShed count presence answers for listings whose
	// presence was never admitted (over the presence ceiling) and how many
	// of them were the typed STUN 508.
	presOver, presOverShed atomic.Uint64

	introduces atomic.Uint64 // INTRODUCE indications received
	filters    filterStats   // what the filtered kinds saw
	relay      relayCounts   // relay-only attempts and credentials (--relay-only)
	keyCounter atomic.Uint64 // idempotency key sequence
}

func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails since Go 1.24: it crashes the process instead
	return hex.EncodeToString(b[:])
}

// newRun checks the tokens against the server and prepares the HTTP pool.
// ctx bounds every request of the run.
func newRun(ctx context.Context, cfg *Config, out io.Writer) (*Run, error) {
	r := &Run{cfg: cfg, tok: &Tokens{}, ctx: context.WithoutCancel(ctx), out: out, runID: cfg.Run, phaseRecs: map[string]*Recorder{}}
	if r.runID == "" {
		r.runID = newRunID()
	}
	r.rec.Store(new(Recorder))
	if cfg.needsHTTP() {
		tok, err := loadTokens(cfg)
		if err != nil {
			return nil, err
		}
		r.tok = tok
	}
	var err error
	if r.api, err = newAPISet(cfg.HTTPAddr, cfg.Conns, cfg.Timeout, r.tok); err != nil {
		return nil, err
	}
	if cfg.needsHTTP() {
		if err := checkPublisher(ctx, r.api.pubs[0], cfg.HTTPAddr); err != nil {
			return nil, err
		}
	}
	r.start = time.Now()
	return r, nil
}

// openUDP connects the UDP sockets to the mediator, once it is known.
func (r *Run) openUDP(mediator string) error {
	if r.cfg.Mediator != "" {
		mediator = r.cfg.Mediator
	}
	if mediator == "" {
		return fmt.Errorf("no mediator address: the server advertised none and --mediator is not set")
	}
	r.mediator = mediator
	per := 8192
	for i := 0; i < r.cfg.UDPSockets; i++ {
		c, err := NewUDPClient(mediator, per, r.cfg.Timeout, &r.rec, r.onAnswer, r.onIndication)
		if err != nil {
			return err
		}
		// udprate measures rates with the generator's cost as low as it can
		// be; the other modes check every answer's signature.
		c.Verify = r.cfg.Mode != ModeUDPRate
		r.udp = append(r.udp, c)
	}
	return nil
}

func (r *Run) close() {
	for _, c := range r.udp {
		c.Close()
	}
}

// refs name what a UDP request was for: presence refs are listing indexes,
// bind refs have refBind set and carry attempt index*2 + role.
const refBind = 1 << 30

func (r *Run) onAnswer(ref int32, code Code, _ *stun.Message) {
	if ref < 0 || ref&refBind != 0 {
		return
	}
	h := r.heldAt(int(ref))
	if h == nil {
		return
	}
	h.inflight.Add(-1)
	// A badly signed answer is not the server's (another process on the
	// port, or a forgery): an error, never over-ceiling work.
	if !h.live.Load() && code != CodeTimeout && code != CodeBadSignature {
		r.presOver.Add(1)
		if code == CodeStun508 {
			r.presOverShed.Add(1)
		}
	}
	h.lastCode.Store(int32(code))
	if code == CodeOK {
		h.live.Store(true)
	}
}

func (r *Run) onIndication(m *stun.Message) {
	if m.Type() == stun.IntroduceIndication {
		r.introduces.Add(1)
	}
}

// heldAt returns held listing i, or nil when there is none (safe while
// the soak appends).
func (r *Run) heldAt(i int) *held {
	r.lmu.RLock()
	defer r.lmu.RUnlock()
	if i < 0 || i >= len(r.listings) {
		return nil
	}
	return r.listings[i]
}

// heldSnapshot returns the held listings so far. Elements are never
// rewritten, so the slice stays valid while the soak appends.
func (r *Run) heldSnapshot() []*held {
	r.lmu.RLock()
	defer r.lmu.RUnlock()
	return r.listings
}

// addHeld appends h and returns its index (its presence ref).
func (r *Run) addHeld(h *held) int {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	r.listings = append(r.listings, h)
	return len(r.listings) - 1
}

// idemKey returns a fresh idempotency key for this run.
func (r *Run) idemKey(prefix string) string {
	return fmt.Sprintf("%s-%s-%d", prefix, r.runID, r.keyCounter.Add(1))
}

// since is seconds since the run started.
func (r *Run) since(t time.Time) float64 { return t.Sub(r.start).Seconds() }

// phase runs fn as a named phase with its own Recorder, keeping the
// recorder for the report.
func (r *Run) phase(name string, fn func() error) error {
	t0 := time.Now()
	rec := &Recorder{started: t0}
	r.rec.Store(rec)
	r.phaseMu.Lock()
	r.phases = append(r.phases, Phase{Name: name, Start: r.since(t0)})
	i := len(r.phases) - 1
	r.phaseMu.Unlock()
	if r.tty {
		fmt.Fprint(r.out, "\r\x1b[K") // replace the live progress line
	}
	fmt.Fprintf(r.out, "phase %s\n", name)
	err := fn()
	r.phaseMu.Lock()
	r.phases[i].End = r.since(time.Now())
	r.phaseRecs[name] = rec
	r.phaseMu.Unlock()
	return err
}

// presenceRequest builds listing i's next presence refresh and counts it
// in flight (onAnswer counts its answer or timeout); a caller whose send
// fails calls h.inflight.Add(-1).
func (r *Run) presenceRequest(i int, req *stunRequest) *held {
	h := r.heldAt(i)
	*req = stunRequest{Kind: stun.KindPresence, Handle: h.Handle, Key: &h.PresCap, Sequence: h.seq.Add(1)}
	h.inflight.Add(1)
	return h
}

// sendPresence sends listing i's refresh on its socket.
func (r *Run) sendPresence(i int, intended time.Time) {
	var req stunRequest
	// One refresh of a listing is queued at a time, so the sequences
	// reach the socket in the order they were drawn (a lower one arriving
	// second would get 409).
	h0 := r.heldAt(i)
	h0.sendMu.Lock()
	defer h0.sendMu.Unlock()
	h := r.presenceRequest(i, &req)
	if h.deleted.Load() {
		// Checked after counting the request in flight: the soak's delete
		// sets deleted, then waits for inflight to reach zero.
		h.inflight.Add(-1)
		return
	}
	c := r.udp[i%len(r.udp)]
	if err := c.Send(KindPresence, int32(i), &req, intended); err != nil {
		h.inflight.Add(-1)
		r.rec.Load().Observe(KindPresence, CodeTransport, 0)
	}
}

// parallel runs fn(i) for i in [0,n) on workers goroutines and returns
// after all finished or ctx ended.
func parallel(ctx context.Context, n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
