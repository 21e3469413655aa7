package main

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// created is a listing the run created and still owns: what its deletion
// needs (the ID and lease the create answered, the owning publisher).
type created struct {
	*client.CreatedListing
	Pub int
}

// CleanupSummary is what the cleanup at the end of a run removed.
type CleanupSummary struct {
	Owned       int     `json:"owned"`        // listings the run created and had not deleted
	Deleted     int     `json:"deleted"`      // deleted now (204)
	AlreadyGone int     `json:"already_gone"` // 404/410: lapsed or removed before
	Failed      int     `json:"failed"`       // still on the server as far as the tester knows
	Seconds     float64 `json:"seconds"`
}

// noteCreated keeps a listing the run created but does not hold (load
// mode's create stream, an overload create the server admitted), so the
// cleanup can delete it.
func (r *Run) noteCreated(cl *client.CreatedListing, pub int) {
	r.extraMu.Lock()
	r.extra = append(r.extra, created{cl, pub})
	r.extraMu.Unlock()
}

// owned lists every listing the run created and did not delete itself.
func (r *Run) owned() []created {
	var out []created
	for _, h := range r.heldSnapshot() {
		if !h.deleted.Load() {
			out = append(out, created{&client.CreatedListing{ListingID: h.ID, Lease: h.Lease}, h.Pub})
		}
	}
	r.extraMu.Lock()
	out = append(out, r.extra...)
	r.extraMu.Unlock()
	return out
}

// cleanup deletes every listing the run created and did not delete, so a
// run leaves the server as it found it (attempts go with their listing). It
// runs once the mode's traffic has stopped, after an interrupt too, within
// cfg.CleanupTimeout; ctx ends it earlier (a second interrupt). A
// CleanupTimeout of 0 leaves the listings on the server.
func (r *Run) cleanup(ctx context.Context, res *Result) {
	todo := r.owned()
	if len(todo) == 0 || r.cfg.CleanupTimeout == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.CleanupTimeout)
	defer cancel()
	t0 := time.Now()
	codes := make([]Code, len(todo))
	for i := range codes {
		codes[i] = CodeTimeout // not attempted before the deadline
	}
	r.phase("cleanup", func() error {
		parallel(ctx, len(todo), r.cfg.Conns, func(i int) {
			c := &todo[i]
			sent := time.Now()
			codes[i] = classify(r.api.pubs[c.Pub].DeleteListing(ctx, c.ListingID, &c.Lease))
			r.rec.Load().Observe(KindDelete, codes[i], time.Since(sent))
		})
		return nil
	})
	s := &CleanupSummary{Owned: len(todo), Seconds: time.Since(t0).Seconds()}
	for _, c := range codes {
		switch c {
		case CodeOK:
			s.Deleted++
		case CodeNotFound, CodeExpired:
			s.AlreadyGone++
		default:
			s.Failed++
		}
	}
	res.Cleanup = s
	res.addCheck("cleanup", s.Failed == 0, "%d of %d listings the run created deleted, %d already gone, %d left on the server (limit %s) in %.1fs",
		s.Deleted, s.Owned, s.AlreadyGone, s.Failed, r.cfg.CleanupTimeout, s.Seconds)
}
