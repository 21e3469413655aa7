package httpapi

import (
	"bytes"
)

// op is one operation of the API: a route and a method. Routing is a switch
// over the path bytes; no route table is built or allocated per request.
type op uint8

const (
	opUnknown op = iota // unknown route or wrong method
	opLivez
	opReadyz
	opMetrics
	opWhoami
	opBrowse
	opCreateListing
	opGetListing
	opDeleteListing
	opRenewLease
	opCreateAttempt
	opAdminRevokeListing
	opAdminRevokePrincipal
	opAdminDrain
	opAdminStats
	opAdminTenantStats
	opAdminReload
	opOpenAPI
	opGetAttempt
	opHostRelay
	opClientRelay
	opQuickJoin
	numOps
)

var opNames = [numOps]string{
	"unknown", "livez", "readyz", "metrics", "whoami", "browse", "create_listing",
	"get_listing", "delete_listing", "renew_lease", "create_join_attempt",
	"admin_revoke_listing", "admin_revoke_principal", "admin_drain", "admin_stats",
	"admin_tenant_stats",
	"admin_reload_principals",
	"openapi", "get_join_attempt", "get_host_relay", "get_client_relay", "quick_join",
}

// route is a path pattern.
type route uint8

const (
	routeNone route = iota
	routeLivez
	routeReadyz
	routeMetrics
	routeWhoami
	routeListings
	routeListing
	routeLease
	routeJoin
	routeAdminListing
	routeRevocations
	routeDrain
	routeStats
	routeTenantStats
	routeReload
	routeOpenAPI
	routeAttempt     // /v1/join-attempts/{attempt_id}
	routeHostRelay   // /v1/listings/{listing_id}/join-attempts/{attempt}/relay
	routeClientRelay // /v1/join-attempts/{attempt_id}/relay
	routeQuickJoin
	numRoutes
)

// public routes need no authentication. /metrics is not one: its series
// name every tenant, so on the API listener it takes a global operator's
// token (a scraper without one uses --metrics-addr on a private network).
func (r route) public() bool {
	return r == routeLivez || r == routeReadyz || r == routeOpenAPI
}

const (
	prefixListing      = "/v1/listings/"
	prefixAdminListing = "/v1/admin/listings/"
	prefixAttempt      = "/v1/join-attempts/"
)

// match finds the route of path and the {listing_id} segment, if any (not
// yet validated: a malformed ID is a 400, decided after authorization). For
// routeAttempt the segment is the {attempt_id}; for routeHostRelay the
// {listing_id} (relayAttemptSegment finds the attempt's).
func match(path []byte) (route, []byte) {
	switch string(path) {
	case "/livez":
		return routeLivez, nil
	case "/readyz":
		return routeReadyz, nil
	case "/metrics":
		return routeMetrics, nil
	case "/v1/whoami":
		return routeWhoami, nil
	case "/v1/listings":
		return routeListings, nil
	case "/v1/admin/revocations":
		return routeRevocations, nil
	case "/v1/admin/drain":
		return routeDrain, nil
	case "/v1/admin/stats":
		return routeStats, nil
	case "/v1/admin/tenant-stats":
		return routeTenantStats, nil
	case "/v1/admin/principals/reload":
		return routeReload, nil
	case "/v1/openapi.json":
		return routeOpenAPI, nil
	case "/v1/quick-join":
		return routeQuickJoin, nil
	}
	if rest, ok := bytes.CutPrefix(path, []byte(prefixListing)); ok {
		id, sub, hasSub := bytes.Cut(rest, []byte{'/'})
		if len(id) == 0 {
			return routeNone, nil
		}
		switch {
		case !hasSub:
			return routeListing, id
		case string(sub) == "lease":
			return routeLease, id
		case string(sub) == "join-attempts":
			return routeJoin, id
		case relayAttemptSegment(sub) != nil:
			return routeHostRelay, id
		}
		return routeNone, nil
	}
	if id, ok := bytes.CutPrefix(path, []byte(prefixAttempt)); ok && len(id) > 0 {
		if bytes.IndexByte(id, '/') < 0 {
			return routeAttempt, id
		}
		if id, ok = bytes.CutSuffix(id, []byte("/relay")); ok && len(id) > 0 && bytes.IndexByte(id, '/') < 0 {
			return routeClientRelay, id
		}
		return routeNone, nil
	}
	if id, ok := bytes.CutPrefix(path, []byte(prefixAdminListing)); ok && len(id) > 0 && bytes.IndexByte(id, '/') < 0 {
		return routeAdminListing, id
	}
	return routeNone, nil
}

// relayAttemptSegment returns the {attempt} of the part of a listing path
// after "{listing_id}/": "join-attempts/{attempt}/relay", or nil.
func relayAttemptSegment(sub []byte) []byte {
	rest, ok := bytes.CutPrefix(sub, []byte("join-attempts/"))
	if !ok {
		return nil
	}
	attempt, ok := bytes.CutSuffix(rest, []byte("/relay"))
	if !ok || len(attempt) == 0 || bytes.IndexByte(attempt, '/') >= 0 {
		return nil
	}
	return attempt
}

// methodOp is one method a route answers and the operation it selects.
type methodOp struct {
	method string
	op     op
}

// routeMethods lists, per route, the methods it answers; a 405's Allow
// header is the same list (routeAllow), with HEAD after GET: a route that
// answers GET answers HEAD as GET would, headers only (fasthttp drops the
// body of an answer to HEAD).
var routeMethods = [numRoutes][]methodOp{
	routeLivez:        {{"GET", opLivez}},
	routeReadyz:       {{"GET", opReadyz}},
	routeMetrics:      {{"GET", opMetrics}},
	routeWhoami:       {{"GET", opWhoami}},
	routeListings:     {{"GET", opBrowse}, {"POST", opCreateListing}},
	routeListing:      {{"GET", opGetListing}, {"DELETE", opDeleteListing}},
	routeLease:        {{"PUT", opRenewLease}},
	routeJoin:         {{"POST", opCreateAttempt}},
	routeAdminListing: {{"DELETE", opAdminRevokeListing}},
	routeRevocations:  {{"POST", opAdminRevokePrincipal}},
	routeDrain:        {{"POST", opAdminDrain}},
	routeStats:        {{"GET", opAdminStats}},
	routeTenantStats:  {{"GET", opAdminTenantStats}},
	routeReload:       {{"POST", opAdminReload}},
	routeOpenAPI:      {{"GET", opOpenAPI}},
	routeAttempt:      {{"GET", opGetAttempt}},
	routeHostRelay:    {{"GET", opHostRelay}},
	routeClientRelay:  {{"GET", opClientRelay}},
	routeQuickJoin:    {{"POST", opQuickJoin}},
}

var routeAllow = func() (allow [numRoutes]string) {
	for r, ms := range routeMethods {
		for i, m := range ms {
			if i > 0 {
				allow[r] += ", "
			}
			allow[r] += m.method
			if m.method == "GET" {
				allow[r] += ", HEAD"
			}
		}
	}
	return allow
}()

// resolve picks the operation of route r for method (HEAD: that of GET).
// When the method is not allowed it returns opUnknown and the Allow header
// value.
func resolve(r route, method []byte) (op, string) {
	head := string(method) == "HEAD"
	for _, m := range routeMethods[r] {
		if string(method) == m.method || head && m.method == "GET" {
			return m.op, ""
		}
	}
	return opUnknown, routeAllow[r]
}

// access is what an operation requires of its caller.
type access struct {
	roles   Roles // any of these; 0: any authenticated principal
	tenant  bool  // acts in the principal's own tenant (global principals may not)
	global  bool  // acts on the whole instance: only a global principal (tenant *) may
	hasBody bool  // a JSON body: Content-Type is checked (415)
	// ownRevocation: the operation's store transition decides revocation
	// itself, so the request is served with that one call and revocation
	// is checked apart only before an answer it did not decide.
	ownRevocation bool
	// monitoring: a read-only scrape of the instance's figures, whose
	// revocation check is shared for as long as its figures are
	// (monitor_revocation.go).
	monitoring bool
}

var opAccess = [numOps]access{
	opWhoami:               {},
	opBrowse:               {roles: Roles(RoleClient | RolePublisher), tenant: true},
	opGetListing:           {roles: Roles(RoleClient | RolePublisher), tenant: true},
	opCreateListing:        {roles: Roles(RolePublisher), tenant: true, hasBody: true, ownRevocation: true},
	opRenewLease:           {roles: Roles(RolePublisher), tenant: true, hasBody: true, ownRevocation: true},
	opDeleteListing:        {roles: Roles(RolePublisher), tenant: true},
	opCreateAttempt:        {roles: Roles(RoleClient), tenant: true, hasBody: true, ownRevocation: true},
	opAdminRevokeListing:   {roles: Roles(RoleOperator)},
	opAdminRevokePrincipal: {roles: Roles(RoleOperator), hasBody: true},
	opAdminDrain:           {roles: Roles(RoleOperator), global: true},
	opAdminStats:           {roles: Roles(RoleOperator), global: true, monitoring: true},
	opAdminTenantStats:     {roles: Roles(RoleOperator)},
	opAdminReload:          {roles: Roles(RoleOperator), global: true},
	opGetAttempt:           {roles: Roles(RoleClient | RolePublisher), tenant: true},
	opHostRelay:            {roles: Roles(RolePublisher), tenant: true},
	opClientRelay:          {roles: Roles(RoleClient), tenant: true},
	opMetrics:              {roles: Roles(RoleOperator), global: true, monitoring: true},
	// A quick join's body is optional: quickJoin checks its Content-Type
	// when it has one.
	opQuickJoin: {roles: Roles(RoleClient), tenant: true, ownRevocation: true},
}
