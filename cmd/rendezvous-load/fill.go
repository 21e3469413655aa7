package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// presenceWindow bounds presence refreshes in flight during a fill, so a
// burst never overruns the server's socket buffer.
const presenceWindow = 2048

// fillResult records one fill step: how many were asked for, how many the
// server admitted, and how long it took.
type fillResult struct {
	Wanted   int     `json:"wanted"`
	Admitted int     `json:"admitted"`
	Shed     int     `json:"shed"`
	Failed   int     `json:"failed"`
	Seconds  float64 `json:"seconds"`
	// Codes counts the refusals by code, so a check names them.
	Codes map[string]int `json:"codes,omitempty"`
	// Quotas counts the quota_exceeded refusals by the quota the server
	// named, so the report says which flag to raise.
	Quotas map[string]int `json:"quotas,omitempty"`
}

// refused counts a refusal's code, and for quota_exceeded the quota err's
// answer named.
func (f *fillResult) refused(c Code, err error) {
	if f.Codes == nil {
		f.Codes = map[string]int{}
	}
	f.Codes[c.String()]++
	if q := quotaOf(err); c == CodeQuota && q != "" {
		if f.Quotas == nil {
			f.Quotas = map[string]int{}
		}
		f.Quotas[q]++
	}
}

// quotaOf is the quota a 429 quota_exceeded answer names in its detail
// ("quota subject_idempotency is exhausted", docs/contracts/http.md#errors),
// or "".
func quotaOf(err error) string {
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Code != "quota_exceeded" {
		return ""
	}
	q, ok := strings.CutPrefix(ae.Detail, "quota ")
	if !ok {
		return ""
	}
	q, ok = strings.CutSuffix(q, " is exhausted")
	if !ok {
		return ""
	}
	return q
}

// quotaFlags is the server flag that raises each quota.
var quotaFlags = map[string]string{
	"owner_listings": "owner-listing-quota", "tenant_listings": "tenant-listing-quota",
	"subject_attempts": "subject-attempt-quota", "tenant_attempts": "tenant-attempt-quota",
	"subject_idempotency": "subject-idempotency-quota", "tenant_idempotency": "tenant-idempotency-quota",
}

// refusals names the refusals, with what to do about a quota or a full
// pool, e.g. "quota_exceeded=12500 (a policy quota: ...)".
func (f *fillResult) refusals() string {
	if len(f.Codes) == 0 {
		return "none refused"
	}
	var parts []string
	for _, c := range codeNames {
		n := f.Codes[c]
		if n == 0 {
			continue
		}
		part := fmt.Sprintf("%s=%d", c, n)
		switch c {
		case "quota_exceeded":
			part += " (" + f.quotaAdvice() + ")"
		case "capacity_exceeded":
			part += " (a pool is at its ceiling: see GET /v1/admin/stats; raise its --max-* flag on the server)"
		case "unauthorized", "forbidden":
			part += " (the token is not accepted for this call: is it a publisher's token?)"
		}
		parts = append(parts, part)
	}
	return "refused: " + strings.Join(parts, ", ")
}

// quotaAdvice names each quota that refused and the flag and variable
// that raise it; without the server's names, every quota that could have.
func (f *fillResult) quotaAdvice() string {
	if len(f.Quotas) == 0 {
		return "a policy quota refused them: the tenant's or owner's listing quota, the tenant's or subject's attempt quota, or the tenant's or subject's idempotency quota; see GET /v1/admin/tenant-stats and raise the --tenant-*-quota, --owner-listing-quota, --subject-attempt-quota or --subject-idempotency-quota flag, RDV_* variable, on the server"
	}
	names := make([]string, 0, len(f.Quotas))
	for q := range f.Quotas {
		names = append(names, q)
	}
	sort.Strings(names)
	var out []string
	for _, q := range names {
		a := fmt.Sprintf("%s=%d", q, f.Quotas[q])
		if flag, ok := quotaFlags[q]; ok {
			l := limit{flag: flag}
			a += fmt.Sprintf(": raise --%s (%s) on the server", flag, l.env())
		}
		out = append(out, a)
	}
	return "the server named the quota: " + strings.Join(out, "; ")
}

// fillListings creates n listings over many keep-alive connections, spread
// round-robin over the publishers so no owner passes its quota, and keeps
// the admitted ones (in creation order) as r.listings.
func (r *Run) fillListings(ctx context.Context, n int) (fillResult, error) {
	np := len(r.tok.Publishers)
	if n > np*r.cfg.OwnerQuota {
		return fillResult{}, &ConfigError{"tokens", fmt.Sprintf(
			"%d listings need at least %d publishers at an owner quota of %d; the tokens file has %d (write one with 'rendezvous-load principals --publishers %d')",
			n, (n+r.cfg.OwnerQuota-1)/r.cfg.OwnerQuota, r.cfg.OwnerQuota, np, (n+r.cfg.OwnerQuota-1)/r.cfg.OwnerQuota+10)}
	}
	t0 := time.Now()
	slots := make([]*held, n)
	codes := make([]Code, n)
	errs := make([]error, n)
	parallel(ctx, n, r.cfg.Conns, func(i int) {
		pub := i % np
		sent := time.Now()
		cl, err := r.api.pubs[pub].CreateListing(r.ctx, r.idemKey("fill"), listingSpec(i, r.cfg.Region, r.cfg.ProtoVer))
		code := classify(err)
		var h *held
		if code == CodeOK {
			if h = newHeld(cl, pub); h == nil {
				code = CodeOtherStatus
			} else {
				h.mode = loadMode(i)
			}
		}
		rec := r.rec.Load()
		rec.Observe(KindCreate, code, time.Since(sent))
		rec.ObserveService(KindCreate, code, time.Since(sent))
		codes[i], errs[i] = code, err
		slots[i] = h
	})
	res := fillResult{Wanted: n, Seconds: time.Since(t0).Seconds()}
	for i, h := range slots {
		switch {
		case h != nil:
			r.listings = append(r.listings, h)
			res.Admitted++
			continue
		case codes[i].Class() == ClassShed:
			res.Shed++
		default:
			res.Failed++
		}
		res.refused(codes[i], errs[i])
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if len(r.listings) > 0 && len(r.udp) == 0 {
		if err := r.openUDP(r.listings[0].Mediator); err != nil {
			return res, err
		}
	}
	return res, nil
}

// setupFill runs the "setup" phase of the load and udprate modes: n
// listings, then their presence. res.Fill holds the figures; TotalSeconds
// is the phase's duration, set when it succeeded.
func (r *Run) setupFill(ctx context.Context, res *Result, n int) (*FillSummary, error) {
	fill := &FillSummary{}
	res.Fill = fill
	t0 := time.Now()
	if err := r.preflight(ctx, n, 0); err != nil {
		return nil, err
	}
	err := r.phase("setup", func() error {
		var err error
		if fill.Listings, err = r.fillListings(ctx, n); err != nil {
			return err
		}
		if fill.Listings.Admitted == 0 && n > 0 {
			// Nothing to measure: end the run now rather than offer load
			// to no listing for its whole duration.
			return fmt.Errorf("the setup admitted none of %d listings (%s)", n, fill.Listings.refusals())
		}
		fill.Presence = r.fillPresence(ctx)
		return nil
	})
	if err != nil {
		return nil, err
	}
	fill.TotalSeconds = time.Since(t0).Seconds()
	return fill, nil
}

// newHeld keeps what the tester needs of an admitted listing; nil when the
// answer lacks a lease version (the SDK has checked every identifier).
func newHeld(cl *client.CreatedListing, pub int) *held {
	if cl.Lease.Version == 0 {
		return nil
	}
	h := &held{ID: cl.ListingID, Lease: cl.Lease, Handle: engine.Handle{UUID: engine.UUID(cl.Presence.Handle)}, PresCap: engine.Capability(cl.Presence.Token),
		Mediator: cl.Presence.Mediator, Pub: pub}
	h.version.Store(cl.Lease.Version)
	return h
}

// fillPresence sends one refresh per held listing (retrying lost datagrams
// up to three rounds) and reports how many became live.
func (r *Run) fillPresence(ctx context.Context) fillResult {
	t0 := time.Now()
	res := fillResult{Wanted: len(r.listings)}
	todo := make([]int, 0, len(r.listings))
	for i := range r.listings {
		todo = append(todo, i)
	}
	for round := 0; round < 3 && len(todo) > 0 && ctx.Err() == nil; round++ {
		for _, i := range todo {
			for r.pending() > presenceWindow && ctx.Err() == nil {
				time.Sleep(200 * time.Microsecond)
			}
			r.sendPresence(i, time.Now())
		}
		r.waitUDP(ctx)
		next := todo[:0]
		for _, i := range todo {
			if Code(r.listings[i].lastCode.Load()) == CodeTimeout && !r.listings[i].live.Load() {
				next = append(next, i)
			}
		}
		todo = next
	}
	for _, h := range r.listings {
		switch c := Code(h.lastCode.Load()); {
		case h.live.Load():
			res.Admitted++
		case c.Class() == ClassShed:
			res.Shed++
		default:
			res.Failed++
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	return res
}

func (r *Run) pending() int {
	n := 0
	for _, c := range r.udp {
		n += c.InFlight()
	}
	return n
}

// waitUDP waits until no UDP request is pending (each ends in an answer or a
// timeout, so this is bounded by the request timeout).
func (r *Run) waitUDP(ctx context.Context) {
	deadline := time.Now().Add(r.cfg.Timeout + time.Second)
	for r.pending() > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
}

// liveIndexes lists the held listings whose presence was accepted.
func (r *Run) liveIndexes() []int {
	var idx []int
	for i, h := range r.listings {
		if h.live.Load() {
			idx = append(idx, i)
		}
	}
	return idx
}

// join creates one attempt on live listing li with client token c and, on
// success with keep set, appends it to r.attempts. It returns the code,
// the kept attempt's index (-1 when not kept) and the call's error.
func (r *Run) join(li, c int, intended time.Time, keep bool) (Code, int, error) {
	h := r.heldAt(li)
	sent := time.Now()
	if intended.IsZero() {
		intended = sent
	}
	relayOnly := r.relayOnlyNext()
	at, err := r.api.clients[c].CreateJoinAttemptWith(r.ctx, r.idemKey("join"), h.ID, client.AttemptRequest{ProtocolVersion: r.cfg.ProtoVer, RelayOnly: relayOnly})
	code := classify(err)
	if code == CodeOK {
		r.noteJoin(relayOnly, at)
	}
	rec := r.rec.Load()
	rec.Observe(KindJoin, code, time.Since(intended))
	rec.ObserveService(KindJoin, code, time.Since(sent))
	idx := -1
	if code == CodeOK && keep {
		idx = r.keepAttempt(li, at, sent)
	}
	return code, idx, err
}

// attemptCount is len(r.attempts) under its lock.
func (r *Run) attemptCount() int {
	r.attMu.Lock()
	defer r.attMu.Unlock()
	return len(r.attempts)
}

// fillAttempts creates n attempts spread over the live listings and clients.
func (r *Run) fillAttempts(ctx context.Context, n int) fillResult {
	t0 := time.Now()
	live := r.liveIndexes()
	res := fillResult{Wanted: n}
	if len(live) == 0 {
		res.Failed = n
		return res
	}
	codes := make([]Code, n)
	errs := make([]error, n)
	parallel(ctx, n, r.cfg.Conns, func(i int) {
		codes[i], _, errs[i] = r.join(live[i%len(live)], i%len(r.tok.Clients), time.Time{}, true)
	})
	for i, c := range codes {
		switch c.Class() {
		case ClassOK:
			res.Admitted++
			continue
		case ClassShed:
			res.Shed++
		default:
			res.Failed++
		}
		res.refused(c, errs[i])
	}
	res.Seconds = time.Since(t0).Seconds()
	return res
}

// bindAttempt sends attempt a's client and host binds (from different
// sockets, as two peers would).
func (r *Run) bindAttempt(a int, intended time.Time) {
	r.attMu.Lock()
	at := r.attempts[a]
	r.attMu.Unlock()
	for role := 0; role < 2; role++ {
		req := stunRequest{Kind: stun.KindAttemptClient, Handle: at.Handle, Key: &at.Client}
		if role == 1 {
			req.Kind, req.Key = stun.KindAttemptHost, &at.Host
		}
		c := r.udp[(a*2+role)%len(r.udp)]
		if err := c.Send(KindBind, int32(refBind|(a*2+role)&(refBind-1)), &req, intended); err != nil {
			r.rec.Load().Observe(KindBind, CodeTransport, 0)
		}
	}
}
