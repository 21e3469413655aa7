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
	at      time.Time // when the check began; zero: no answer yet
	revoked bool
	busy    chan struct{} // closed when the check in progress ends; nil: none
}

func newMonitorRevocations(maxAge time.Duration) *monitorRevocations {
	return &monitorRevocations{maxAge: maxAge, checked: make(map[engine.Subject]revocationAnswer)}
}

// revoked is check(subject) at most maxAge ago. A check in progress is
// shared: the scrapes that arrive meanwhile wait for its answer rather
// than each asking the store. A check that failed is not kept: the next
// request asks again.
func (m *monitorRevocations) revoked(subject engine.Subject, check func() (bool, error)) (bool, error) {
	m.mu.Lock()
	a := m.checked[subject]
	for a.busy != nil || !a.at.IsZero() && time.Since(a.at) < m.maxAge {
		if a.busy == nil {
			m.mu.Unlock()
			return a.revoked, nil
		}
		busy := a.busy
		m.mu.Unlock()
		<-busy
		m.mu.Lock()
		a = m.checked[subject]
	}
	busy := make(chan struct{})
	a.busy = busy
	m.checked[subject] = a
	m.mu.Unlock()

	at := time.Now()
	revoked, err := check()
	m.mu.Lock()
	a = m.checked[subject]
	a.busy = nil
	if err == nil {
		a.at, a.revoked = at, revoked
	}
	m.checked[subject] = a
	m.mu.Unlock()
	close(busy)
	return revoked, err
}
