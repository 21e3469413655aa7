package httpapi

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/valyala/fasthttp"
)

// revocationCounter counts the revocation checks of authenticated
// requests, which are the store's (at most one call each) and not figures.
type revocationCounter struct {
	*redisstore.Store
	checks atomic.Int64
}

func (s *revocationCounter) Revoked(ctx context.Context, subject engine.Subject) (bool, error) {
	s.checks.Add(1)
	return s.Store.Revoked(ctx, subject)
}

func (s *revocationCounter) RevokedInTenant(ctx context.Context, t engine.Tenant, subject engine.Subject) (bool, error) {
	s.checks.Add(1)
	return s.Store.RevokedInTenant(ctx, t, subject)
}

// TestRedisScrapesCostAtMostOneCallASecond: 1,000 scrapes and probes
// (/metrics, /readyz, GET /v1/admin/stats), 25 at a time, against the API on
// a Redis store read the store's figures with at most one Redis function
// call per second of the run (plus the first): every reader shares the
// cached figures and their refresh. Without the cache, one /metrics scrape
// alone read the store for each of its twelve pool gauges. The two
// authenticated routes also share their caller's revocation check for as
// long (monitor_revocation.go): at most one more call a second for the one
// scraping operator, not one per scrape. /readyz and the unauthenticated
// metrics listener check none.
func TestRedisScrapesCostAtMostOneCallASecond(t *testing.T) {
	b := newRedisBacking(t)
	c, st := b.client, &revocationCounter{Store: b.store}
	h := b.harness(t, st)
	h.visible(tokPub, listingBody("eu", 7, "public"))
	paths := []struct{ path, token string }{
		{"/metrics", tokGlobalOp}, {"/readyz", ""}, {"/v1/admin/stats", tokGlobalOp},
	}
	const scrapes, workers = 1000, 25
	before, checksBefore := functionCalls(t, c), st.checks.Load()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, scrapes)
	for w := range workers {
		wg.Go(func() {
			rq, rs := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(rq)
			defer fasthttp.ReleaseResponse(rs)
			for i := w; i < scrapes; i += workers {
				p := paths[i%len(paths)]
				rq.Reset()
				rq.SetRequestURI("http://rendezvous.test" + p.path)
				if p.token != "" {
					rq.Header.Set("Authorization", "Bearer "+p.token)
				}
				if err := h.client.DoTimeout(rq, rs, 10*time.Second); err != nil || rs.StatusCode() != 200 {
					errs <- p.path + ": " + strconv.Itoa(rs.StatusCode()) + " " + string(rs.Body())
					return
				}
				if p.path == "/metrics" && !bytes.Contains(rs.Body(), []byte(`rendezvous_pool_used{pool="listings"} 1`)) {
					errs <- "/metrics does not count the one listing"
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	checks := float64(st.checks.Load() - checksBefore)
	calls := functionCalls(t, c) - before
	bound := 1 + float64(int(took/DefaultStoreStatsMaxAge))
	t.Logf("%d scrapes in %v: %v Redis function calls, for the store's figures and %v revocation checks (at most %v each)",
		scrapes, took.Round(time.Millisecond), calls, checks, bound)
	if checks < 1 || checks > bound {
		t.Fatalf("%v revocation checks in %v, want 1 to %v (one a second)", checks, took, bound)
	}
	if calls > 2*bound {
		t.Fatalf("%d scrapes in %v cost %v Redis function calls, want at most %v (one a second for the figures, one for the revocation)", scrapes, took, calls, 2*bound)
	}
	r := h.expect(req{method: "GET", path: "/metrics", token: tokGlobalOp}, 200, "")
	age, ok := promValue(r.body, metricStatsAge)
	if !ok || age < 0 || age > DefaultStoreStatsMaxAge.Seconds() {
		t.Fatalf("%s = %v (found %v), want within [0, %v]", metricStatsAge, age, ok, DefaultStoreStatsMaxAge.Seconds())
	}
}

// promValue is the value of the series named exactly series in a
// Prometheus text exposition.
func promValue(body []byte, series string) (float64, bool) {
	for line := range bytes.Lines(body) {
		name, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(" "))
		if ok && string(name) == series {
			f, err := strconv.ParseFloat(string(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestRedisReadinessFollowsAnOutage: cached figures do not hide an outage
// for long: with redis-server stopped (SIGSTOP: nothing answers), /readyz
// turns 503 unavailable within the figures' maximum age plus the store's
// call bound, and ready again within the maximum age (plus room) once it
// answers again.
func TestRedisReadinessFollowsAnOutage(t *testing.T) {
	b := newRedisBacking(t)
	h := b.harness(t, b.store)
	h.expect(req{method: "GET", path: "/readyz"}, 200, "")
	waitStatus := func(want int, body string, bound time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			r := h.do(req{method: "GET", path: "/readyz"})
			if r.status == want && string(r.body) == body {
				return time.Since(start)
			}
			if time.Since(start) > bound {
				t.Fatalf("/readyz still %d %s after %v, want %d %s", r.status, r.body, time.Since(start), want, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	resume := b.srv.PauseInTest(t)
	down := waitStatus(503, `{"status":"unavailable"}`, DefaultStoreStatsMaxAge+redisstore.DefaultTimeout+time.Second)
	t.Logf("/readyz unavailable %v after redis-server stopped", down.Round(time.Millisecond))
	resume()
	up := waitStatus(200, `{"status":"ready"}`, DefaultStoreStatsMaxAge+redisstore.DefaultTimeout+time.Second)
	t.Logf("/readyz ready %v after redis-server resumed", up.Round(time.Millisecond))
}
