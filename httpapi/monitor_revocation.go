package httpapi

import (
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// monitorRevocations answers the revocation check of the monitoring reads
// (GET /metrics on the API listener, GET /v1/admin/stats) from an answer at
// most maxAge old per principal, as their figures are (StoreStats): scrapes
// at any rate then cost a shared store at most one call per maxAge for the
// figures and one per scraping principal for its revocation, instead of one
// per scrape. A revocation reaches these read-only routes within maxAge;
// every other route checks it on each request. Only global operators reach
// them, so the map holds at most the principals file's global operators.
type monitorRevocations struct {
	maxAge time.Duration

	mu      sync.Mutex
	checked map[engine.Subject]revocationAnswer
}

type revocationAnswer struct {
	at      time.Time
	revoked bool
}

func newMonitorRevocations(maxAge time.Duration) *monitorRevocations {
	return &monitorRevocations{maxAge: maxAge, checked: make(map[engine.Subject]revocationAnswer)}
}

// revoked is check(subject) at most maxAge ago. A check that failed is not
// kept: the next request asks again.
func (m *monitorRevocations) revoked(subject engine.Subject, check func() (bool, error)) (bool, error) {
	m.mu.Lock()
	a, ok := m.checked[subject]
	m.mu.Unlock()
	if ok && time.Since(a.at) < m.maxAge {
		return a.revoked, nil
	}
	at := time.Now()
	revoked, err := check()
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	m.checked[subject] = revocationAnswer{at: at, revoked: revoked}
	m.mu.Unlock()
	return revoked, nil
}
