package redisstore

import (
	"context"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// Forwarding between instances (netio.Forwarder) is Redis pub/sub: one
// channel per instance, "<prefix>fwd:<instance ID>". Pub/sub keeps nothing:
// a payload published while its instance is not subscribed (stopped,
// reconnecting, or too slow for the server's pubsub output buffer limit) is
// lost, and PUBLISH says whether anyone received it. That is the delivery
// the pushes need (at most once, never late): a lost OFFER is recovered by
// the host's next presence refresh, a lost INTRODUCE by the peer's bind
// retransmission, and a stream per instance would have to be trimmed and
// would grow for an instance that died.

// resubscribeWait paces subscription attempts after a lost connection.
const resubscribeWait = 100 * time.Millisecond

// primaryCheckEvery is how often a subscription checks that the store's
// client still sends to the node it subscribed on. Under Sentinel the
// client follows a promotion by itself (about every second), but a
// dedicated connection stays on the old primary, which, when it is still
// up, keeps it subscribed until Sentinel demotes it (up to its 10 s INFO
// period later): forwards published on the new primary meanwhile are lost.
const primaryCheckEvery = 250 * time.Millisecond

// sendsTo is the address the store's client sends commands to now: the
// primary it follows under Sentinel, the one server otherwise.
func (s *Store) sendsTo() string {
	for addr := range s.c.Nodes() {
		return addr
	}
	return ""
}

func (s *Store) forwardChannel(id engine.UUID) string { return s.prefix + "fwd:" + id.String() }

// Forward publishes payload on instance to's channel; delivered reports
// whether an instance was subscribed to it. Bounded by the store's timeout.
func (s *Store) Forward(ctx context.Context, to engine.UUID, payload []byte) (delivered bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := s.c.Do(cctx, s.c.B().Publish().Channel(s.forwardChannel(to)).Message(rueidis.BinaryString(payload)).Build()).AsInt64()
	return n > 0, err
}

// ReceiveForwards subscribes to this instance's channel on a dedicated
// connection and calls deliver with each payload until ctx ends,
// subscribing again (paced by resubscribeWait) whenever the connection is
// lost. subscribed is called each time the subscription is confirmed.
func (s *Store) ReceiveForwards(ctx context.Context, deliver func(payload string), subscribed func()) {
	for ctx.Err() == nil {
		s.receiveOnce(ctx, deliver, subscribed)
		select {
		case <-ctx.Done():
		case <-time.After(resubscribeWait):
		}
	}
}

// receiveOnce holds one subscription until ctx ends, its connection fails
// or the store's client follows another primary.
func (s *Store) receiveOnce(ctx context.Context, deliver func(payload string), subscribed func()) {
	node := s.sendsTo() // before Dedicate: a switch in between only costs one more subscription
	c, release := s.c.Dedicate()
	defer release()
	lost := c.SetPubSubHooks(rueidis.PubSubHooks{OnMessage: func(m rueidis.PubSubMessage) { deliver(m.Message) }})
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	err := c.Do(cctx, c.B().Subscribe().Channel(s.forwardChannel(s.id)).Build()).Error()
	cancel()
	if err != nil {
		return
	}
	subscribed()
	check := time.NewTicker(primaryCheckEvery)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lost:
			return
		case <-check.C:
			if s.sendsTo() != node {
				return
			}
		}
	}
}
