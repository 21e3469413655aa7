package client

import (
	"context"
	"iter"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// wire shapes of docs/contracts/http.md#routes answers; converted to the typed forms in api.go.
type (
	wireLease struct {
		LeaseID   string    `json:"lease_id"`
		Token     string    `json:"token"`
		Version   uint64    `json:"version"`
		ExpiresAt time.Time `json:"expires_at"`
		TTL       int64     `json:"ttl_s"`
	}
	wirePresence struct {
		Handle   string `json:"handle"`
		Token    string `json:"token"`
		Mediator string `json:"mediator"`
		Interval int64  `json:"interval_s"`
		TTL      int64  `json:"ttl_s"`
	}
	wireCreated struct {
		ListingID string       `json:"listing_id"`
		Lease     wireLease    `json:"lease"`
		Presence  wirePresence `json:"presence"`
	}
	wireAttempt struct {
		AttemptID string     `json:"attempt_id"`
		ListingID string     `json:"listing_id"`
		Handle    string     `json:"handle"`
		Token     string     `json:"token"`
		Mediator  string     `json:"mediator"`
		ExpiresAt time.Time  `json:"expires_at"`
		TTL       int64      `json:"ttl_s"`
		RelayOnly bool       `json:"relay_only"`
		Relay     *wireRelay `json:"relay"`
	}
	wireRenewed struct {
		Version   uint64    `json:"version"`
		ExpiresAt time.Time `json:"expires_at"`
		TTL       int64     `json:"ttl_s"`
		Mediator  string    `json:"mediator"`
	}
	wirePage struct {
		Items      []Listing `json:"items"`
		NextCursor *string   `json:"next_cursor"`
	}
)

// CreateListing publishes spec under idempotencyKey (use NewIdempotencyKey
// once per logical listing and pass the same key on every retry). A bad spec
// or key is refused locally with an *InputError.
func (a *API) CreateListing(ctx context.Context, idempotencyKey string, spec ListingSpec) (*CreatedListing, error) {
	if err := engine.ValidateIdempotencyKey(idempotencyKey); err != nil {
		return nil, checked(err)
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	var w wireCreated
	c := &call{op: "create listing", method: "POST", path: "/v1/listings",
		header: map[string]string{"Idempotency-Key": idempotencyKey}, body: &spec, out: &w}
	if err := a.do(ctx, c); err != nil {
		return nil, err
	}
	out := &CreatedListing{Replayed: c.replay}
	var ok3, ok5 bool
	id, err1 := parseUUID("listing_id", w.ListingID)
	lease, err2 := parseUUID("lease_id", w.Lease.LeaseID)
	out.Lease.Token, ok3 = parseCapability(w.Lease.Token)
	handle, err4 := parseUUID("handle", w.Presence.Handle)
	out.Presence.Token, ok5 = parseCapability(w.Presence.Token)
	out.ListingID, out.Lease.ID, out.Presence.Handle = id, lease, handle
	if err1 != nil || err2 != nil || !ok3 || err4 != nil || !ok5 || w.Presence.Mediator == "" || w.Lease.TTL <= 0 {
		return nil, &ProtocolError{Op: c.op, Reason: "missing or malformed identifiers"}
	}
	out.Lease.Version = w.Lease.Version
	out.Lease.ExpiresAt = w.Lease.ExpiresAt
	out.Lease.TTL = time.Duration(w.Lease.TTL) * time.Second
	out.Presence.Mediator = w.Presence.Mediator
	out.Presence.Interval = time.Duration(max(w.Presence.Interval, 1)) * time.Second
	out.Presence.TTL = time.Duration(max(w.Presence.TTL, 1)) * time.Second
	return out, nil
}

// RenewLease extends the lease by compare-and-swap on lease.Version. On
// success lease is updated in place. A stale version fails with an *APIError
// matching ErrConflict whose CurrentVersion names the server's version.
// currentPlayers < 0 leaves the player count unchanged.
func (a *API) RenewLease(ctx context.Context, listing ListingID, lease *Lease, currentPlayers int) error {
	_, err := a.renewLease(ctx, listing, lease, Renewal{CurrentPlayers: currentPlayers})
	return err
}

// Renewal is what a lease renewal changes besides the lease.
type Renewal struct {
	// CurrentPlayers < 0 leaves the player count unchanged.
	CurrentPlayers int
	// SetAttributes replaces the indexed attributes with Attributes (nil
	// or empty: clears them); without it they stay.
	SetAttributes bool
	Attributes    Attributes
}

// RenewLeaseWith is RenewLease changing what r says, in the same
// compare-and-swap.
func (a *API) RenewLeaseWith(ctx context.Context, listing ListingID, lease *Lease, r Renewal) error {
	_, err := a.renewLease(ctx, listing, lease, r)
	return err
}

// renewLease is RenewLeaseWith that also answers the mediator the listing's
// presence should go to now ("" from a server that does not say).
func (a *API) renewLease(ctx context.Context, listing ListingID, lease *Lease, r Renewal) (mediator string, err error) {
	body := struct {
		LeaseID         string      `json:"lease_id"`
		LeaseToken      string      `json:"lease_token"`
		ExpectedVersion uint64      `json:"expected_version"`
		CurrentPlayers  *int        `json:"current_players,omitempty"`
		Attributes      *Attributes `json:"attributes,omitempty"`
	}{LeaseID: lease.ID.String(), LeaseToken: lease.Token.token(), ExpectedVersion: lease.Version}
	if r.CurrentPlayers >= 0 {
		body.CurrentPlayers = &r.CurrentPlayers
	}
	if r.SetAttributes {
		if err := r.Attributes.Validate(); err != nil {
			return "", err
		}
		as := r.Attributes
		if as == nil {
			as = Attributes{} // {} clears; an absent member would keep them
		}
		body.Attributes = &as
	}
	var w wireRenewed
	c := &call{op: "renew lease", method: "PUT", path: "/v1/listings/" + listing.String() + "/lease", body: &body, out: &w}
	if err := a.do(ctx, c); err != nil {
		return "", err
	}
	lease.Version = w.Version
	lease.ExpiresAt = w.ExpiresAt
	if w.TTL > 0 {
		lease.TTL = time.Duration(w.TTL) * time.Second
	}
	return w.Mediator, nil
}

// DeleteListing closes the listing, its presence and every linked attempt.
func (a *API) DeleteListing(ctx context.Context, listing ListingID, lease *Lease) error {
	c := &call{op: "delete listing", method: "DELETE", path: "/v1/listings/" + listing.String(),
		header: map[string]string{"Lease-Id": lease.ID.String(), "Lease-Token": lease.Token.token()}}
	return a.do(ctx, c)
}

// GetListing returns one joinable listing (public or unlisted) by ID.
func (a *API) GetListing(ctx context.Context, id ListingID) (*Listing, error) {
	var l Listing
	c := &call{op: "get listing", method: "GET", path: "/v1/listings/" + id.String(), out: &l}
	if err := a.do(ctx, c); err != nil {
		return nil, err
	}
	return &l, nil
}

// BrowsePage fetches one page of q from the cursor: empty for the first
// page, then the next of the previous page (with the same q), or a listing
// ID to start after it (in ID order only). next is empty when the walk is
// over. A page may hold fewer items than the
// page size, even none, while next is not empty: the server bounds the
// work of one page (docs/contracts/semantics.md#filters-and-order).
func (a *API) BrowsePage(ctx context.Context, q BrowseQuery, cursor string) (items []Listing, next string, err error) {
	v, err := q.values(true)
	if err != nil {
		return nil, "", err
	}
	if _, ok := engine.ParseUUID(cursor); ok {
		v.Set("after", cursor) // a listing ID: a cursor is never one
	} else if cursor != "" {
		v.Set("cursor", cursor)
	}
	var w wirePage
	c := &call{op: "browse", method: "GET", path: "/v1/listings?" + v.Encode(), out: &w}
	if err := a.do(ctx, c); err != nil {
		return nil, "", err
	}
	if w.NextCursor != nil {
		next = *w.NextCursor
	}
	return w.Items, next, nil
}

// Browse iterates every listing q matches, in q's order, following the
// cursor page by page (each listing at most once, even while listings
// change).
// An error ends the iteration after being yielded once.
func (a *API) Browse(ctx context.Context, q BrowseQuery) iter.Seq2[Listing, error] {
	return func(yield func(Listing, error) bool) {
		after := ""
		for {
			items, next, err := a.BrowsePage(ctx, q, after)
			if err != nil {
				yield(Listing{}, err)
				return
			}
			for _, l := range items {
				if !yield(l, nil) {
					return
				}
			}
			if next == "" || next == after {
				return
			}
			after = next
		}
	}
}

// CreateJoinAttempt asks to be introduced to the listing's host. Pass the
// same idempotencyKey on every retry of one logical join.
func (a *API) CreateJoinAttempt(ctx context.Context, idempotencyKey string, listing ListingID, protocolVersion uint32) (*Attempt, error) {
	return a.CreateJoinAttemptWith(ctx, idempotencyKey, listing, AttemptRequest{ProtocolVersion: protocolVersion})
}

// AttemptRequest is the body of a join attempt.
type AttemptRequest struct {
	ProtocolVersion uint32
	// RelayOnly asks that neither side learn the other's addresses: both
	// connect through the relay. Refused with ErrRelayUnavailable (problem
	// relay_unavailable) when the server has relaying off.
	RelayOnly bool
}

// CreateJoinAttemptWith is CreateJoinAttempt with the request's options.
func (a *API) CreateJoinAttemptWith(ctx context.Context, idempotencyKey string, listing ListingID, req AttemptRequest) (*Attempt, error) {
	if err := engine.ValidateIdempotencyKey(idempotencyKey); err != nil {
		return nil, checked(err)
	}
	if req.ProtocolVersion == 0 {
		return nil, &InputError{Field: "protocol_version", Reason: "must be 1..4294967295"}
	}
	body := struct {
		ProtocolVersion uint32 `json:"protocol_version"`
		RelayOnly       bool   `json:"relay_only,omitempty"`
	}{req.ProtocolVersion, req.RelayOnly}
	var w wireAttempt
	c := &call{op: "create join attempt", method: "POST", path: "/v1/listings/" + listing.String() + "/join-attempts",
		header: map[string]string{"Idempotency-Key": idempotencyKey}, body: &body, out: &w}
	if err := a.do(ctx, c); err != nil {
		return nil, err
	}
	return w.attempt(c)
}

// attempt converts a join's answer to c.
func (w *wireAttempt) attempt(c *call) (*Attempt, error) {
	out := &Attempt{Mediator: w.Mediator, ExpiresAt: w.ExpiresAt, TTL: time.Duration(w.TTL) * time.Second, Replayed: c.replay, RelayOnly: w.RelayOnly}
	var ok3 bool
	id, err1 := parseUUID("attempt_id", w.AttemptID)
	handle, err2 := parseUUID("handle", w.Handle)
	out.Token, ok3 = parseCapability(w.Token)
	listing, err4 := parseUUID("listing_id", w.ListingID)
	out.AttemptID, out.Handle, out.ListingID = id, handle, listing
	if err1 != nil || err2 != nil || !ok3 || err4 != nil || w.Mediator == "" {
		return nil, &ProtocolError{Op: c.op, Reason: "missing or malformed identifiers"}
	}
	relay, err := w.Relay.relay(c.op)
	if err != nil {
		return nil, err
	}
	out.Relay = relay
	if out.TTL <= 0 {
		out.TTL = engine.DefaultAttemptTTL
	}
	return out, nil
}

// HostRelay returns the host side's TURN relay for an attempt of the
// caller's listing, named by the attempt handle the host was offered (the
// host never learns attempt IDs). ErrRelayUnavailable when the server has
// relaying off; ErrNotFound for an attempt that is not of this listing,
// ended, or a listing the caller does not own.
func (a *API) HostRelay(ctx context.Context, listing ListingID, attempt Handle) (*Relay, error) {
	return a.getRelay(ctx, "get host relay", "/v1/listings/"+listing.String()+"/join-attempts/"+attempt.String()+"/relay")
}

// getRelay GETs a relay credential route and returns its relay object.
func (a *API) getRelay(ctx context.Context, op, path string) (*Relay, error) {
	var w struct {
		Relay *wireRelay `json:"relay"`
	}
	c := &call{op: op, method: "GET", path: path, out: &w}
	if err := a.do(ctx, c); err != nil {
		return nil, err
	}
	r, err := w.Relay.relay(c.op)
	if err == nil && r == nil {
		err = &ProtocolError{Op: c.op, Reason: "no relay object"}
	}
	return r, err
}

// ClientRelay returns the client side's TURN relay for the caller's join
// attempt, which the server grants once the attempt needs it: after the
// introduction, when the punch failed (a relay-only attempt's join answer
// carries it already). ErrRelayUnavailable when the server has relaying
// off; ErrNotFound for an attempt that is not the caller's or ended; a
// conflict before the introduction or after a direct path.
func (a *API) ClientRelay(ctx context.Context, attempt AttemptID) (*Relay, error) {
	return a.getRelay(ctx, "get client relay", "/v1/join-attempts/"+attempt.String()+"/relay")
}

// Whoami returns the authenticated principal.
func (a *API) Whoami(ctx context.Context) (*Whoami, error) {
	var w Whoami
	if err := a.do(ctx, &call{op: "whoami", method: "GET", path: "/v1/whoami", out: &w}); err != nil {
		return nil, err
	}
	return &w, nil
}

// Drain asks the server to begin draining (operator role).
func (a *API) Drain(ctx context.Context) error {
	return a.do(ctx, &call{op: "drain", method: "POST", path: "/v1/admin/drain"})
}
