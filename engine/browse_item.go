package engine

import "context"

// BrowseItem is one listing of a browse page as a client may see it: the
// pre-encoded document and the few live fields, nothing else (no owner,
// lease, handle or host endpoint). It is a fifth of a ListingView's size
// and needs a third of the memory reads to fill.
type BrowseItem struct {
	ID   ListingID
	Doc  []byte       // immutable, shared: CreateListing.Doc
	Spec *ListingSpec // immutable, shared (for a listing stored without a Doc)
	// CurrentPlayers is the live count (renew may change it).
	CurrentPlayers int32
	// LeaseExpiresAt is the lease's wall-clock deadline in Unix
	// milliseconds (informational, as ListingView.LeaseExpiresAt).
	LeaseExpiresAt int64
}

// ItemBrowser is implemented by stores that can answer a browse with
// BrowseItems: the same page, in the same order, with the same more flag,
// outcome and errors as Store.BrowseVisible, at a lower cost. The in-memory
// store (engine/memstore) implements it; a transport should use it when the
// store does.
type ItemBrowser interface {
	BrowseItems(ctx context.Context, q Browse, dst []BrowseItem) (items []BrowseItem, more bool, r Result, err error)
}
