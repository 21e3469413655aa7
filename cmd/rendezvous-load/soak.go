package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// soakDefaultRates is the soak's traffic when --rate names none: every
// HTTP kind (creates balanced by deletes) and UDP binds; presence and
// renewals come from the keepers.
var soakDefaultRates = RateSet{KindCreate: 5, KindDelete: 5, KindBrowse: 20, KindGet: 20, KindJoin: 5, KindBind: 10}

// ResourceSample is the server's resource use at one moment of the soak.
type ResourceSample struct {
	T        float64 `json:"t_s"` // seconds since the soak phase began
	RSSBytes uint64  `json:"rss_bytes"`
	FDs      int     `json:"fds"` // -1: not readable (remote, no process_open_fds)
	// TesterConns are the tester's HTTP connections open at the sample:
	// the server holds an fd for each, and the pool opens and closes them
	// as the load varies (up to --conns), so the growth rule judges
	// FDs - TesterConns.
	TesterConns int `json:"tester_conns"`
	Goroutines  int `json:"goroutines"`
}

// SoakSummary holds the soak's figures for the reliability record.
type SoakSummary struct {
	Seconds     float64           `json:"seconds"`
	Samples     []ResourceSample  `json:"samples"`
	Growth      []GrowthCheck     `json:"growth"`
	Answers     map[string]uint64 `json:"answers"` // by outcome code, all kinds
	Requests    uint64            `json:"requests"`
	Created     uint64            `json:"created"`  // listings the soak created (besides the setup's)
	Deleted     uint64            `json:"deleted"`  // of those, deleted by the soak
	Expected    int               `json:"expected"` // listings that must be there at the end
	Enumerated  int               `json:"enumerated"`
	Lost        int               `json:"lost"`
	UntypedHTTP uint64            `json:"untyped_http"`     // error answers without a problem code of the contract
	NotProblem  uint64            `json:"not_problem_json"` // error answers of another media type than problem+json
	BadUDP      uint64            `json:"bad_udp"`          // datagrams that did not parse, unsigned or unknown answers
	SampleError string            `json:"sample_error,omitempty"`
}

// soakChurn is the soak's listing churn: a created listing is held like the
// setup's (presence and renewals), and a delete removes a random one of
// those. Joins and GETs go to the setup's listings only, so no request
// races a delete.
type soakChurn struct {
	r       *Run
	active  *activeSet // every held listing not deleted: what the keepers keep
	mine    *activeSet // the churn's own listings: what deletes pick from
	created atomic.Uint64
	deleted atomic.Uint64
}

// hold keeps a listing the soak created: its first presence now, then the
// keepers'.
func (c *soakChurn) hold(cl *client.CreatedListing, pub int) {
	c.created.Add(1)
	h := newHeld(cl, pub)
	if h == nil {
		c.r.noteCreated(cl, pub)
		return
	}
	i := c.r.addHeld(h)
	c.r.sendPresence(i, time.Now())
	c.active.add(i)
	c.mine.add(i)
}

// deleteOne deletes a random listing of the churn. It first stops sending
// for it (no renewal under way, no presence refresh awaiting its answer),
// so every answer the soak sees is one it expects.
func (c *soakChurn) deleteOne(intended time.Time) {
	i, ok := c.mine.random()
	if !ok || !c.mine.remove(i) {
		return
	}
	c.active.remove(i)
	h := c.r.heldAt(i)
	h.deleted.Store(true)
	h.mu.Lock() // waits for a renewal under way; later ones see deleted
	h.mu.Unlock()
	for deadline := time.Now().Add(c.r.cfg.Timeout + time.Second); h.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	code := classify(c.r.api.pubs[h.Pub].DeleteListing(c.r.ctx, h.ID, &h.Lease))
	c.r.rec.Load().Observe(KindDelete, code, time.Since(intended))
	switch code {
	case CodeOK:
		c.deleted.Add(1)
	case CodeNotFound, CodeExpired:
	default: // its fate is unknown: the cleanup tries again
		c.r.noteCreated(&client.CreatedListing{ListingID: h.ID, Lease: h.Lease}, h.Pub)
	}
}

// runSoak holds cfg.Listings listings and runs mixed traffic for
// cfg.Duration (creates held and deleted again, renewals, browses, GETs,
// joins, presence and binds) while sampling the server's RSS, fds and
// goroutines. It fails when one of them grows without bound (growth.go),
// a listing that should be there is missing at the end, an answer is
// untyped, or errors exceed --max-error-rate.
func runSoak(ctx context.Context, r *Run, res *Result) error {
	cfg := r.cfg
	before, err := r.sampleServer()
	if err != nil {
		return fmt.Errorf("cannot sample the server (soak mode needs --server-pid or --server-bin, and /metrics): %w", err)
	}
	fill, err := r.setupFill(ctx, res, cfg.Listings)
	if err != nil {
		return err
	}
	rates := cfg.Rates
	if rates == (RateSet{}) {
		rates = soakDefaultRates
	}
	live := r.liveIndexes()
	churn := &soakChurn{r: r, active: newActiveSet(live), mine: newActiveSet(nil)}
	keep := r.startKeepers(ctx, churn.active)
	defer keep.stop()
	streams := r.trafficStreams(live, &rates, churn)
	for i := range streams {
		streams[i].Ramp = cfg.Ramp
	}
	// The setup's burst of connections would otherwise linger idle into the
	// warm-up (until the server's idle timeout) and raise its maxima of fds
	// and goroutines, hiding a leak below them.
	r.api.hc.CloseIdleConnections()
	r.phase("settle", func() error { r.settle(ctx, before.Goroutines); return nil })
	s := &SoakSummary{}
	res.Soak = s
	var t0 time.Time
	r.phase("soak", func() error {
		t0 = time.Now()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.sampleLoop(t0, s, stop)
		}()
		RunOpenLoop(ctx, streams, cfg.Duration, &r.rec)
		r.waitUDP(ctx)
		close(stop)
		wg.Wait()
		return nil
	})
	s.Seconds = time.Since(t0).Seconds()

	// Every listing held and not deleted must still be there: listed by
	// browse, or else answered by GET.
	expected := churn.active.members()
	var enumErr error
	r.phase("verify", func() error {
		enumerated, err := r.enumerate(ctx)
		enumErr, s.Enumerated = err, len(enumerated)
		for _, i := range expected {
			h := r.heldAt(i)
			if enumerated[h.ID] {
				continue
			}
			_, err := r.api.clients[0].GetListing(r.ctx, h.ID)
			if classify(err) != CodeOK {
				s.Lost++
			}
		}
		return nil
	})
	s.Expected = len(expected)
	s.Created, s.Deleted = churn.created.Load(), churn.deleted.Load()

	var c Counts
	r.phaseRecs["soak"].Load(&c)
	s.Answers = map[string]uint64{}
	for k := Kind(0); k < numKinds; k++ {
		s.Requests += c.Total(k)
		for code, n := range c.ByCode[k] {
			if n > 0 {
				s.Answers[Code(code).String()] += n
			}
		}
	}
	var vc Counts
	r.phaseRecs["verify"].Load(&vc)
	s.NotProblem = r.api.untypedAnswers()
	for k := Kind(0); k < numKinds; k++ {
		s.UntypedHTTP += c.ByCode[k][CodeUntyped] + vc.ByCode[k][CodeUntyped]
	}
	for _, u := range r.udp {
		s.BadUDP += u.MalformedCount()
	}
	for _, k := range []Kind{KindPresence, KindBind, KindPlain} {
		s.BadUDP += c.ByCode[k][CodeBadSignature] + c.ByCode[k][CodeOtherStatus]
	}

	add := res.addCheck
	add("setup.presence", fill.Presence.Admitted == cfg.Listings, "%d of %d listings admitted with live presence", fill.Presence.Admitted, cfg.Listings)
	r.errorCheck(res, "soak.errors", &c)
	add("soak.typed", s.UntypedHTTP == 0 && s.NotProblem == 0 && s.BadUDP == 0,
		"HTTP error answers: %d without a problem code of the contract, %d not problem+json; %d UDP datagrams malformed, unsigned or of an unknown kind; answers %v",
		s.UntypedHTTP, s.NotProblem, s.BadUDP, s.Answers)
	if enumErr != nil {
		add("soak.lost", false, "enumeration failed: %v", enumErr)
	} else {
		add("soak.lost", s.Lost == 0 && len(expected) > 0, "%d of %d listings held and not deleted missing at the end (browse listed %d; the soak created %d and deleted %d)",
			s.Lost, len(expected), s.Enumerated, s.Created, s.Deleted)
	}
	res.addGrowthChecks(s, cfg.MaxGrowth)
	return nil
}

// addGrowthChecks applies the growth rule to each sampled resource.
func (res *Result) addGrowthChecks(s *SoakSummary, maxGrowth float64) {
	t := make([]float64, len(s.Samples))
	rss, fds, gor := make([]float64, len(t)), make([]float64, len(t)), make([]float64, len(t))
	fdsKnown := true
	for i, p := range s.Samples {
		t[i], rss[i], fds[i], gor[i] = p.T, float64(p.RSSBytes), float64(p.FDs-p.TesterConns), float64(p.Goroutines)
		fdsKnown = fdsKnown && p.FDs >= 0
	}
	for _, g := range []GrowthCheck{growth("rss_bytes", t, rss, s.Seconds, maxGrowth),
		growth("fds", t, fds, s.Seconds, maxGrowth), growth("goroutines", t, gor, s.Seconds, maxGrowth)} {
		if g.Resource == "fds" && !fdsKnown {
			res.skipCheck("soak.fds", "the server's open fds are not readable: no --server-pid, and /metrics has no process_open_fds")
			continue
		}
		s.Growth = append(s.Growth, g)
		res.addCheck("soak."+g.Resource, !g.Unbounded && !g.Incomplete, "%s", g.Detail())
	}
}

// sampleLoop samples the server every cfg.SampleEvery (0: duration/60
// within 100ms..10s) until stop closes,
// appending to s.Samples (times from t0).
func (r *Run) sampleLoop(t0 time.Time, s *SoakSummary, stop <-chan struct{}) {
	every := r.cfg.SampleEvery
	if every == 0 {
		every = min(max(r.cfg.Duration/60, 100*time.Millisecond), 10*time.Second)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	take := func(now time.Time) {
		p, err := r.sampleServer()
		if err != nil {
			s.SampleError = err.Error()
			return
		}
		p.T = now.Sub(t0).Seconds()
		s.Samples = append(s.Samples, p)
	}
	// The first sample is one interval in: the server has seen the setup's
	// idle connections close by then.
	for {
		select {
		case <-stop:
			take(time.Now())
			return
		case now := <-tick.C:
			take(now)
		}
	}
}

// sampleServer reads the server's RSS and open fds (from /proc with a
// known PID, else from its process metrics, fds -1 when they have none)
// and its goroutines (the Go runtime's go_goroutines in /metrics).
func (r *Run) sampleServer() (ResourceSample, error) {
	var p ResourceSample
	body, err := r.api.metrics(r.ctx)
	if err != nil {
		return p, err
	}
	v := metricValues(body, "go_goroutines", "process_resident_memory_bytes", "process_open_fds")
	g, ok := v["go_goroutines"]
	if !ok {
		return p, fmt.Errorf("/metrics has no go_goroutines")
	}
	p.Goroutines = int(g)
	if pid := r.cfg.ServerPID; pid > 0 {
		u, err := procUsage(pid)
		if err != nil {
			return p, err
		}
		if p.FDs, err = procFDs(pid); err != nil {
			return p, err
		}
		p.TesterConns = r.api.openConns()
		p.RSSBytes = u.RSSBytes
		return p, nil
	}
	rss, ok := v["process_resident_memory_bytes"]
	if !ok {
		return p, fmt.Errorf("/metrics has no process_resident_memory_bytes (give --server-pid)")
	}
	p.RSSBytes, p.FDs = uint64(rss), -1
	if fds, ok := v["process_open_fds"]; ok {
		p.FDs, p.TesterConns = int(fds), r.api.openConns()
	}
	return p, nil
}

// settleMax bounds the wait for the server to settle after the setup.
const settleMax = 45 * time.Second

// settle waits, at most settleMax, until the server's goroutines are back
// near what they were before the setup (idle, plus one for each connection
// the tester holds open and a margin): a server keeps idle workers for a
// while after a burst of connections, and a warm-up reference taken among
// them would hide a leak below it.
func (r *Run) settle(ctx context.Context, idle int) {
	for deadline := time.Now().Add(settleMax); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(time.Second) {
		p, err := r.sampleServer()
		if err != nil || p.Goroutines <= idle+r.api.openConns()+8 {
			return
		}
	}
}
