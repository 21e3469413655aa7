package httpapi

import (
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// Concurrent creations with one idempotency key make one listing: one 201,
// every other answer a 200 replay of the same body.
func TestConcurrentIdempotentCreate(t *testing.T) {
	h := newHarness(t, testLimits())
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	bodies := make([]string, n)
	replays := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rq := fasthttp.AcquireRequest()
			rs := fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(rq)
			defer fasthttp.ReleaseResponse(rs)
			rq.Header.SetMethod("POST")
			rq.SetRequestURI("http://rendezvous.test/v1/listings")
			rq.Header.Set("Authorization", "Bearer "+tokPub)
			rq.Header.Set("Idempotency-Key", "same")
			rq.Header.SetContentType("application/json")
			rq.SetBodyString(validCreateBody)
			errs[i] = h.client.Do(rq, rs)
			statuses[i], bodies[i] = rs.StatusCode(), string(rs.Body())
			replays[i] = string(rs.Header.Peek("Idempotent-Replay"))
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		switch {
		case statuses[i] == 201 && replays[i] == "":
			created++
		case statuses[i] == 200 && replays[i] == "true":
		default:
			t.Fatalf("request %d: %d replay=%q %s", i, statuses[i], replays[i], bodies[i])
		}
		if bodies[i] != bodies[0] {
			t.Fatalf("answers differ:\n%s\n%s", bodies[i], bodies[0])
		}
	}
	if created != 1 {
		t.Fatalf("%d creations, want 1", created)
	}
	if st := h.store.Stats(); st.Pools[0].Used != 1 {
		t.Fatalf("%d listings stored, want 1", st.Pools[0].Used)
	}
	if err := h.store.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
