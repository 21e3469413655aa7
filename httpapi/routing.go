package httpapi

import (
	"github.com/rendezvous/rendezvous/engine"
)

// MediatorRouter is implemented by a store shared by several instances
// (the Redis store's instance registry): it chooses which instance's
// mediator a listing's host and its clients talk to, from what the store
// knows locally (no store call: a create, join or renewal stays one round
// trip). Either method answers "" when the store has no registry; the API
// then names Config.MediatorAddr, as it does for a store without routing.
type MediatorRouter interface {
	// NewListingMediator is the mediator a new listing's presence goes to.
	NewListingMediator(id engine.ListingID) string
	// ListingMediator is the mediator of listing id whose host presence
	// last reached instance presence (ListingView.PresenceInstance,
	// AttemptView.HostPresenceInstance): that instance's while it is live
	// and not draining, else the choice for a new listing.
	ListingMediator(presence engine.UUID, id engine.ListingID) string
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
// renewed listing's current one; presence is the instance the view says
// the host's presence last reached.
func (a *API) listingMediator(presence engine.UUID, id engine.ListingID) string {
	if a.router != nil {
		if m := a.router.ListingMediator(presence, id); m != "" {
			return m
		}
	}
	return a.mediator
}
