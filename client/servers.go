package client

import (
	"context"
	"errors"
	"net/url"
	"strings"
)

// A deployment of several instances on one shared store serves every route
// on every instance: an API given several base URLs sends each request to
// one of them and, when that one cannot serve, moves on to the next in the
// list. Every call the SDK makes is safe to repeat on another instance
// (creations replay by their Idempotency-Key from the shared store, renewals
// are compare-and-swap, deletes and reads are idempotent), so a request
// whose answer was lost with its instance is retried elsewhere without
// creating twice.

// parseServers splits baseURL (one URL, or several separated by commas)
// into the instances' base URLs, refusing any that is not http(s)://host.
func parseServers(baseURL string) (bases, names []string, err error) {
	for _, s := range strings.Split(baseURL, ",") {
		s = strings.TrimRight(strings.TrimSpace(s), "/")
		u, perr := url.Parse(s)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, &ConfigError{Field: "server URL", Reason: "want http(s)://host:port, or several separated by commas"}
		}
		for _, b := range bases {
			if b == s {
				return nil, nil, &ConfigError{Field: "server URL", Reason: "an instance is listed twice"}
			}
		}
		bases = append(bases, s)
		names = append(names, u.Redacted()) // what callbacks and errors may show
	}
	return bases, names, nil
}

// Server is the base URL requests go to now (credentials in it redacted).
func (a *API) Server() string { return a.names[a.cur.Load()] }

// Servers lists the instances' base URLs in the order they are tried
// (credentials in them redacted).
func (a *API) Servers() []string { return append([]string(nil), a.names...) }

// leaves reports a failure after which, with several instances, the next
// request goes to another: no answer (refused, reset, timed out), or the
// instance cannot serve (503 service_unavailable: cut off from the store;
// 503 draining: it is shutting down). Outcomes of the shared state (a full
// pool, a quota, a conflict) would be the same on any instance: no move.
//
// The caller's deadline running out while waiting on an instance moves too:
// it may hang (stopped, or its machine unreachable). A cancellation says
// nothing about the instance.
func leaves(err error) bool {
	unanswered, code := failure(err)
	return unanswered || code == "service_unavailable" || code == "draining" || errors.Is(err, context.DeadlineExceeded)
}

// failure classifies an HTTP call's error: no answer at all (unanswered),
// else the answer's problem code ("" for any other error).
func failure(err error) (unanswered bool, code string) {
	var te *transportError
	var ae *APIError
	switch {
	case errors.As(err, &te):
		return true, ""
	case errors.As(err, &ae):
		return false, ae.Code
	}
	return false, ""
}

// moveOn makes the instance after i the one requests go to, unless a
// concurrent request already moved away from i, and reports the move.
func (a *API) moveOn(i int32, cause error) {
	next := (i + 1) % int32(len(a.bases))
	if !a.cur.CompareAndSwap(i, next) {
		return
	}
	if a.OnServerChange != nil {
		a.OnServerChange(a.names[i], a.names[next], cause)
	}
}
