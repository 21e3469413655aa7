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
	numOps
)

var opNames = [numOps]string{
	"unknown", "livez", "readyz", "metrics", "whoami", "browse", "create_listing",
	"get_listing", "delete_listing", "renew_lease", "create_join_attempt",
	"admin_revoke_listing", "admin_revoke_principal", "admin_drain", "admin_stats",
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
)

// public routes need no authentication.
func (r route) public() bool { return r == routeLivez || r == routeReadyz || r == routeMetrics }

const (
	prefixListing      = "/v1/listings/"
	prefixAdminListing = "/v1/admin/listings/"
)

// match finds the route of path and the {listing_id} segment, if any (not
// yet validated: a malformed ID is a 400, decided after authorization).
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
		}
		return routeNone, nil
	}
	if id, ok := bytes.CutPrefix(path, []byte(prefixAdminListing)); ok && len(id) > 0 && bytes.IndexByte(id, '/') < 0 {
		return routeAdminListing, id
	}
	return routeNone, nil
}

// resolve picks the operation of route r for method. When the method is not
// allowed it returns opUnknown and the Allow header value.
func resolve(r route, method []byte) (op, string) {
	m := string(method)
	switch r {
	case routeLivez:
		if m == "GET" {
			return opLivez, ""
		}
		return opUnknown, "GET"
	case routeReadyz:
		if m == "GET" {
			return opReadyz, ""
		}
		return opUnknown, "GET"
	case routeMetrics:
		if m == "GET" {
			return opMetrics, ""
		}
		return opUnknown, "GET"
	case routeWhoami:
		if m == "GET" {
			return opWhoami, ""
		}
		return opUnknown, "GET"
	case routeListings:
		switch m {
		case "GET":
			return opBrowse, ""
		case "POST":
			return opCreateListing, ""
		}
		return opUnknown, "GET, POST"
	case routeListing:
		switch m {
		case "GET":
			return opGetListing, ""
		case "DELETE":
			return opDeleteListing, ""
		}
		return opUnknown, "GET, DELETE"
	case routeLease:
		if m == "PUT" {
			return opRenewLease, ""
		}
		return opUnknown, "PUT"
	case routeJoin:
		if m == "POST" {
			return opCreateAttempt, ""
		}
		return opUnknown, "POST"
	case routeAdminListing:
		if m == "DELETE" {
			return opAdminRevokeListing, ""
		}
		return opUnknown, "DELETE"
	case routeRevocations:
		if m == "POST" {
			return opAdminRevokePrincipal, ""
		}
		return opUnknown, "POST"
	case routeDrain:
		if m == "POST" {
			return opAdminDrain, ""
		}
		return opUnknown, "POST"
	case routeStats:
		if m == "GET" {
			return opAdminStats, ""
		}
		return opUnknown, "GET"
	}
	return opUnknown, ""
}

// access is what an operation requires of its caller.
type access struct {
	roles    Roles // any of these; 0: any authenticated principal
	tenant   bool  // acts in the principal's own tenant (global principals may not)
	hasBody  bool  // a JSON body: Content-Type is checked (415)
	operator bool  // operator route: a global operator acts in any tenant
}

var opAccess = [numOps]access{
	opWhoami:               {},
	opBrowse:               {roles: Roles(RoleClient | RolePublisher), tenant: true},
	opGetListing:           {roles: Roles(RoleClient | RolePublisher), tenant: true},
	opCreateListing:        {roles: Roles(RolePublisher), tenant: true, hasBody: true},
	opRenewLease:           {roles: Roles(RolePublisher), tenant: true, hasBody: true},
	opDeleteListing:        {roles: Roles(RolePublisher), tenant: true},
	opCreateAttempt:        {roles: Roles(RoleClient), tenant: true, hasBody: true},
	opAdminRevokeListing:   {roles: Roles(RoleOperator), operator: true},
	opAdminRevokePrincipal: {roles: Roles(RoleOperator), operator: true, hasBody: true},
	opAdminDrain:           {roles: Roles(RoleOperator), operator: true},
	opAdminStats:           {roles: Roles(RoleOperator), operator: true},
}
