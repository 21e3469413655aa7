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
	// Attributes are the live indexed attributes (immutable, shared).
	Attributes Attributes
	// LeaseExpiresAt is the lease's wall-clock deadline in Unix
	// milliseconds (informational, as ListingView.LeaseExpiresAt).
	LeaseExpiresAt int64
}

// ItemBrowser is implemented by stores that can answer a browse with
// BrowseItems: the same page, in the same order, with the same outcome and
// errors as Store.BrowseVisible (whose more flag is next.More), at a lower
// cost, and where the walk goes on. Both stores implement it; a transport
// should use it when the store does.
type ItemBrowser interface {
	BrowseItems(ctx context.Context, q Browse, dst []BrowseItem) (items []BrowseItem, next BrowseNext, r Result, err error)
}

// QuickJoiner is implemented by stores that can join the best listing a
// browse query finds (docs/contracts/semantics.md#quick-join).
type QuickJoiner interface {
	QuickJoin(ctx context.Context, cmd QuickJoin) (AttemptView, Result, error)
}

// QuickJoin creates a join attempt on the first listing of Query's walk
// with a free slot, in one transition with the join's own checks:
// Query.Order, Desc and the continuation fields are ignored, the walk is
// OrderCurrentPlayers descending (most players first, then the highest
// listing ID) over listings that are not full. Join.Listing is ignored;
// the attempt names the listing chosen. NotFound when nothing matches.
// Idempotent on Join.IdempotencyKey like CreateJoinAttempt, with the
// query in the fingerprint: a replay answers the attempt first created.
type QuickJoin struct {
	Join  CreateAttempt
	Query Browse
}
