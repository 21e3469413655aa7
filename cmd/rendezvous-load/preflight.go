package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// checkPublisher asks the server who the first publisher token is. Only
// when nothing answered is the server unreachable; an answer that refuses
// the token, a token of another role and an answer that is not the
// contract's each say so.
func checkPublisher(ctx context.Context, pub *client.API, addr string) error {
	who, err := pub.Whoami(ctx)
	var ae *client.APIError
	switch {
	case err == nil:
	case errors.As(err, &ae) && ae.Inferred:
		return fmt.Errorf("the server at %s answered %d without a problem code of the contract: is it a Rendezvous server? (%w)", addr, ae.Status, err)
	case errors.As(err, &ae) && ae.Status == http.StatusUnauthorized:
		return fmt.Errorf("the server at %s refused the first publisher token (401 %s): the token is not in its principals file, or was revoked", addr, ae.Code)
	case errors.As(err, &ae):
		return fmt.Errorf("the server at %s answered the first publisher token with %d %s: %w", addr, ae.Status, ae.Code, err)
	case classify(err) == CodeOtherStatus:
		return fmt.Errorf("the server at %s answered, but not as the contract says: is it a Rendezvous server? (%w)", addr, err)
	default:
		return fmt.Errorf("cannot reach the server at %s (nothing answered): %w", addr, err)
	}
	if !slices.Contains(who.Roles, "publisher") {
		return fmt.Errorf("the first publisher token is a token of role %s (subject %s), not a publisher's: give a publisher token (--publisher-token, or the tokens file's publishers)",
			strings.Join(who.Roles, ", "), who.Subject)
	}
	return nil
}

// serverLimits is what GET /v1/admin/stats and /v1/admin/tenant-stats say
// about the pools and quotas a plan must fit in.
type serverLimits struct {
	Pools  map[string]client.PoolStat `json:"pools"`
	Quotas map[string]int             `json:"quotas"`
	Tenant struct {
		Pools map[string]struct {
			Used  int `json:"used"`
			Quota int `json:"quota"`
		} `json:"pools"`
	} `json:"-"`
}

// plan is what a run is about to create.
type plan struct {
	listings, attempts   int
	publishers, clients  int
	game, env            string // the publishers' tenant
	idempotencyPerCreate int    // idempotency records each create leaves (1)
}

// limit names one pool or quota, its server flag, and its environment
// variable.
type limit struct{ name, flag string }

func (l limit) env() string {
	return "RDV_" + strings.ToUpper(strings.ReplaceAll(l.flag, "-", "_"))
}

// fits returns nil when p fits in what lim leaves free, else an error
// naming every pool or quota it does not fit, its value and what to raise.
func (lim *serverLimits) fits(p plan) error {
	var out []string
	need := func(l limit, want, value, used int, unit string) {
		if want > value-used {
			out = append(out, fmt.Sprintf("%s is %d %s with %d in use, the run needs %d more: raise --%s (%s) on the server",
				l.name, value, unit, used, want, l.flag, l.env()))
		}
	}
	pool := func(name string, want int, flag, unit string) {
		if p, ok := lim.Pools[name]; ok && p.Ceiling > 0 {
			need(limit{"the " + name + " pool", flag}, want, p.Ceiling, p.Used, unit)
		}
	}
	tenant := func(name, quota string, want int, flag, unit string) {
		q, ok := lim.Tenant.Pools[name]
		if !ok {
			if v := lim.Quotas[quota]; v > 0 {
				q.Quota = v
			} else {
				return
			}
		}
		need(limit{fmt.Sprintf("the tenant %s/%s's %s quota", p.game, p.env, name), flag}, want, q.Quota, q.Used, unit)
	}
	pool("listings", p.listings, "max-listings", "listings")
	pool("attempts", p.attempts, "max-attempts", "attempts")
	idem := (p.listings + p.attempts) * p.idempotencyPerCreate
	pool("idempotency", idem, "max-idempotency", "records (each create keeps one for --idempotency-ttl)")
	tenant("listings", "tenant_listings", p.listings, "tenant-listing-quota", "listings")
	tenant("attempts", "tenant_attempts", p.attempts, "tenant-attempt-quota", "attempts")
	tenant("idempotency", "tenant_idempotency", idem, "tenant-idempotency-quota", "records (each create keeps one for --idempotency-ttl)")
	if q := lim.Quotas["owner_listings"]; q > 0 && p.publishers > 0 && (p.listings+p.publishers-1)/p.publishers > q {
		out = append(out, fmt.Sprintf("the owner listing quota is %d per publisher, and %d listings over %d publishers need %d each: raise --owner-listing-quota (RDV_OWNER_LISTING_QUOTA) on the server and give the load tester the same --owner-quota, or more publishers",
			q, p.listings, p.publishers, (p.listings+p.publishers-1)/p.publishers))
	}
	if q := lim.Quotas["subject_attempts"]; q > 0 && p.clients > 0 && (p.attempts+p.clients-1)/p.clients > q {
		out = append(out, fmt.Sprintf("the subject attempt quota is %d per client, and %d attempts over %d clients need %d each: raise --subject-attempt-quota (RDV_SUBJECT_ATTEMPT_QUOTA) on the server, or give more clients",
			q, p.attempts, p.clients, (p.attempts+p.clients-1)/p.clients))
	}
	perPrincipal := func(n, principals int) int { return (n + principals - 1) / max(principals, 1) * p.idempotencyPerCreate }
	if q := lim.Quotas["subject_idempotency"]; q > 0 {
		for _, who := range []struct {
			name          string
			n, principals int
		}{{"publisher", p.listings, p.publishers}, {"client", p.attempts, p.clients}} {
			if who.principals > 0 && perPrincipal(who.n, who.principals) > q {
				out = append(out, fmt.Sprintf("the subject idempotency quota is %d records per principal, and %d creates over %d %ss leave %d records each: raise --subject-idempotency-quota (RDV_SUBJECT_IDEMPOTENCY_QUOTA) on the server, or give more %ss",
					q, who.n, who.principals, who.name, perPrincipal(who.n, who.principals), who.name))
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &PlanError{Reasons: out}
}

// PlanError: the run cannot fit in the server's pools and quotas.
type PlanError struct{ Reasons []string }

func (e *PlanError) Error() string {
	return "the run does not fit in the server's limits, so it stops before creating anything:\n  " + strings.Join(e.Reasons, "\n  ")
}

// readLimits reads the pools and quotas with the operator token (nil, nil
// without one: the plan then cannot be checked beforehand).
func (r *Run) readLimits(ctx context.Context, game, env string) (*serverLimits, error) {
	if r.tok.Operator == "" {
		return nil, nil
	}
	var lim serverLimits
	if err := r.adminGet(ctx, "/v1/admin/stats", &lim); err != nil {
		return nil, err
	}
	q := url.Values{"game_id": {game}, "environment_id": {env}}
	if err := r.adminGet(ctx, "/v1/admin/tenant-stats?"+q.Encode(), &lim.Tenant); err != nil {
		return nil, err
	}
	return &lim, nil
}

func (r *Run) adminGet(ctx context.Context, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.cfg.HTTPAddr+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.tok.Operator)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cannot read %s: the server answered %s to the operator token", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// preflight checks, before a fill, that listings and attempts fit in the
// server's pools and quotas; without an operator token it says it cannot.
func (r *Run) preflight(ctx context.Context, listings, attempts int) error {
	who, err := r.api.pubs[0].Whoami(ctx)
	if err != nil {
		return err
	}
	lim, err := r.readLimits(ctx, who.GameID, who.EnvironmentID)
	if err != nil {
		return err
	}
	if lim == nil {
		fmt.Fprintln(r.out, "note: no operator token, so the pools and quotas are not checked before the fill")
		return nil
	}
	return lim.fits(plan{listings: listings, attempts: attempts, publishers: len(r.tok.Publishers), clients: len(r.tok.Clients),
		game: who.GameID, env: who.EnvironmentID, idempotencyPerCreate: 1})
}
