package engine

// FairShare reports whether a tenant holding held of a pool's used records
// (pool is its ceiling, quota the tenant's configured quota of it) may take
// one more (docs/contracts/semantics.md#quotas). Below its quota, a tenant
// alone in the pool may fill it up to the quota; while other tenants hold
// records of the pool, only while it holds fewer than the pool has free.
//
// So every admission while another tenant holds records leaves at least
// as many records free as the admitted tenant held before it: a tenant
// that holds fewer records than are free is never refused for the others'
// sake, however many tenants flood the pool, and the pool's last free
// record goes only to a tenant that held none of it. It reads three
// counts every store keeps already (O(1), no scan), so both stores decide
// it identically inside the creating transition. The caller has checked
// that the pool itself is not full.
func FairShare(held, used, pool, quota int) bool {
	return held < quota && (held == used || held < pool-used)
}
