package main

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/internal/flood"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestE2ETenantStarvation runs the real server with small pools and the
// default quotas (shares of those pools): an attacker tenant offers ten
// times the listing and attempt pools over HTTP from many goroutines and a
// new principal per request; once it holds its whole share, a victim
// tenant's in-quota publishes and joins must all succeed, and the attacker
// must be shed only with 429 quota_exceeded (never a 503 pool answer).
func TestE2ETenantStarvation(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		const (
			pools     = 40 // listings and attempts; idempotency 2x
			overload  = 10
			attackers = 8
			victimPub = 4
			victimJn  = 8 // over 3 clients: within the per-principal share (4)
		)
		offered := overload * 2 * pools
		subjects := map[string][3]string{"victim-pub": {"victim", "prod", "publisher"}, "attack-host": {"attack", "prod", "publisher"}}
		for i := range 3 {
			subjects[fmt.Sprintf("victim-client-%d", i)] = [3]string{"victim", "prod", "client"}
		}
		for i := range offered / 2 {
			subjects[fmt.Sprintf("attack-pub-%d", i)] = [3]string{"attack", "prod", "publisher"}
			subjects[fmt.Sprintf("attack-client-%d", i)] = [3]string{"attack", "prod", "client"}
		}
		file, tok := e2e.WritePrincipals(t, subjects)
		p := startProc(t, append(storeArgs, "--principals", file, "--max-listings", fmt.Sprint(pools), "--max-attempts", fmt.Sprint(pools),
			"--max-idempotency", fmt.Sprint(2*pools))...)

		// A fresh listing of each tenant to join.
		host := func(subject string) published {
			var pub published
			p.call("POST", "/v1/listings", tok[subject], listingBody(subject), "Idempotency-Key", subject+"-host").
				expect(t, "publish "+subject, http.StatusCreated, &pub)
			h, c := mustHandle(t, pub.Presence.Handle), mustToken(t, pub.Presence.Token)
			peer := newPeer(t, p.mediator)
			peer.expectResponse(peer.request(stun.KindPresence, h, &c, 1, hostLAN), &c)
			return pub
		}
		victimListing, attackListing := host("victim-pub"), host("attack-host")

		// The attacker's share: half the listing pool (one is its host's) and
		// half the attempt pool.
		share := int64(pools/2 - 1 + pools/2)
		var admitted, quota, other atomic.Int64
		fl := flood.New()
		fl.Go(attackers, int64(offered), func(i int64) {
			switch r := p.floodRequest(tok, "attack-pub-", "attack-client-", attackListing.ListingID, i); {
			case r.status == http.StatusCreated:
				if admitted.Add(1) == share {
					fl.Saturate()
				}
			case quotaShed(r):
				quota.Add(1)
			default:
				other.Add(1)
			}
		})
		<-fl.Saturated()
		var ok, total int
		var failed []string
		try := func(r httpReply) {
			total++
			if r.status == http.StatusCreated {
				ok++
			} else {
				failed = append(failed, fmt.Sprintf("%d %s", r.status, r.body))
			}
		}
		for i := range victimPub {
			try(p.call("POST", "/v1/listings", tok["victim-pub"], listingBody(fmt.Sprint("victim ", i)), "Idempotency-Key", fmt.Sprint("victim-", i)))
		}
		for i := range victimJn {
			try(p.joinAs(tok[fmt.Sprintf("victim-client-%d", i%3)], fmt.Sprint("victim-join-", i), victimListing.ListingID))
		}
		fl.Wait()

		t.Logf("tenant starvation over HTTP: victim %d/%d publishes and joins succeeded (%.1f%%) while the attacker offered %d requests (%dx the pools): %d admitted, %d answered 429",
			ok, total, 100*float64(ok)/float64(total), offered, overload, admitted.Load(), quota.Load())
		if ok != total {
			t.Fatalf("victim tenant starved: %d/%d succeeded: %v", ok, total, failed)
		}
		if other.Load() != 0 || admitted.Load() != share || quota.Load() != int64(offered)-share {
			t.Fatalf("attacker: %d admitted (want its share %d), %d quota answers, %d other answers", admitted.Load(), share, quota.Load(), other.Load())
		}
	})
}
