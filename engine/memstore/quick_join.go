package memstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

var _ engine.QuickJoiner = (*Store)(nil)

// QuickJoin joins the best listing cmd.Query finds
// (docs/contracts/semantics.md#quick-join) in one transition: the walk
// QuickJoinWalk over the query's browse indexes (visible listings only, so
// found, of the tenant and protocol, with fresh presence, and not full)
// picks the listing, and the join's own checks follow under the same
// commit lock, so no renewal can fill it in between. Order: input ->
// ServiceUnavailable -> Draining -> Revoked(client) -> idempotency (its own
// namespace, the query in the fingerprint) -> NotFound (nothing matches
// within engine.BrowseExamineMax entries) -> pools and quotas as a join.
func (s *Store) QuickJoin(ctx context.Context, cmd engine.QuickJoin) (engine.AttemptView, engine.Result, error) {
	if err := engine.ValidateQuickJoin(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	tk := s.tenantKey(cmd.Query.Tenant)
	w := QuickJoinWalk(&cmd.Query, 1)
	return s.join(ctx, idemQuickJoin, &cmd.Join, cmd.Hash(), func() int32 {
		var page BrowsePage
		s.scopeOf(tk, &w).Walk(&w, s.bents, s.browseVersion, &page)
		if page.N == 0 {
			return -1
		}
		return page.Slots[0]
	})
}
