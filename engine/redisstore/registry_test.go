package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// registeredStore is a store with an instance lease on deployment name,
// registered as advertising addr.
func registeredStore(t *testing.T, name, addr string, lease time.Duration, k *engine.Keyring) *redisstore.Store {
	t.Helper()
	return registeredStoreOn(t, redisClient(t), name, addr, lease, k)
}

// registeredStoreOn is registeredStore on the server c is connected to.
func registeredStoreOn(t *testing.T, c rueidis.Client, name, addr string, lease time.Duration, k *engine.Keyring) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(context.Background(), redisstore.Config{
		Client: c, Name: name, Limits: engine.DefaultLimits(), Keyring: k, InstanceLease: lease,
	})
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	if err := s.Register(context.Background(), addr); err != nil {
		t.Fatalf("Register: %v", err)
	}
	t.Cleanup(func() { _ = s.Leave(context.Background()) })
	return s
}

// observer is an unfenced store on name, to read the shared state.
func observer(t *testing.T, name string, k *engine.Keyring) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(context.Background(), redisstore.Config{
		Client: redisClient(t), Name: name, Limits: engine.DefaultLimits(), Keyring: k,
	})
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	return s
}

func registryListing(key string) engine.CreateListing {
	return engine.CreateListing{
		Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "publisher", IdempotencyKey: key,
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4},
	}
}

func TestRegisterNeedsAnInstanceLease(t *testing.T) {
	s := observer(t, freshName(), engine.RandomKeyring())
	if err := s.Register(context.Background(), "127.0.0.1:3478"); !errors.Is(err, redisstore.ErrNotFenced) {
		t.Fatalf("Register without InstanceLease = %v, want ErrNotFenced", err)
	}
}

func TestRegistryListsInstancesWithDistinctEpochs(t *testing.T) {
	name, k := freshName(), engine.RandomKeyring()
	a := registeredStore(t, name, "127.0.0.1:4001", time.Second, k)
	b := registeredStore(t, name, "127.0.0.1:4002", time.Second, k)
	if a.Epoch() == 0 || b.Epoch() <= a.Epoch() {
		t.Fatalf("epochs a=%d b=%d: want both set, b's later", a.Epoch(), b.Epoch())
	}
	got := map[string]string{}
	for _, in := range b.Instances() {
		got[in.ID] = in.Addr
	}
	if got[a.InstanceID().String()] != "127.0.0.1:4001" || got[b.InstanceID().String()] != "127.0.0.1:4002" || len(got) != 2 {
		t.Fatalf("instances = %v, want a and b with their addresses", got)
	}
	if err := a.Leave(context.Background()); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if err := b.RenewNow(context.Background()); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if l := b.Instances(); len(l) != 1 || l[0].ID != b.InstanceID().String() {
		t.Fatalf("after a left, instances = %v, want b alone", l)
	}
	if _, r, _ := a.CreateListing(context.Background(), registryListing("after-leave")); r.Outcome != engine.ServiceUnavailable {
		t.Fatalf("CreateListing after Leave = %v, want ServiceUnavailable", r.Outcome)
	}
}

// An instance whose lease lapsed (its renewals stopped, as in a paused
// process) stops serving before Redis lets the lease expire, and a call it
// sends with its old epoch anyway (paused between check and send) is
// refused by the script: it changes nothing. Renewing again registers a
// new epoch, under which the store serves; the old epoch stays refused.
func TestStaleEpochCommitsNothing(t *testing.T) {
	name, k := freshName(), engine.RandomKeyring()
	const lease = 600 * time.Millisecond
	s := registeredStore(t, name, "127.0.0.1:4001", lease, k)
	obs := observer(t, name, k)
	if _, r, err := s.CreateListing(context.Background(), registryListing("before")); err != nil || !r.OK() {
		t.Fatalf("CreateListing while registered: %v %v", r.Outcome, err)
	}
	oldEpoch, oldFence := s.Epoch(), s.FenceArg()
	s.StopRenewing()
	// The lease's deadline in Redis (server time, µs; one clock here).
	dl, err := redisClient(t).Do(context.Background(), redisClient(t).B().Zscore().Key("rdv:{"+name+"}:nexp").
		Member(s.InstanceID().String()).Build()).AsFloat64()
	if err != nil {
		t.Fatalf("the lease deadline: %v", err)
	}
	expiry := time.UnixMicro(int64(dl))

	// Locally: the store stops serving before Redis lets the lease expire.
	for s.Epoch() != 0 && time.Now().Before(expiry.Add(time.Second)) {
		time.Sleep(5 * time.Millisecond)
	}
	if stopped := time.Now(); s.Epoch() != 0 || !stopped.Before(expiry) {
		t.Fatalf("the store stopped serving at %v, its lease expires in Redis at %v: want before", stopped, expiry)
	}
	before := obs.Snapshot()
	if _, r, _ := s.CreateListing(context.Background(), registryListing("lapsed")); r.Outcome != engine.ServiceUnavailable {
		t.Fatalf("CreateListing with a lapsed lease = %v, want ServiceUnavailable", r.Outcome)
	}
	if s.Available() {
		t.Fatal("Available with a lapsed lease")
	}

	// In Redis: wait until the lease has expired there too, then send anyway.
	time.Sleep(time.Until(expiry) + 10*time.Millisecond)
	_, err = s.CreateListingUnderFence(context.Background(), oldFence, registryListing("expired"))
	if err == nil || !strings.Contains(err.Error(), "FENCED") {
		t.Fatalf("a write under an expired lease: err %v, want FENCED", err)
	}
	if after := obs.Snapshot(); after != before {
		t.Fatalf("a refused write changed the state:\nbefore %s\nafter %s", before, after)
	}

	if err := s.RenewNow(context.Background()); err != nil {
		t.Fatalf("renew after the lease expired: %v", err)
	}
	if s.Epoch() <= oldEpoch {
		t.Fatalf("epoch after rejoining = %d, want above %d", s.Epoch(), oldEpoch)
	}
	if _, r, err := s.CreateListing(context.Background(), registryListing("rejoined")); err != nil || !r.OK() {
		t.Fatalf("CreateListing after rejoining: %v %v", r.Outcome, err)
	}
	before = obs.Snapshot()
	if _, err := s.CreateListingUnderFence(context.Background(), oldFence, registryListing("superseded")); err == nil || !strings.Contains(err.Error(), "FENCED") {
		t.Fatalf("a write under a superseded epoch: err %v, want FENCED", err)
	}
	if after := obs.Snapshot(); after != before {
		t.Fatalf("a refused write changed the state:\nbefore %s\nafter %s", before, after)
	}
}

// A fenced store's batch (the fence rides in the one call) allocates as
// an unfenced one's: a fixed number per batch. The lease is long so that
// no renewal runs while allocations are counted.
func TestFencedApplyBatchAllocatesPerBatchNotPerOp(t *testing.T) {
	k := engine.RandomKeyring()
	s := registeredStore(t, freshName(), "127.0.0.1:4001", time.Minute, k)
	batchAllocsFixed(t, s, k)
}

// A failover to a replica that had not received the last registrations
// loses them and the epoch counter; the epoch an instance gets when it
// registers again is still above every one it held.
func TestEpochNeverReusedAfterTheRegistryIsLost(t *testing.T) {
	name, k := freshName(), engine.RandomKeyring()
	s := registeredStore(t, name, "127.0.0.1:4001", time.Second, k)
	old := s.Epoch()
	c := redisClient(t)
	p := "rdv:{" + name + "}:"
	for _, cmd := range [][]string{{"DEL", p + "nepoch", p + "n:" + s.InstanceID().String()}, {"ZREM", p + "nexp", s.InstanceID().String()}} {
		if err := c.Do(context.Background(), c.B().Arbitrary(cmd...).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RenewNow(context.Background()); err != nil {
		t.Fatalf("renew after the registry was lost: %v", err)
	}
	if s.Epoch() <= old {
		t.Fatalf("epoch after the registry was lost = %d, want above %d", s.Epoch(), old)
	}
}
