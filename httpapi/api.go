// Package httpapi serves the REST API of docs/contracts/semantics.md#outcomes,
// docs/contracts/http.md#routes with fasthttp: routing, bearer authentication
// against a principals file, a strict JSON request codec, RFC 9457 problem
// answers, health and metrics endpoints. It makes no authorization decision the
// store should make: it parses, authenticates the caller, checks roles, and
// asks the store.
package httpapi

import (
	"cmp"
	"errors"
	"io"
	"log/slog"
	"strconv"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/turncred"
)

// Offerer tells a listing's host about a new join attempt over UDP (the
// OFFER of docs/contracts/udp.md#offer). netio.Mediator implements it. Offer is called
// on the request goroutine and must not block.
type Offerer interface{ Offer(v engine.AttemptView) }

// Config is what New needs. Store, Keys and Principals are required.
type Config struct {
	Store        engine.Store
	Keys         *engine.Keyring
	Limits       engine.Limits // for ttl_s values and quotas shown
	Principals   *Principals
	Offerer      Offerer // nil: no OFFER sent
	MediatorAddr string  // advertised "host:port"
	Logger       *slog.Logger
	Metrics      *metrics.Set // nil: a private set
	// WritePrometheus is what /metrics writes; nil: metrics.WritePrometheus(w, true).
	WritePrometheus func(w io.Writer)

	// Relay issues the TURN credentials of the relay fallback; nil: relay
	// is off (no "relay" member, relay-only requests get 409
	// relay_unavailable).
	Relay *turncred.Issuer
	// RelayCredentialsPerMinute caps the relay credentials one principal
	// gets from this instance a minute; 0: DefaultRelayCredentialsPerMinute.
	RelayCredentialsPerMinute int

	// PrincipalsFile is the file Principals was loaded from, re-read by
	// ReloadPrincipals. Empty (a --dev start): reloading is refused with
	// ErrNotReloadable.
	PrincipalsFile string
	// PrincipalsReloaded, when set, is called after a reload asked of this
	// instance (SIGHUP, the reload route) succeeded, before the route
	// answers: with several instances it tells the others to reload their
	// own files (FollowPrincipalsReload, which does not call it again).
	PrincipalsReloaded func()

	// StoreStats serves the store figures of /metrics, /readyz and GET
	// /v1/admin/stats; nil: New makes one (DefaultStoreStatsMaxAge). The
	// process shares it with whatever else it exports from Stats.
	StoreStats *StoreStats
}

// API is the HTTP front of one store. It is safe for concurrent use by any
// number of fasthttp workers; only its principal set changes after New
// (ReloadPrincipals swaps it whole).
type API struct {
	store      engine.Store
	items      engine.ItemBrowser // the store, if it implements it; else nil
	quick      engine.QuickJoiner // the store, if it implements it; else nil
	router     MediatorRouter     // the store, if it implements it; else nil
	keys       *engine.Keyring
	limits     engine.Limits
	ps         livePrincipals
	announce   func() // Config.PrincipalsReloaded
	digest     principalsDigest
	offerer    Offerer
	relay      *turncred.Issuer
	relayCap   relayCap // relay_cap.go
	mediator   string
	log        *slog.Logger
	metrics    *httpMetrics
	storeStats *StoreStats // the store figures of scrapes and probes (storestats.go)
	// monitorRevocations shares the monitoring routes' revocation checks
	// for as long as storeStats shares their figures.
	monitorRevocations *monitorRevocations
	writeProm          func(w io.Writer)
	regions            *regionInterner
	// storeErrLog bounds the log lines of failed store calls: an
	// unreachable store fails every request, one line a second says so.
	storeErrLog logLimiter

	leaseTTL, presenceTTL, attemptTTL int64  // seconds
	drainRetryAfter                   string // seconds, Retry-After while draining
}

// PresenceInterval is the presence refresh interval told to hosts (seconds).
const PresenceInterval = 5

// New checks cfg and builds the API.
func New(cfg Config) (*API, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("httpapi: Config.Store is required")
	case cfg.Keys == nil:
		return nil, errors.New("httpapi: Config.Keys is required")
	case cfg.Principals == nil:
		return nil, errors.New("httpapi: Config.Principals is required")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, errors.New("httpapi: Config.Limits: " + err.Error())
	}
	a := &API{
		store: cfg.Store, keys: cfg.Keys, limits: cfg.Limits, ps: livePrincipals{file: cfg.PrincipalsFile},
		offerer: cfg.Offerer, relay: cfg.Relay, mediator: cfg.MediatorAddr, log: cfg.Logger,
		relayCap:        relayCap{limit: cmp.Or(cfg.RelayCredentialsPerMinute, DefaultRelayCredentialsPerMinute)},
		writeProm:       cfg.WritePrometheus,
		announce:        cfg.PrincipalsReloaded,
		regions:         newRegionInterner(maxRegionsPerTenant),
		leaseTTL:        seconds(cfg.Limits.LeaseTTL),
		presenceTTL:     seconds(cfg.Limits.PresenceTTL),
		attemptTTL:      seconds(cfg.Limits.AttemptTTL),
		drainRetryAfter: strconv.FormatInt(max(1, seconds(cfg.Limits.DrainWindow)), 10),
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	set := cfg.Metrics
	if set == nil {
		set = metrics.NewSet()
		if a.writeProm == nil {
			a.writeProm = func(w io.Writer) { set.WritePrometheus(w) }
		}
	}
	if a.writeProm == nil {
		a.writeProm = func(w io.Writer) { metrics.WritePrometheus(w, true) }
	}
	a.ps.cur.Store(cfg.Principals)
	a.items, _ = cfg.Store.(engine.ItemBrowser)
	a.quick, _ = cfg.Store.(engine.QuickJoiner)
	a.router, _ = cfg.Store.(MediatorRouter)
	a.storeStats = cfg.StoreStats
	if a.storeStats == nil {
		a.storeStats = NewStoreStats(cfg.Store, 0)
	}
	a.monitorRevocations = newMonitorRevocations(a.storeStats.maxAge)
	a.metrics = newHTTPMetrics(set, a.storeStats, cfg.Limits)
	set.RegisterMetricsWriter(a.writePrincipalsInfo)
	return a, nil
}
