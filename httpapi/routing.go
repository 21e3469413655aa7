package httpapi

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// MediatorRouter is implemented by a store shared by several instances
// (the Redis store's instance registry): it chooses which instance's
// mediator a listing's host and its clients talk to. Either method answers
// "" when the store has no registry; the API then names
// Config.MediatorAddr, as it does for a store without routing.
type MediatorRouter interface {
	// NewListingMediator is the mediator a new listing's presence goes to.
	NewListingMediator(id engine.ListingID) string
	// ListingMediator is where the listing's host presence last arrived
	// (while that instance is live and not draining), else the choice for
	// a new listing.
	ListingMediator(ctx context.Context, id engine.ListingID) string
}

// newListingMediator is the mediator a created listing's answer names.
func (a *API) newListingMediator(id engine.ListingID) string {
	if a.router != nil {
		if m := a.router.NewListingMediator(id); m != "" {
			return m
		}
	}
	return a.mediator
}

// listingMediator is the mediator a join attempt's answer names, and a
// listing's current one.
func (a *API) listingMediator(id engine.ListingID) string {
	if a.router != nil {
		if m := a.router.ListingMediator(context.Background(), id); m != "" {
			return m
		}
	}
	return a.mediator
}
