package httpapi

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/valyala/fasthttp"
)

// On the Redis store, browse, a listing read and an attempt's status
// decide their caller's revocation in the one call they make
// (revocation_reads.go); every other answer they give still loses to 403
// revoked, and a revocation acknowledged by one instance refuses the next
// request on every other.

// redisPair runs two APIs, two instances of one deployment on one Redis
// store, and returns them with the client connected to it.
func redisPair(t *testing.T) (a, b *harness, c rueidis.Client) {
	t.Helper()
	c, instance := redisDeployment(t)
	return instance(), instance(), c
}

// redisDeployment connects to a redis-server of the test's own and returns
// the client and a function that starts an API on another instance (a
// store) of one deployment there.
func redisDeployment(t *testing.T) (rueidis.Client, func() *harness) {
	t.Helper()
	b := newRedisBacking(t)
	return b.client, func() *harness {
		t.Helper()
		st, err := redisstore.New(context.Background(), redisstore.Config{Client: b.client, Limits: b.limits, Keyring: b.keys})
		if err != nil {
			t.Fatalf("redisstore.New: %v", err)
		}
		return b.harness(t, st)
	}
}

// readRoutes are the read requests of the test: browse and a listing read
// as token, an attempt's status as the client that made it.
func readRoutes(l listing, attempt string) []struct {
	name string
	q    req
} {
	return []struct {
		name string
		q    req
	}{
		{"browse", req{method: "GET", path: "/v1/listings?protocol_version=7&limit=100"}},
		{"get listing", req{method: "GET", path: "/v1/listings/" + l.id}},
		{"attempt status", req{method: "GET", path: "/v1/join-attempts/" + attempt}},
	}
}

// joined makes a join attempt as tokCli on l and returns its ID.
func (h *harness) joined(l listing, key string) string {
	h.t.Helper()
	j := h.expect(req{method: "POST", path: "/v1/listings/" + l.id + "/join-attempts", token: tokCli,
		body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", key}}, 201, "")
	h.secrets = append(h.secrets, j.str("token"))
	return j.str("attempt_id")
}

// TestRedisReadsAreOneCallEach: on the Redis store a browse page, a
// listing read and an attempt's status each cost one Redis function call,
// which also decides revocation, whether the caller is revoked or not.
func TestRedisReadsAreOneCallEach(t *testing.T) {
	h, c := redisHarness(t)
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	attempt := h.joined(l, "one-call")
	h.expect(req{method: "GET", path: "/v1/listings?protocol_version=7", token: tokCli}, 200, "") // builds the instance's index
	// An instance's registration renewal can land in a window: one of
	// three tries must show exactly the request's call.
	counted := func(name string, q req, status int, code string) {
		t.Helper()
		var calls []float64
		for range 3 {
			before := functionCalls(t, c)
			h.expect(q, status, code)
			n := functionCalls(t, c) - before
			if n == 1 {
				return
			}
			calls = append(calls, n)
		}
		t.Errorf("%s: %v Redis function calls in three tries, want 1", name, calls)
	}
	for _, r := range readRoutes(l, attempt) {
		r.q.token = tokCli
		counted(r.name, r.q, 200, "")
	}
	h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokGlobalOp, body: `{"subject":"cli-1","ttl_s":60}`}, 200, "")
	for _, r := range readRoutes(l, attempt) {
		r.q.token = tokCli
		counted(r.name+", revoked", r.q, 403, "revoked")
	}
}

// TestRevokedBeforeEveryOtherAnswerOfTheReadRoutes: on both stores, a
// revoked principal's browse, listing read and attempt status, valid or
// refused for any later reason (role, 400, 404), answer the same 403
// revoked as a route checked before its operation.
func TestRevokedBeforeEveryOtherAnswerOfTheReadRoutes(t *testing.T) {
	onBothStores(t, readsRevokedFirst)
}

// onBothStores runs check on an API on the memory store, then on one on
// the Redis store.
func onBothStores(t *testing.T, check func(*testing.T, *harness)) {
	t.Run("memory", func(t *testing.T) { check(t, newHarness(t, testLimits())) })
	t.Run("redis", func(t *testing.T) {
		h, _ := redisHarness(t)
		check(t, h)
	})
}

func readsRevokedFirst(t *testing.T, h *harness) {
	l := h.visible(tokPub2, listingBody("eu", 7, "public"))
	attempt := h.joined(l, "revoked-first")
	h.expect(req{method: "GET", path: "/v1/listings?protocol_version=7", token: tokCli}, 200, "")
	h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokOp, body: `{"subject":"pub-1","ttl_s":60}`}, 200, "")
	h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokGlobalOp, body: `{"subject":"cli-1","ttl_s":60}`}, 200, "")
	want := h.expect(req{method: "GET", path: "/v1/whoami", token: tokPub}, 403, "revoked").body
	for _, c := range []struct {
		name, token, path string
	}{
		{"browse", tokPub, "/v1/listings?protocol_version=7&limit=100"},
		{"browse, no protocol_version", tokPub, "/v1/listings"},
		{"browse, limit 0", tokCli, "/v1/listings?protocol_version=7&limit=0"},
		{"browse, unknown parameter", tokCli, "/v1/listings?protocol_version=7&x=1"},
		{"get listing", tokCli, "/v1/listings/" + l.id},
		{"get listing, unknown", tokPub, "/v1/listings/00000000-0000-4000-8000-000000000000"},
		{"get listing, malformed ID", tokPub, "/v1/listings/x"},
		{"attempt status", tokCli, "/v1/join-attempts/" + attempt},
		{"attempt status, another's", tokPub, "/v1/join-attempts/" + attempt},
		{"attempt status, malformed ID", tokCli, "/v1/join-attempts/x"},
	} {
		r := h.do(req{method: "GET", path: c.path, token: c.token})
		if r.status != 403 || string(r.body) != string(want) {
			t.Errorf("%s: %d %s, want the 403 revoked of a route checked first: %s", c.name, r.status, r.body, want)
		}
	}
	// Others of the tenant read on.
	h.expect(req{method: "GET", path: "/v1/listings/" + l.id, token: tokPub2}, 200, "")
	h.expect(req{method: "GET", path: "/v1/listings?protocol_version=7", token: tokPub2}, 200, "")
}

// TestRedisRevocationOnOneInstanceRefusesTheNextRequestOnAnother: a
// principal revoked through instance a gets 403 revoked from instance b on
// its very next browse, listing read and attempt status, also while other
// goroutines read on b as it throughout: every request begun after a
// acknowledged the revocation is refused. Once the revocation's deadline
// passes, b serves it again.
func TestRedisRevocationOnOneInstanceRefusesTheNextRequestOnAnother(t *testing.T) {
	a, b, _ := redisPair(t)
	l := a.visible(tokPub2, listingBody("eu", 7, "public"))
	attempt := a.joined(l, "two-instances")
	routes := readRoutes(l, attempt)
	for _, r := range routes {
		r.q.token = tokCli
		b.expect(r.q, 200, "") // b keeps its index from the first page on
	}
	// Readers on b, each on a connection of its own, as tokCli.
	var acked atomic.Bool
	var late atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return b.ln.Dial() }}
			rq, rs := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(rq)
			defer fasthttp.ReleaseResponse(rs)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := routes[(g+i)%len(routes)]
				rq.Reset()
				rq.SetRequestURI("http://rendezvous.test" + r.q.path)
				rq.Header.Set("Authorization", "Bearer "+tokCli)
				after := acked.Load()
				if err := cl.DoTimeout(rq, rs, 10*time.Second); err != nil {
					errs <- r.name + ": " + err.Error()
					return
				}
				st := rs.StatusCode()
				if after {
					late.Add(1)
					if st != 403 {
						errs <- r.name + " begun after the revocation was acknowledged: " + string(rs.Body())
						return
					}
				} else if st != 200 && st != 403 {
					errs <- r.name + ": " + string(rs.Body())
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	a.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokGlobalOp, body: `{"subject":"cli-1","ttl_s":1}`}, 200, "")
	acked.Store(true)
	for _, r := range routes {
		r.q.token = tokCli
		b.expect(r.q, 403, "revoked")
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if late.Load() == 0 {
		t.Fatal("no concurrent request began after the revocation: the test tests nothing")
	}
	// The revocation lasts a second (Redis's clock): then b serves cli-1.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := b.do(req{method: "GET", path: routes[0].q.path, token: tokCli})
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after a revocation of 1 s, b still answers %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, r := range routes[1:] {
		r.q.token = tokCli
		b.expect(r.q, 200, "")
	}
}
