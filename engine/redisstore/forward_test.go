package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// receiver is one instance listening for forwards in the background.
type receiver struct {
	got        chan string
	subscribed chan struct{}
	done       chan struct{}
	stop       context.CancelFunc
}

func listen(t *testing.T, s *redisstore.Store) *receiver {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &receiver{got: make(chan string, 16), subscribed: make(chan struct{}, 16), done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(r.done)
		s.ReceiveForwards(ctx, func(p string) { r.got <- p }, func() { r.subscribed <- struct{}{} })
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	r.waitSubscribed(t)
	return r
}

func (r *receiver) waitSubscribed(t *testing.T) {
	t.Helper()
	select {
	case <-r.subscribed:
	case <-time.After(10 * time.Second):
		t.Fatal("no subscription within 10s")
	}
}

func (r *receiver) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-r.got:
		if got != want {
			t.Fatalf("received %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("nothing received within 10s, want %q", want)
	}
}

// expectNothing checks that nothing else arrived: the store's deliveries
// are in order, so a marker sent last and received proves none was
// pending before it.
func (r *receiver) expectNothing(t *testing.T, from *redisstore.Store, to engine.UUID) {
	t.Helper()
	forward(t, from, to, "marker", true)
	r.expect(t, "marker")
}

func forward(t *testing.T, from *redisstore.Store, to engine.UUID, payload string, wantDelivered bool) {
	t.Helper()
	delivered, err := from.Forward(context.Background(), to, []byte(payload))
	if err != nil || delivered != wantDelivered {
		t.Fatalf("Forward to %v: delivered %v, err %v; want delivered %v", to, delivered, err, wantDelivered)
	}
}

// TestForwardReachesOnlyTheNamedInstance: a payload forwarded to an
// instance reaches that instance only, byte for byte (binary included), as
// soon as ReceiveForwards reported the subscription; a payload to an
// instance nobody listens as (stopped, or never started) is reported
// undelivered. After its connection is killed, the receiver subscribes
// again by itself and receives again.
func TestForwardReachesOnlyTheNamedInstance(t *testing.T) {
	a, k, _ := newOneListingStore(t, engine.DefaultLimits(), nil)
	b := secondInstance(t, a, k)
	ra, rb := listen(t, a), listen(t, b)

	binary := "\x01o\x00\xff" + string(make([]byte, 64))
	forward(t, a, b.InstanceID(), binary, true)
	rb.expect(t, binary)
	forward(t, b, a.InstanceID(), "to a", true)
	ra.expect(t, "to a")
	rb.expectNothing(t, a, b.InstanceID())
	ra.expectNothing(t, b, a.InstanceID())
	forward(t, a, engine.NewUUID(), "to nobody", false)

	if n, err := redisClient(t).Do(context.Background(), redisClient(t).B().ClientKill().TypePubsub().Build()).AsInt64(); err != nil || n < 2 {
		t.Fatalf("CLIENT KILL TYPE pubsub: %d killed, %v", n, err)
	}
	ra.waitSubscribed(t)
	rb.waitSubscribed(t)
	forward(t, a, b.InstanceID(), "after the loss", true)
	rb.expect(t, "after the loss")

	rb.stop()
	<-rb.done
	forward(t, a, b.InstanceID(), "after b stopped", false)
	ra.expectNothing(t, b, a.InstanceID())
}
