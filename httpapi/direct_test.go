package httpapi

import (
	"context"
	"net/netip"
	"strconv"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
	"github.com/valyala/fasthttp"
)

// direct is an API on a MemStore, driven by calling Handler on a prepared
// RequestCtx (no network), for allocation guards and handler benchmarks.
type direct struct {
	api   *API
	store *memstore.Store
	keys  *engine.Keyring
	clock *engine.ManualClock
}

func newDirect(tb testing.TB, l engine.Limits) *direct {
	tb.Helper()
	d := &direct{keys: engine.RandomKeyring(), clock: engine.NewManualClock()}
	st, err := memstore.New(l, d.clock, d.keys)
	if err != nil {
		tb.Fatal(err)
	}
	d.store = st
	d.api, err = New(Config{Store: st, Keys: d.keys, Limits: l, Principals: testPrincipals(tb), MediatorAddr: "127.0.0.1:3478", Metrics: metrics.NewSet()})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// fill adds n visible public listings of tenant demo/dev, protocol 7, owned
// by owners of at most quota listings each, straight through the store.
func (d *direct) fill(tb testing.TB, n, quota int) []engine.ListingView {
	tb.Helper()
	views := make([]engine.ListingView, 0, n)
	for i := range n {
		spec := engine.ListingSpec{
			Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "Host " + strconv.Itoa(i),
			Visibility: engine.Public, TrustMode: engine.ManagedDedicated, CurrentPlayers: 1, MaxPlayers: 8,
			Metadata: []engine.MetaEntry{{Key: "map", Value: "harbour"}, {Key: "mode", Value: "coop"}},
		}
		owner := engine.Subject("pub-1")
		if i >= quota {
			owner = engine.Subject("owner-" + strconv.Itoa(i/quota))
		}
		v, r, err := d.store.CreateListing(context.Background(), engine.CreateListing{
			Tenant: testTenant, Owner: owner, IdempotencyKey: "fill-" + strconv.Itoa(i), Spec: spec, Doc: listingDoc(&spec),
		})
		if err != nil || !r.OK() {
			tb.Fatalf("fill %d: %v %v", i, r.Outcome, err)
		}
		pc := d.keys.Presence(v.Presence)
		_, r, err = d.store.BindHostPresence(context.Background(), engine.BindPresence{
			Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: 1,
			Public: netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)}), 40000),
		})
		if err != nil || !r.OK() {
			tb.Fatalf("fill presence %d: %v %v", i, r.Outcome, err)
		}
		views = append(views, v)
	}
	return views
}

func newCtx(method, uri, token string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.Set("Authorization", "Bearer "+token)
	return &ctx
}

// renewBody writes a renew body for version into buf.
func renewBody(buf []byte, v *engine.ListingView, token []byte, version uint64) []byte {
	buf = append(buf[:0], `{"lease_id":"`...)
	buf = v.Lease.AppendText(buf)
	buf = append(buf, `","lease_token":"`...)
	buf = append(buf, token...)
	buf = append(buf, `","expected_version":`...)
	buf = strconv.AppendUint(buf, version, 10)
	return append(buf, `,"current_players":3}`...)
}

// renewer is the renewal of v's lease by its owner, pub-1: each call sends
// the next expected version (from 1) and returns the answered request.
func (d *direct) renewer(v *engine.ListingView) func() *fasthttp.RequestCtx {
	lc := d.keys.Lease(v.Lease)
	tok := lc.AppendToken(nil)
	ctx := newCtx("PUT", "/v1/listings/"+v.ID.String()+"/lease", tokPub)
	ctx.Request.Header.SetContentType("application/json")
	var body []byte
	version := uint64(1)
	return func() *fasthttp.RequestCtx {
		body = renewBody(body, v, tok, version)
		ctx.Request.SetBody(body)
		ctx.Response.Reset()
		d.api.Handler(ctx)
		version++
		return ctx
	}
}

// Handler itself enforces the body limit when a server does not.
func TestHandlerBodyLimit(t *testing.T) {
	d := newDirect(t, engine.DefaultLimits())
	before := d.store.Snapshot()
	ctx := newCtx("POST", "/v1/listings", tokPub)
	ctx.Request.Header.SetContentType("application/json")
	ctx.Request.Header.Set("Idempotency-Key", "big")
	ctx.Request.SetBody(make([]byte, MaxBodySize+1))
	d.api.Handler(ctx)
	if ctx.Response.StatusCode() != 413 || string(ctx.Response.Header.ContentType()) != "application/problem+json" {
		t.Fatalf("oversized body: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if d.store.Snapshot() != before {
		t.Fatal("an oversized body changed the store")
	}
}
