package netio

import (
	"fmt"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// dropReason says why a datagram got no answer.
type dropReason uint8

const (
	dropOversize    dropReason = iota // over stun.MaxDatagram
	dropMalformed                     // failed stun.Parse
	dropUnsupported                   // not a Binding request
	dropRateLimited                   // unsigned error over the per-source limit
	dropSizeBound                     // an unsigned answer would exceed its size bound (docs/contracts/udp.md#answers-and-their-sizes)
	dropStore                         // the store refused the batch, or did not answer an h: lookup
	dropSendFailed                    // the kernel refused the answer
	dropOfferQueue                    // Offer's bounded queue was full
	dropOfferRoute                    // no socket can reach the host's family
	// Forwarding between instances (forward.go): a push to leave from
	// another instance found its queue full, the bus did not answer, no
	// instance listened under the target's ID (it stopped); a push received
	// found the send queue full, or was not one; or it did not verify
	// (forged, or for another instance) or was stale (forward_mac.go).
	dropForwardQueue
	dropForwardFailed
	dropForwardUnreceived
	dropForwardInQueue
	dropForwardMalformed
	dropForwardForged
	dropForwardStale
	numDrops
)

var dropNames = [numDrops]string{
	"oversize", "malformed", "unsupported", "rate_limited", "size_bound",
	"store", "send_failed", "offer_queue_full", "offer_no_route",
	"forward_queue_full", "forward_failed", "forward_unreceived", "forward_in_queue_full", "forward_malformed",
	"forward_forged", "forward_stale",
}

// forwardDirection labels forwarded pushes: handed to the instance that
// must send them, or received to send from here.
type forwardDirection uint8

const (
	forwardOut forwardDirection = iota
	forwardIn
	numForwardDirections
)

var forwardDirectionNames = [numForwardDirections]string{"out", "in"}

// method labels answers by what was asked.
type method uint8

const (
	methodBinding method = iota // plain Binding
	methodPresence
	methodBindHost
	methodBindClient
	methodOffer
	methodIntroduce
	methodReportHost   // an outcome report (RDV-OUTCOME) of a host
	methodReportClient // an outcome report of a client
	methodRelayIntroduce
	numMethods
)

var methodNames = [numMethods]string{"binding", "presence", "bind_host", "bind_client", "offer", "introduce",
	"outcome_host", "outcome_client", "relay_introduce"}

// result labels the answer given.
type result uint8

const (
	resOK result = iota
	resBadRequest
	resUnauthorized
	resForbidden
	resNotFound
	resConflict
	resUnknownAttr
	resUnavailable
	resCapacity
	resPeerRefused
	numResults
)

var resultNames = [numResults]string{
	"success", "bad_request", "unauthorized", "forbidden", "not_found",
	"conflict", "unknown_attribute", "unavailable", "capacity_exceeded",
	"peer_refused",
}

// mediatorMetrics are the shared counters. Readers accumulate into a
// batchStats and flush once per batch (counters are atomics, the histogram
// takes a mutex), never per datagram.
type mediatorMetrics struct {
	in, out   *metrics.Counter
	batches   *metrics.Counter
	drops     [numDrops]*metrics.Counter
	forwarded [numForwardDirections]*metrics.Counter
	answers   [numMethods][numResults]*metrics.Counter
	batchSize *metrics.PrometheusHistogram
	// commit is the time of one store.ApplyBatch: the commit latency of a
	// batch (docs/contracts/udp.md#metrics).
	commit *metrics.PrometheusHistogram
	// foreign counts other processes' sockets on the mediator's UDP ports
	// (foreign.go).
	foreign *metrics.Gauge
}

// Metric families. Every one needs a HELP text in metricHelp: the
// exposition test (promtool check metrics) fails without one.
const (
	metricIn        = "rendezvous_udp_datagrams_in_total"
	metricOut       = "rendezvous_udp_datagrams_out_total"
	metricBatches   = "rendezvous_udp_read_batches_total"
	metricBatchSize = "rendezvous_udp_batch_size"
	metricCommit    = "rendezvous_udp_commit_duration_seconds"
	metricDropped   = "rendezvous_udp_dropped_total"
	metricAnswers   = "rendezvous_udp_answers_total"
	metricForwarded = "rendezvous_udp_forwarded_total"
	metricForeign   = "rendezvous_udp_foreign_sockets"
)

var metricHelp = map[string]string{
	metricPunchOutcomes: "Punch outcomes reported by hosts and clients (the first report of each side of an attempt), by tenant, role and path (direct, relayed, failed).",
	metricPunchConnect:  "Time from join to connected (or to giving up) reported by hosts and clients, in seconds, by tenant and path.",

	metricIn:        "UDP datagrams received by the mediator.",
	metricOut:       "UDP datagrams sent by the mediator.",
	metricBatches:   "Receive batches that returned datagrams (one recvmmsg call or portable batch read; on a remote store, topped up by non-blocking ones).",
	metricBatchSize: "Datagrams per receive batch.",
	metricCommit:    "Commit latency in seconds: time in one store ApplyBatch of a receive batch.",
	metricDropped:   "Datagrams that got no answer, by reason.",
	metricAnswers:   "UDP answers, by method asked and outcome answered.",
	metricForeign:   "UDP sockets of other processes on the mediator's ports, found by the check every 10 s (0: the ports are the mediator's alone).",
	metricForwarded: "Pushed datagrams (OFFER, INTRODUCE) forwarded between instances: out, handed to the instance whose socket the recipient's NAT mapping points at; in, received here to send.",
}

// MetricHelp is the HELP text of a metric family this package exports, or
// "" for a family it does not know.
func MetricHelp(family string) string { return metricHelp[family] }

// batchBuckets bound the batch size histogram: powers of two up to
// overlapBatch (batchSize, the most one read returns, without Overlap).
var batchBuckets = []float64{1, 2, 4, 8, 16, 32, batchSize, overlapBatch}

// commitBuckets bound the commit latency histogram, in seconds: one
// ApplyBatch of up to batchSize operations takes microseconds.
var commitBuckets = []float64{
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1,
}

func newMediatorMetrics(s *metrics.Set) *mediatorMetrics {
	m := &mediatorMetrics{
		in:        s.GetOrCreateCounter(metricIn),
		out:       s.GetOrCreateCounter(metricOut),
		batches:   s.GetOrCreateCounter(metricBatches),
		batchSize: s.GetOrCreatePrometheusHistogramExt(metricBatchSize, batchBuckets),
		commit:    s.GetOrCreatePrometheusHistogramExt(metricCommit, commitBuckets),
		foreign:   s.GetOrCreateGauge(metricForeign, nil),
	}
	for i := range m.drops {
		m.drops[i] = s.GetOrCreateCounter(fmt.Sprintf(`%s{reason=%q}`, metricDropped, dropNames[i]))
	}
	for i := range m.forwarded {
		m.forwarded[i] = s.GetOrCreateCounter(fmt.Sprintf(`%s{direction=%q}`, metricForwarded, forwardDirectionNames[i]))
	}
	for i := range m.answers {
		for j := range m.answers[i] {
			m.answers[i][j] = s.GetOrCreateCounter(fmt.Sprintf(`%s{method=%q,outcome=%q}`,
				metricAnswers, methodNames[i], resultNames[j]))
		}
	}
	return m
}

// batchStats is one goroutine's tally since its last flush. Not safe for
// concurrent use.
type batchStats struct {
	in, out int
	drops   [numDrops]int
	answers [numMethods][numResults]int
	commit  time.Duration // time in store.ApplyBatch; 0 when no op was committed
}

func (s *batchStats) flush(m *mediatorMetrics, batch int) {
	if batch > 0 {
		m.batches.Inc()
		m.batchSize.Update(float64(batch))
	}
	if s.commit > 0 {
		m.commit.Update(s.commit.Seconds())
	}
	if s.in > 0 {
		m.in.Add(s.in)
	}
	if s.out > 0 {
		m.out.Add(s.out)
	}
	for i, n := range s.drops {
		if n > 0 {
			m.drops[i].Add(n)
		}
	}
	for i := range s.answers {
		for j, n := range s.answers[i] {
			if n > 0 {
				m.answers[i][j].Add(n)
			}
		}
	}
	*s = batchStats{}
}
