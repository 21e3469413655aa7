package client

import "context"

// PoolStat is one bounded pool of the operator stats: how much of it is in
// use and its ceiling.
type PoolStat struct {
	Used    int `json:"used"`
	Ceiling int `json:"ceiling"`
}

// AdminStats is the answer of GET /v1/admin/stats (docs/contracts/http.md#routes): the
// instance, whether it is available or draining, and every pool by name
// ("listings", "presence", "attempts", "replay", "revocations",
// "idempotency").
type AdminStats struct {
	InstanceID string              `json:"instance_id"`
	Available  bool                `json:"available"`
	Draining   bool                `json:"draining"`
	Pools      map[string]PoolStat `json:"pools"`
	// AgeMS is how old the figures are: the server reads them from its
	// store at most once a second and shares them between readers.
	AgeMS int64 `json:"age_ms"`
}

// Stats reads the operator stats (operator role; others get an *APIError
// matching ErrForbidden).
func (a *API) Stats(ctx context.Context) (*AdminStats, error) {
	var s AdminStats
	if err := a.do(ctx, &call{op: "admin stats", method: "GET", path: "/v1/admin/stats", out: &s}); err != nil {
		return nil, err
	}
	return &s, nil
}
