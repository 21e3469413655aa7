package storetest

import (
	"fmt"
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
)

// The reference fixture's tenant, endpoints and listing fields.
var (
	tenant      = engine.Tenant{Game: "space-game", Env: "test"}
	otherTenant = engine.Tenant{Game: "other-game", Env: "test"}
)

// pub is a documentation-range public endpoint (203.0.113.10:port).
func pub(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("203.0.113.10"), port)
}

// otherPub is a second public endpoint (198.51.100.20:port).
func otherPub(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("198.51.100.20"), port)
}

// lan is a private LAN endpoint (192.168.1.20:port).
func lan(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("192.168.1.20"), port)
}

// spec is the reference fixture's listing.
func spec() engine.ListingSpec { return Spec() }

// Spec is the reference fixture's listing, for tests of a store outside
// this suite as well.
func Spec() engine.ListingSpec {
	return engine.ListingSpec{
		Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3",
		DisplayName: "Test host", Visibility: engine.Public, TrustMode: engine.ManagedDedicated,
		CurrentPlayers: 1, MaxPlayers: 8,
		Metadata: []engine.MetaEntry{{Key: "mode", Value: "coop"}},
	}
}

// listingCmd is a fresh registration of owner with a unique idempotency key.
func (e *env) listingCmd(owner engine.Subject) engine.CreateListing {
	e.seq++
	return engine.CreateListing{
		Tenant: tenant, Owner: owner, IdempotencyKey: fmt.Sprintf("register-%d", e.seq),
		Spec: spec(), Doc: []byte(fmt.Sprintf(`{"n":%d}`, e.seq)),
	}
}

// attemptCmd is a fresh join of v by client with a unique idempotency key.
func (e *env) attemptCmd(v engine.ListingView, client engine.Subject) engine.CreateAttempt {
	e.seq++
	return engine.CreateAttempt{
		Tenant: v.Tenant, Client: client, IdempotencyKey: fmt.Sprintf("join-%d", e.seq),
		Listing: v.ID, ProtocolVersion: v.Spec.ProtocolVersion,
	}
}

// Fingerprints computed the way the store must compute them.
func (e *env) leaseKey(id engine.LeaseID) engine.Fingerprint { return Keys{e.k}.Lease(id) }

func (e *env) presenceKey(h engine.Handle) engine.Fingerprint { return Keys{e.k}.Presence(h) }

func (e *env) clientKey(attempt engine.Handle) engine.Fingerprint { return Keys{e.k}.Client(attempt) }

func (e *env) hostKey(presence, attempt engine.Handle) engine.Fingerprint {
	return Keys{e.k}.Host(presence, attempt)
}

// create registers a listing and requires a fresh (non-replay) Success.
func (e *env) create(cmd engine.CreateListing) engine.ListingView {
	e.t.Helper()
	v, r, err := e.s.CreateListing(e.ctx, cmd)
	e.wantFresh("CreateListing", r, err)
	return v
}

// wantFresh requires op's fresh (non-replay) Success, then the invariants.
func (e *env) wantFresh(op string, r engine.Result, err error) {
	e.t.Helper()
	e.want(op, r, err, engine.Success)
	if r.Replay {
		e.t.Fatalf("%s: a fresh creation reported Replay", op)
	}
	e.check()
}

// visible registers a listing of owner and binds its presence at pub(40000), seq 1.
func (e *env) visible(owner engine.Subject) engine.ListingView {
	e.t.Helper()
	v := e.create(e.listingCmd(owner))
	e.presence(v, 1, pub(40000))
	v2, r, err := e.s.GetListing(e.ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID, Joinable: true})
	e.want("GetListing", r, err, engine.Success)
	return v2
}

// presenceCmd is a heartbeat for v's presence handle.
func (e *env) presenceCmd(v engine.ListingView, seq uint64, public netip.AddrPort) engine.BindPresence {
	return engine.BindPresence{Handle: v.Presence, Key: e.presenceKey(v.Presence), Seq: seq, Public: public}
}

// presence refreshes v's presence and requires Success.
func (e *env) presence(v engine.ListingView, seq uint64, public netip.AddrPort) engine.PresenceView {
	e.t.Helper()
	pv, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(v, seq, public))
	e.want("BindHostPresence", r, err, engine.Success)
	e.check()
	return pv
}

// attempt creates a join attempt on v by client and requires a fresh Success.
func (e *env) attempt(v engine.ListingView, client engine.Subject) engine.AttemptView {
	e.t.Helper()
	a, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, client))
	e.want("CreateJoinAttempt", r, err, engine.Success)
	if r.Replay {
		e.t.Fatalf("CreateJoinAttempt: fresh attempt reported Replay")
	}
	e.check()
	return a
}

// bindCmd binds role's endpoint of attempt a with the right capability.
func (e *env) bindCmd(a engine.AttemptView, role engine.Role, public, local netip.AddrPort) engine.BindAttempt {
	return Keys{e.k}.Bind(a, role, public, local)
}

// bind binds an endpoint and returns the outcome.
func (e *env) bind(cmd engine.BindAttempt) (engine.AttemptView, engine.Result) {
	e.t.Helper()
	av, r, err := e.s.BindAttemptEndpoint(e.ctx, cmd)
	if err != nil {
		e.t.Fatalf("BindAttemptEndpoint: unexpected error %v", err)
	}
	e.check()
	return av, r
}

// get reads a listing (any presence state) of tenant.
func (e *env) get(id engine.ListingID, joinable bool) (engine.ListingView, engine.Result) {
	e.t.Helper()
	v, r, err := e.s.GetListing(e.ctx, engine.GetListing{Tenant: tenant, Listing: id, Joinable: joinable})
	if err != nil {
		e.t.Fatalf("GetListing: unexpected error %v", err)
	}
	return v, r
}

// wantGet requires GetListing(id, joinable) to give o.
func (e *env) wantGet(id engine.ListingID, joinable bool, o engine.Outcome) engine.ListingView {
	e.t.Helper()
	v, r := e.get(id, joinable)
	if r.Outcome != o {
		e.t.Fatalf("GetListing(joinable=%v) = %v, want %v", joinable, r.Outcome, o)
	}
	return v
}

func (e *env) renewCmd(v engine.ListingView) engine.RenewLease {
	return engine.RenewLease{
		Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease,
		LeaseKey: e.leaseKey(v.Lease), ExpectedVersion: v.Version, CurrentPlayers: -1,
	}
}

func (e *env) deleteCmd(v engine.ListingView) engine.DeleteListing {
	return engine.DeleteListing{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease, LeaseKey: e.leaseKey(v.Lease)}
}

// pool returns the Stats of one global pool.
func (e *env) pool(p engine.Pool) engine.PoolStat { return e.s.Stats().Pools[p-1] }

func (e *env) wantUsed(p engine.Pool, n int) {
	e.t.Helper()
	if got := e.pool(p).Used; got != n {
		e.t.Fatalf("Stats pool %v used = %d, want %d", p, got, n)
	}
}

func fmtStats(st engine.Stats) string {
	return fmt.Sprintf("instance=%v available=%v draining=%v pools=%v inflight=%d",
		st.InstanceID, st.Available, st.Draining, st.Pools, st.InFlight)
}

type netipAddrPort = netip.AddrPort

func mustAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
