package httpapi

// A write the store applied on its primary but no replica confirmed in time
// (engine.Result.NotReplicated; the deployment asks acknowledged writes to
// be replicated): 503 service_unavailable with the reason "not_replicated",
// so a client knows the write may have been applied and retries it with
// the same Idempotency-Key (a renewal with the same expected_version).

const notReplicatedDetail = "the write was not confirmed by a replica in time; retry it"

// retryAfterNotReplicated is short: a replica catches up, or a failover
// ends, within about a second, and the SDK retries by itself a 503 whose
// Retry-After is at most its MaxRetryAfter (2 s by default).
const retryAfterNotReplicated = "1"

func appendNotReplicated(b []byte) []byte { return append(b, `,"reason":"not_replicated"`...) }
