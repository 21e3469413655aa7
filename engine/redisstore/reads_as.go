package redisstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// The reads an authenticated request makes, with its caller's revocation
// decided in the same call: on this store a separate check would be a
// round trip of its own for every request (rdv_revoked). Each answers
// Revoked, before anything else it could answer but ServiceUnavailable,
// while subject has a live revocation, global or confined to the query's
// tenant, at the instant the read is served; otherwise exactly what the
// plain read answers. An answer of ServiceUnavailable has not decided it.

// BrowseItemsAs is BrowseItems for subject: the page's one call also
// brings the instance's copy of the revocations forward, which is checked
// in memory (browse_revocations.go).
func (s *Store) BrowseItemsAs(ctx context.Context, subject engine.Subject, q engine.Browse, dst []engine.BrowseItem) ([]engine.BrowseItem, engine.BrowseNext, engine.Result, error) {
	if err := subject.Validate(); err != nil {
		return dst, engine.BrowseNext{}, engine.Result{}, err
	}
	return s.browseItems(ctx, q, dst, &subject)
}

// GetListingAs is GetListing for subject, in its one call
// (scripts/get_listing.lua).
func (s *Store) GetListingAs(ctx context.Context, subject engine.Subject, q engine.GetListing) (engine.ListingView, engine.Result, error) {
	if err := subject.Validate(); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	return s.getListing(ctx, q, subject)
}

// AttemptStatusAs is AttemptStatus for q.Subject, in its one call
// (scripts/attempt_status.lua).
func (s *Store) AttemptStatusAs(ctx context.Context, q engine.GetAttempt) (engine.AttemptStatus, engine.Result, error) {
	return s.attemptStatus(ctx, q, true)
}
