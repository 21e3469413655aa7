package storetest

import (
	"cmp"
	"net/netip"
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// model is the contract written as the simplest possible bookkeeping: the
// randomized test predicts every outcome from it and compares the store's
// observable state with it after every step.
type model struct {
	e        *env
	now      time.Duration
	listings []*mListing
	attempts []*mAttempt
	idem     map[string]*mIdem
	replay   map[string]time.Duration
	revoked  map[engine.Subject]time.Duration

	draining    bool
	drainAt     time.Duration
	unavailable bool
	order       int

	relay bool        // the store has the relay fallback (model_relay.go)
	query bool        // the store has attributes and the Full refusal
	tombs []*mAttempt // ended attempts whose tombstone the model holds
}

type mListing struct {
	v              engine.ListingView // as created: IDs, tenant, owner, spec
	alive          bool
	version        uint64
	players        int
	attrs          engine.Attributes
	leaseAt        time.Duration
	presAt         time.Duration // fresh while presAt > now
	seq            uint64
	public, local  netip.AddrPort
	createdInOrder int
}

type mAttempt struct {
	a          engine.AttemptView
	l          *mListing
	alive      bool
	at         time.Duration
	host, peer engine.Binding
	consumed   bool
	order      int
	relay      mRelay // model_relay.go
}

type mIdem struct {
	request string
	listing *mListing
	attempt *mAttempt
	at      time.Duration
	by      engine.Subject // the creator: counted in its share
}

// subjectIdem is how many idempotency records subject s's creations hold.
func (m *model) subjectIdem(s engine.Subject) int {
	n := 0
	for _, r := range m.idem {
		if r.by == s {
			n++
		}
	}
	return n
}

func newModel(e *env) *model {
	return &model{e: e, idem: map[string]*mIdem{}, replay: map[string]time.Duration{}, revoked: map[engine.Subject]time.Duration{}}
}

// expire applies every deadline that has passed, as a store's cleanup does at
// the start of each operation.
func (m *model) expire() {
	m.now = m.e.c.Now()
	if m.draining && m.now >= m.drainAt {
		for _, l := range m.listings {
			m.kill(l, engine.EndDrained, m.drainAt)
		}
		clear(m.idem)
		clear(m.replay)
	}
	for s, at := range m.revoked {
		if at <= m.now {
			delete(m.revoked, s)
		}
	}
	for k, at := range m.replay {
		if at <= m.now {
			delete(m.replay, k)
		}
	}
	for k, r := range m.idem {
		if r.at <= m.now {
			delete(m.idem, k)
		}
	}
	for _, a := range m.attempts {
		if a.alive && a.at <= m.now {
			m.end(a, engine.EndExpired, a.at)
		}
	}
	// Leases end in deadline order, as a store's schedule has them.
	var lapsed []*mListing
	for _, l := range m.listings {
		if l.alive && l.leaseAt <= m.now {
			lapsed = append(lapsed, l)
		}
	}
	slices.SortStableFunc(lapsed, func(a, b *mListing) int { return cmp.Compare(a.leaseAt, b.leaseAt) })
	for _, l := range lapsed {
		m.kill(l, engine.EndLeaseExpired, l.leaseAt)
	}
}

// kill removes a listing with its presence and every attempt on it, ended
// by cause at the given time.
func (m *model) kill(l *mListing, cause engine.AttemptEnd, at time.Duration) {
	l.alive = false
	for _, a := range m.attempts {
		if a.l == l && a.alive {
			m.end(a, cause, at)
		}
	}
}

func (l *mListing) fresh(now time.Duration) bool { return l.alive && l.presAt > now }

func (m *model) counts() (listings, presence, attempts, inflight int) {
	for _, l := range m.listings {
		if l.alive {
			listings++
			if l.presAt > m.now {
				presence++
			}
		}
	}
	for _, a := range m.attempts {
		if a.alive {
			attempts++
			if !a.consumed && !a.relay.relayed {
				inflight++
			}
		}
	}
	return
}

func (m *model) ownerListings(o engine.Subject) int {
	n := 0
	for _, l := range m.listings {
		if l.alive && l.v.Owner == o {
			n++
		}
	}
	return n
}

// listingQuota is the quota a new listing of owner would exceed, or
// PoolNone, in the contract's order: the principal's own quota, then its
// tenant's (the model has one tenant).
func (m *model) listingQuota(owner engine.Subject) engine.Pool {
	nl, _, _, _ := m.counts()
	return m.quotaFull(owner, m.ownerListings(owner), m.e.l.OwnerListingQuota, engine.QuotaOwnerListings,
		nl, m.e.l.TenantListingQuota, engine.QuotaTenantListings)
}

// quotaFull is the first quota a new record would exceed, in the
// contract's order: the principal's own (mine records of ownQuota), its
// share of idempotency records, its tenant's (tenant records of
// tenantQuota), then the tenant's share of idempotency records; PoolNone
// when none is.
func (m *model) quotaFull(subject engine.Subject, mine, ownQuota int, own engine.Pool, tenant, tenantQuota int, tenantPool engine.Pool) engine.Pool {
	switch {
	case mine >= ownQuota:
		return own
	case m.subjectIdem(subject) >= m.e.l.SubjectIdempotencyQuota:
		return engine.QuotaSubjectIdempotency
	case tenant >= tenantQuota:
		return tenantPool
	case len(m.idem) >= m.e.l.TenantIdempotencyQuota:
		return engine.QuotaTenantIdempotency
	}
	return engine.PoolNone
}

// attemptQuota is listingQuota for a new attempt of client.
func (m *model) attemptQuota(client engine.Subject) engine.Pool {
	_, _, na, _ := m.counts()
	mine := 0
	for _, a := range m.attempts {
		if a.alive && a.a.Client == client {
			mine++
		}
	}
	return m.quotaFull(client, mine, m.e.l.SubjectAttemptQuota, engine.QuotaSubjectAttempts,
		na, m.e.l.TenantAttemptQuota, engine.QuotaTenantAttempts)
}

// pending is the model's list of unbound-host attempts on l, oldest first.
func (m *model) pending(l *mListing) []engine.Handle {
	var hs []engine.Handle
	for _, a := range m.attempts {
		if a.alive && a.l == l && !a.host.Bound() {
			hs = append(hs, a.a.Handle)
		}
	}
	if len(hs) > engine.PendingOffersMax {
		hs = hs[:engine.PendingOffersMax]
	}
	return hs
}

// visible is the model's browse answer for q (before paging).
func (m *model) visible(q engine.Browse) []*mListing {
	var ls []*mListing
	for _, l := range m.listings {
		if l.fresh(m.now) && l.v.Tenant == q.Tenant && l.v.Spec.ProtocolVersion == q.ProtocolVersion &&
			l.v.Spec.Visibility == engine.Public && (q.Region == "" || q.Region == l.v.Spec.Region) &&
			(!q.HasAfter || l.v.ID.Compare(q.After.UUID) > 0) {
			ls = append(ls, l)
		}
	}
	slices.SortFunc(ls, func(a, b *mListing) int { return a.v.ID.Compare(b.v.ID.UUID) })
	return ls
}

// verify compares the store's observable state with the model.
func (m *model) verify() {
	t, e := m.e.t, m.e
	t.Helper()
	m.expire()
	for _, l := range m.listings {
		v, r, err := e.s.GetListing(e.ctx, engine.GetListing{Tenant: l.v.Tenant, Listing: l.v.ID})
		if err != nil {
			t.Fatalf("GetListing: %v", err)
		}
		if !l.alive {
			if r.Outcome != engine.NotFound {
				t.Fatalf("model: listing #%d is gone; store GetListing = %v", l.createdInOrder, r.Outcome)
			}
			continue
		}
		if r.Outcome != engine.Success {
			t.Fatalf("model: listing #%d is alive; store GetListing = %v", l.createdInOrder, r.Outcome)
		}
		fresh := l.presAt > m.now
		if !v.Attributes.Equal(l.attrs) {
			t.Fatalf("listing #%d: store attributes %v, model %v", l.createdInOrder, v.Attributes, l.attrs)
		}
		if v.Version != l.version || v.CurrentPlayers != l.players || v.PresenceFresh != fresh ||
			(fresh && (v.HostPublic != l.public || v.HostLocal != l.local)) || v.Lease != l.v.Lease || v.Presence != l.v.Presence {
			t.Fatalf("listing #%d: store version %d players %d fresh %v public %v; model %d %d %v %v",
				l.createdInOrder, v.Version, v.CurrentPlayers, v.PresenceFresh, v.HostPublic, l.version, l.players, fresh, l.public)
		}
	}
	for _, a := range m.attempts {
		h, ok := e.s.AttemptHost(a.a.Handle)
		if ok != a.alive || (ok && h != a.l.v.Presence) {
			t.Fatalf("attempt #%d: AttemptHost ok=%v, model alive=%v", a.order, ok, a.alive)
		}
		m.verifyStatus(a)
	}
	nl, np, na, nf := m.counts()
	st := e.s.Stats()
	want := [engine.NumGlobalPools]int{nl, np, na, len(m.replay), len(m.revoked), len(m.idem)}
	for i, w := range want {
		if st.Pools[i].Used != w {
			t.Fatalf("Stats pool %v used %d, model %d", engine.Pool(i+1), st.Pools[i].Used, w)
		}
	}
	if st.InFlight != nf || st.Draining != m.draining || !st.Available {
		t.Fatalf("Stats inflight %d draining %v; model %d %v", st.InFlight, st.Draining, nf, m.draining)
	}
	// Every record of the model is in one tenant, so its usage is the pools'.
	if u := e.s.TenantUsage(tenant); u.Listings.Used != nl || u.Attempts.Used != na || u.Idempotency.Used != len(m.idem) {
		t.Fatalf("TenantUsage %+v; model listings %d attempts %d idempotency %d", u, nl, na, len(m.idem))
	}
}
