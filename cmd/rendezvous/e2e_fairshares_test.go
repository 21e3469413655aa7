package main

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/internal/flood"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestE2EFairShares runs the real server with the default quotas and, for
// 3 and for 10 tenants, two of them flooding the listing and attempt pools
// at ten times their size over HTTP (a new principal per request, from
// many goroutines) while every other tenant publishes and joins: each
// victim tenant must keep at least 99% success, and the flooders must be
// shed only with 429 quota_exceeded, never a 503 full pool. Before fair
// shares the two flooders took half of each pool each and every victim
// request got 503 capacity_exceeded.
func TestE2EFairShares(t *testing.T) {
	for _, tenants := range []int{3, 10} {
		t.Run(fmt.Sprint(tenants, "tenants"), func(t *testing.T) {
			eachStore(t, func(t *testing.T, storeArgs []string) { runE2EFairShares(t, storeArgs, tenants) })
		})
	}
}

func runE2EFairShares(t *testing.T, storeArgs []string, tenants int) {
	const (
		listings, attempts = 100, 150 // idempotency: their sum
		overload           = 10
		flooders           = 2
		workers            = 8 // per flooder
		victimPubs         = 2 // listings per victim tenant during the flood
		victimJoins        = 3 // joins per victim tenant during the flood, one client each
		saturatedAfter     = 20
	)
	offered := overload * (listings + attempts) // per flooder
	game := func(i int) string { return fmt.Sprint("fair", i) }
	subjects := map[string][3]string{}
	for i := range tenants {
		subjects[fmt.Sprint("host-", i)] = [3]string{game(i), "prod", "publisher"}
		for j := range victimPubs {
			subjects[fmt.Sprintf("pub-%d-%d", i, j)] = [3]string{game(i), "prod", "publisher"}
		}
		for j := range victimJoins {
			subjects[fmt.Sprintf("client-%d-%d", i, j)] = [3]string{game(i), "prod", "client"}
		}
	}
	for fl := range flooders {
		for i := range offered / 2 {
			subjects[fmt.Sprintf("flood-pub-%d-%d", fl, i)] = [3]string{game(fl), "prod", "publisher"}
			subjects[fmt.Sprintf("flood-client-%d-%d", fl, i)] = [3]string{game(fl), "prod", "client"}
		}
	}
	file, tok := e2e.WritePrincipals(t, subjects)
	p := startProc(t, append(storeArgs, "--principals", file, "--max-listings", fmt.Sprint(listings),
		"--max-attempts", fmt.Sprint(attempts), "--max-idempotency", fmt.Sprint(listings+attempts))...)

	// Every tenant has a visible listing before the flood, its presence
	// refreshed every 5 s (as a host does) until the test ends.
	home := make([]published, tenants)
	refresh := make([]func(seq uint64), tenants)
	for i := range tenants {
		s := fmt.Sprint("host-", i)
		p.call("POST", "/v1/listings", tok[s], listingBody(s), "Idempotency-Key", s).
			expect(t, "publish "+s, http.StatusCreated, &home[i])
		h, c := mustHandle(t, home[i].Presence.Handle), mustToken(t, home[i].Presence.Token)
		peer := newPeer(t, p.mediator)
		peer.expectResponse(peer.request(stun.KindPresence, h, &c, 1, hostLAN), &c)
		// Later refreshes are not read back: the host's socket also
		// receives the offers of the joins.
		refresh[i] = func(seq uint64) { peer.request(stun.KindPresence, h, &c, seq, hostLAN) }
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for seq := uint64(2); ; seq++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Second):
				for _, r := range refresh {
					r(seq)
				}
			}
		}
	}()
	defer func() { close(stop); <-stopped }()

	var admitted, quota, other atomic.Int64
	var sample sync.Map // one body per status of the other answers
	refused := make([]atomic.Int64, flooders)
	fd := flood.New()
	for fl := range flooders {
		fd.Go(workers, int64(offered), func(i int64) {
			r := p.floodRequest(tok, fmt.Sprintf("flood-pub-%d-", fl), fmt.Sprintf("flood-client-%d-", fl), home[fl].ListingID, i)
			switch {
			case r.status == http.StatusCreated:
				admitted.Add(1)
			case quotaShed(r):
				quota.Add(1)
				if refused[fl].Add(1) >= saturatedAfter && refused[1-fl].Load() >= saturatedAfter {
					fd.Saturate()
				}
			default:
				other.Add(1)
				sample.LoadOrStore(r.status, string(r.body))
			}
		})
	}
	<-fd.Saturated()
	// The victims work while the flood goes on, each tenant from its own
	// goroutine.
	var ok, total atomic.Int64
	var mu sync.Mutex
	var failed []string
	var vw sync.WaitGroup
	for i := flooders; i < tenants; i++ {
		vw.Add(1)
		go func() {
			defer vw.Done()
			try := func(r httpReply) {
				total.Add(1)
				if r.status == http.StatusCreated {
					ok.Add(1)
					return
				}
				mu.Lock()
				failed = append(failed, fmt.Sprintf("tenant %d: %d %s", i, r.status, r.body))
				mu.Unlock()
			}
			for j := range victimPubs {
				s := fmt.Sprintf("pub-%d-%d", i, j)
				try(p.call("POST", "/v1/listings", tok[s], listingBody(s), "Idempotency-Key", s))
			}
			for j := range victimJoins {
				try(p.joinAs(tok[fmt.Sprintf("client-%d-%d", i, j)], fmt.Sprintf("victim-join-%d-%d", i, j), home[i].ListingID))
			}
		}()
	}
	vw.Wait()
	fd.Wait()

	pct := 100 * float64(ok.Load()) / float64(total.Load())
	t.Logf("fair shares over HTTP, %d tenants: victims %d/%d publishes and joins succeeded (%.1f%%) while %d tenants offered %d requests each (%dx the pools): %d admitted, %d answered 429, %d other",
		tenants, ok.Load(), total.Load(), pct, flooders, offered, overload, admitted.Load(), quota.Load(), other.Load())
	if pct < 99 {
		t.Fatalf("victim tenants starved: %.1f%% succeeded: %v", pct, failed)
	}
	if other.Load() != 0 {
		var seen []string
		sample.Range(func(k, v any) bool { seen = append(seen, fmt.Sprintf("%v %v", k, v)); return true })
		t.Fatalf("flooders got %d answers other than 201 and 429 quota_exceeded: %v", other.Load(), seen)
	}
}
