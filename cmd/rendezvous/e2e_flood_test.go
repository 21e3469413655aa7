package main

import (
	"bytes"
	"fmt"
	"net/http"
)

// The requests of the fairness tests' floods (e2e_fairness_test.go,
// e2e_fairshares_test.go); internal/flood runs them.

// joinAs asks for a join attempt on listing with token, whatever the answer.
func (p *proc) joinAs(token, key, listing string) httpReply {
	return p.call("POST", "/v1/listings/"+listing+"/join-attempts", token, map[string]any{"protocol_version": 7},
		"Idempotency-Key", key)
}

// floodRequest is request i of one tenant's flood: an even i publishes a
// listing as subject pubs+N, an odd i joins listing as subject clients+N
// (N = i/2), each a new principal with its own idempotency key; tok holds
// their tokens.
func (p *proc) floodRequest(tok map[string]string, pubs, clients, listing string, i int64) httpReply {
	if i%2 == 0 {
		s := fmt.Sprint(pubs, i/2)
		return p.call("POST", "/v1/listings", tok[s], listingBody(s), "Idempotency-Key", s)
	}
	return p.joinAs(tok[fmt.Sprint(clients, i/2)], fmt.Sprint(clients, "join-", i), listing)
}

// quotaShed reports whether r is the typed refusal of a tenant or principal
// share: 429 quota_exceeded with Retry-After.
func quotaShed(r httpReply) bool {
	return r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") != "" &&
		bytes.Contains(r.body, []byte(`"code":"quota_exceeded"`))
}
