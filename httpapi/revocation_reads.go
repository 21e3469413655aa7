package httpapi

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// revocationReads is implemented by a store whose reads can decide the
// caller's revocation in the call that reads (the Redis store: a separate
// check would be a round trip of its own per request). Each answers
// Revoked, before anything else but ServiceUnavailable, while subject has
// a live revocation, global or confined to the query's tenant, at the
// instant the read is served; otherwise what the plain read answers.
type revocationReads interface {
	BrowseItemsAs(ctx context.Context, subject engine.Subject, q engine.Browse, dst []engine.BrowseItem) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error)
	GetListingAs(ctx context.Context, subject engine.Subject, q engine.GetListing) (engine.ListingView, engine.Result, error)
	AttemptStatusAs(ctx context.Context, q engine.GetAttempt) (engine.AttemptStatus, engine.Result, error)
}

// readDecidesRevocation reports whether operation o is served, on this
// API's store, by a read that decides its caller's revocation: then the
// request checks it apart only when that read did not answer past the
// check (serve), as the transitions that decide it do.
func (a *API) readDecidesRevocation(o op) bool {
	if o != opBrowse && o != opGetListing && o != opGetAttempt {
		return false
	}
	_, ok := a.store.(revocationReads)
	return ok && (o != opBrowse || a.items != nil)
}

// decided reports whether a read of operation o, answered r and err,
// decided its caller's revocation.
func (a *API) decided(o op, r engine.Result, err error) bool {
	return err == nil && checkedRevocation(r) && a.readDecidesRevocation(o)
}

// browseItems is the page of q for principal p, its revocation decided in
// the same call when the store can.
func (a *API) browseItems(p *Principal, q engine.Browse, dst []engine.BrowseItem) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error) {
	if rr, ok := a.store.(revocationReads); ok {
		return rr.BrowseItemsAs(context.Background(), p.Subject, q, dst)
	}
	return a.items.BrowseItems(context.Background(), q, dst)
}

// getListingFor is GetListing for principal p, likewise.
func (a *API) getListingFor(p *Principal, q engine.GetListing) (engine.ListingView, engine.Result, error) {
	if rr, ok := a.store.(revocationReads); ok {
		return rr.GetListingAs(context.Background(), p.Subject, q)
	}
	return a.store.GetListing(context.Background(), q)
}

// attemptStatusFor is AttemptStatus for q.Subject, likewise.
func (a *API) attemptStatusFor(q engine.GetAttempt) (engine.AttemptStatus, engine.Result, error) {
	if rr, ok := a.store.(revocationReads); ok {
		return rr.AttemptStatusAs(context.Background(), q)
	}
	return a.store.AttemptStatus(context.Background(), q)
}
