package redisstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// churnLog is what a churn acknowledged, for browses running beside it:
// listings whose presence refresh was acknowledged (visible), whose
// deletion began and whose deletion was acknowledged.
type churnLog struct {
	mu                      sync.Mutex
	visible, deleting, gone map[engine.ListingID]bool
}

func newChurnLog() *churnLog {
	return &churnLog{visible: map[engine.ListingID]bool{}, deleting: map[engine.ListingID]bool{}, gone: map[engine.ListingID]bool{}}
}

func (l *churnLog) mark(m map[engine.ListingID]bool, id engine.ListingID) {
	l.mu.Lock()
	m[id] = true
	l.mu.Unlock()
}

// churn creates, makes visible, renews and deletes listings through via
// until stop, keeping at most 60 alive (a page holds them all).
func (f *mirrorFixture) churn(via *redisstore.Store, stop <-chan struct{}, log *churnLog) {
	ctx := context.Background()
	var live []engine.ListingView
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		switch {
		case len(live) < 30 || (len(live) < 60 && i%3 == 0):
			v := f.create(via, "o", []string{"eu", "us"}[i%2], 1)
			if r := f.refresh(via, v); !r.OK() {
				f.t.Errorf("refresh: %v", r.Outcome)
				return
			}
			if log != nil {
				log.mark(log.visible, v.ID)
			}
			live = append(live, v)
		case i%3 == 1:
			k := i % len(live)
			f.renew(via, &live[k], i%8)
		default:
			k := i % len(live)
			v := live[k]
			if log != nil {
				log.mark(log.deleting, v.ID)
			}
			if r, err := via.DeleteListing(ctx, engine.DeleteListing{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID,
				Lease: v.Lease, LeaseKey: f.leaseKey(&v)}); err != nil || !r.OK() {
				f.t.Errorf("delete: %v %v", r.Outcome, err)
				return
			}
			if log != nil {
				log.mark(log.gone, v.ID)
			}
			live = append(live[:k], live[k+1:]...)
		}
	}
}

// TestBrowseMirrorConcurrentBrowsesDuringChurn: many goroutines browse one
// instance while another instance churns. Each page holds every listing
// made visible before the page began whose deletion had not begun by its
// end, and none
// whose deletion was acknowledged before it began; pages are in ID order.
// After the churn, the index is the shared state. Run with -race.
func TestBrowseMirrorConcurrentBrowsesDuringChurn(t *testing.T) {
	f := newMirrorFixture(t)
	log := newChurnLog()
	stop := make(chan struct{})
	var churners sync.WaitGroup
	churners.Add(1)
	go func() {
		defer churners.Done()
		f.churn(f.a, stop, log)
	}()
	var browsers sync.WaitGroup
	for g := 0; g < 8; g++ {
		browsers.Add(1)
		go func() {
			defer browsers.Done()
			dst := make([]engine.BrowseItem, 0, engine.BrowsePageMax)
			for n := 0; n < 150; n++ {
				log.mu.Lock()
				var must, mustNot []engine.ListingID
				for id := range log.visible {
					if !log.deleting[id] {
						must = append(must, id)
					}
				}
				for id := range log.gone {
					mustNot = append(mustNot, id)
				}
				log.mu.Unlock()
				items, _, r, err := f.b.BrowseItems(context.Background(), engine.Browse{Tenant: mirrorTenant,
					ProtocolVersion: 1, Limit: engine.BrowsePageMax}, dst[:0])
				if err != nil || !r.OK() {
					t.Errorf("browse: %v %v", r.Outcome, err)
					return
				}
				seen := map[engine.ListingID]bool{}
				for i := range items {
					seen[items[i].ID] = true
					if i > 0 && items[i-1].ID.Compare(items[i].ID.UUID) >= 0 {
						t.Errorf("page out of order at %d", i)
						return
					}
				}
				// A deletion that began before the page ended may have
				// hidden a listing; one that had not begun cannot have.
				log.mu.Lock()
				for _, id := range must {
					if !seen[id] && !log.deleting[id] {
						t.Errorf("browse %d misses listing %v, visible before it began and never deleted", n, id)
						log.mu.Unlock()
						return
					}
				}
				log.mu.Unlock()
				for _, id := range mustNot {
					if seen[id] {
						t.Errorf("browse %d shows listing %v, deleted before it began", n, id)
						return
					}
				}
			}
		}()
	}
	browsers.Wait()
	close(stop)
	churners.Wait()
	f.check(f.b, "concurrent browses during churn")
}
