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
	fp := cmd.Hash()
	j := &cmd.Join
	client, rev := s.subjectKey(j.Client), s.tenantRevKey(j.Tenant, j.Client)
	ik := s.idemKey(idemQuickJoin, j.Tenant, j.Client, j.IdempotencyKey)
	tk := s.tenantKey(cmd.Query.Tenant)
	w := QuickJoinWalk(&cmd.Query, 1)
	var draft attemptDraft
	s.draftAttempt(&draft)
	now, err := s.begin(ctx)
	if err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	defer s.end()
	if r, stop := s.admitNewWork(client, &rev); stop {
		return engine.AttemptView{}, r, nil
	}
	if v, r, found := s.replayAttempt(&ik, &fp, now); found {
		return v, r, nil
	}
	var page BrowsePage
	s.scopeOf(tk, &w).Walk(&w, s.bents, s.browseVersion, &page)
	if page.N == 0 {
		return engine.AttemptView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	return s.joinListing(page.Slots[0], &draft, client, &ik, &fp, j.RelayOnly, now)
}
