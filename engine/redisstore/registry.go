package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// The instance registry (scripts/instance_registry.lua). With
// Config.InstanceLease set, the store serves only while this process holds
// a live registration: Register joins the deployment with the advertised
// mediator address and gets a fencing epoch; a goroutine renews the lease
// every lease/4. Every call carries "@<instance ID>:<epoch>" after "now",
// and the script refuses it (before writing anything) when that
// registration has expired or was superseded. Locally, the store stops
// calling Redis at all once its last accepted renewal was sent more than
// lease − lease/3 ago (monotonic clock): it answers ServiceUnavailable
// before its lease can have expired in Redis, since Redis computed that
// deadline from a time no earlier than the renewal's sending. A refused
// renewal (the lease expired, e.g. the process was paused) registers anew
// with a new epoch, so calls begun under the old epoch can never commit.

// Instance is one live registration of the deployment.
type Instance struct {
	ID       string // Store.InstanceID of that process
	Addr     string // its advertised mediator host:port
	Draining bool   // drained instances keep their lease but get no listing
	// uuid is ID parsed; until is when its lease may expire at the
	// earliest (monotonic): the renewal that listed it was sent before
	// Redis measured the lease left.
	uuid  engine.UUID
	until time.Time
}

// serving reports whether listings and attempts may be routed to in at
// now: its lease is live and it is not draining.
func (in *Instance) serving(now time.Time) bool {
	return !in.Draining && in.Addr != "" && now.Before(in.until)
}

// fence is one registration as calls carry it.
type fence struct {
	arg   string    // "@<id>:<epoch>", appended to ARGV[1]
	epoch string    // decimal
	until time.Time // monotonic: calls are sent only before it
}

// registration is the store's registry state; lease 0 means unfenced (no
// registry: tests and tools that own their Redis alone).
type registration struct {
	lease    time.Duration
	addr     string
	log      *slog.Logger
	fence    atomic.Pointer[fence]
	live     atomic.Pointer[[]Instance]
	draining atomic.Bool
	kick     chan struct{} // a fenced refusal asks for a renewal now
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// ErrNotFenced is Register's error for a store made without InstanceLease.
var ErrNotFenced = errors.New("redisstore: the store has no instance lease (Config.InstanceLease)")

// InstanceLease reports Config.InstanceLease (0: no registry).
func (s *Store) InstanceLease() time.Duration { return s.reg.lease }

// Register joins the deployment's registry advertising mediator address
// addr, and keeps the registration renewed until Leave. Until it returns
// nil, every call of the store answers ServiceUnavailable.
func (s *Store) Register(ctx context.Context, addr string) error {
	if s.reg.lease <= 0 {
		return ErrNotFenced
	}
	s.reg.addr = addr
	if err := s.register(ctx); err != nil {
		return err
	}
	s.reg.kick, s.reg.stop, s.reg.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go s.keepRegistered()
	return nil
}

// Epoch is the current registration's fencing epoch, 0 when the store
// holds none (not registered, or its lease lapsed locally).
func (s *Store) Epoch() int64 {
	f := s.reg.fence.Load()
	if f == nil || !time.Now().Before(f.until) {
		return 0
	}
	n, _ := strconv.ParseInt(f.epoch, 10, 64)
	return n
}

// Instances is the deployment's live registrations as of the last renewal
// (a lease among them may have expired since: routing checks each one's).
func (s *Store) Instances() []Instance {
	if l := s.reg.live.Load(); l != nil {
		return *l
	}
	return nil
}

// DrainInstance marks this instance draining in the registry: it keeps
// its lease (so it still serves datagrams and completes attempts under
// way) but no listing is routed to it any more. The shared state is not
// drained (BeginDrain drains the whole deployment).
func (s *Store) DrainInstance(ctx context.Context) error {
	s.reg.draining.Store(true)
	f := s.reg.fence.Load()
	if f == nil {
		return ErrUnavailable // the next registration carries the flag
	}
	n, err := s.registryCall(ctx, "rdv_instance_drain", s.id.String(), f.epoch).AsInt64()
	if err != nil {
		return errors.Join(ErrUnavailable, err)
	}
	if n != 1 {
		return ErrUnavailable
	}
	return nil
}

// Leave stops renewing and removes the registration, so the deployment
// routes nothing more to this instance; every later call of the store
// answers ServiceUnavailable.
func (s *Store) Leave(ctx context.Context) error {
	s.stopRenewing()
	f := s.reg.fence.Swap(nil)
	if f == nil {
		return nil
	}
	return s.registryCall(ctx, "rdv_instance_leave", s.id.String(), f.epoch).Error()
}

// stopRenewing ends keepRegistered (once; a no-op before Register).
func (s *Store) stopRenewing() {
	if s.reg.stop == nil {
		return
	}
	s.reg.stopOnce.Do(func() { close(s.reg.stop) })
	<-s.reg.done
}

// keepRegistered renews every lease/4 (or at once after a fenced refusal)
// until Leave. A run of failures is logged at its start and its end, not
// four times a second.
func (s *Store) keepRegistered() {
	defer close(s.reg.done)
	t := time.NewTicker(s.reg.lease / 4)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-s.reg.stop:
			return
		case <-t.C:
		case <-s.reg.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.reg.lease/4)
		err := s.renew(ctx)
		cancel()
		switch {
		case err != nil && !failing:
			s.reg.log.Warn("instance lease not renewed; the instance stops serving if this lasts", "err", err,
				"stops_after", (s.reg.lease - s.reg.lease/3).String())
		case err == nil && failing:
			s.reg.log.Info("instance lease renewed again", "epoch", s.Epoch())
		}
		failing = err != nil
	}
}

// renew extends the current registration, or registers anew when there is
// none or Redis refused it (expired or superseded).
func (s *Store) renew(ctx context.Context) error {
	f := s.reg.fence.Load()
	if f == nil {
		return s.rejoin(ctx)
	}
	sent := time.Now()
	a, err := s.registryCall(ctx, "rdv_instance_renew", s.id.String(), f.epoch, s.leaseTicks()).ToArray()
	if err != nil {
		return err // the fence lapses on its own
	}
	if n, _ := a[0].AsInt64(); n == 1 {
		s.reg.live.Store(s.instancesOf(a[1:], sent))
		s.reg.fence.CompareAndSwap(f, &fence{arg: f.arg, epoch: f.epoch, until: s.fenceUntil(sent)})
		return nil
	}
	s.reg.fence.CompareAndSwap(f, nil)
	s.reg.log.Warn("instance lease lost (expired or superseded); registering again", "epoch", f.epoch)
	return s.rejoin(ctx)
}

// rejoin registers anew after the registration was lost.
func (s *Store) rejoin(ctx context.Context) error {
	if err := s.register(ctx); err != nil {
		return err
	}
	s.reg.log.Info("instance registered again", "epoch", s.reg.fence.Load().epoch, "mediator", s.reg.addr)
	return nil
}

// register takes a new registration (a new epoch).
func (s *Store) register(ctx context.Context) error {
	sent := time.Now()
	drain := "0"
	if s.reg.draining.Load() {
		drain = "1"
	}
	var args [irArgs]string
	args[irInstance], args[irAddr], args[irLease], args[irDrain] = s.id.String(), s.reg.addr, s.leaseTicks(), drain
	a, err := s.registryCall(ctx, "rdv_instance_register", args[:]...).ToArray()
	if err != nil {
		return err
	}
	epoch, err := a[0].ToString()
	if err != nil {
		return err
	}
	s.reg.live.Store(s.instancesOf(a[1:], sent))
	s.reg.fence.Store(&fence{arg: "@" + s.id.String() + ":" + epoch, epoch: epoch, until: s.fenceUntil(sent)})
	return nil
}

// fenceUntil is how long a registration renewed (or taken) by a call sent
// at sent may serve: Redis set its deadline to at least sent + lease; a
// third of the lease is left as margin for clock rates and the call's way.
func (s *Store) fenceUntil(sent time.Time) time.Time {
	return sent.Add(s.reg.lease - s.reg.lease/3)
}

func (s *Store) leaseTicks() string { return strconv.FormatInt(int64(s.reg.lease/s.tick), 10) }

// registryCall runs a registry function unfenced (it checks the epoch
// itself), bounded by the store's timeout.
func (s *Store) registryCall(ctx context.Context, fn string, args ...string) rueidis.RedisResult {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res := s.c.Do(ctx, s.command(fn, s.now(), args))
	if err := res.Error(); err != nil && missingFunction(err) && loadLibrary(ctx, s.c) == nil {
		res = s.c.Do(ctx, s.command(fn, s.now(), args))
	}
	return res
}

// callNow is ARGV[1] of a transition: "now" and, with a registry, the
// fence. live is false when the store holds no registration it may serve
// under: the call must not be sent.
func (s *Store) callNow() (now string, f *fence, live bool) {
	now = s.now()
	if s.reg.lease <= 0 {
		return now, nil, true
	}
	f = s.reg.fence.Load()
	if f == nil || !time.Now().Before(f.until) {
		return "", nil, false
	}
	if now == "" {
		return f.arg, f, true
	}
	return now + f.arg, f, true
}

// fenced handles a call Redis refused as fenced: the store stops serving
// under f at once and renews (registering anew) without waiting.
func (s *Store) fenced(f *fence, err error) {
	if f == nil {
		return
	}
	if e, ok := rueidis.IsRedisErr(err); !ok || !strings.HasPrefix(e.Error(), "FENCED") {
		return
	}
	s.reg.fence.CompareAndSwap(f, nil)
	select {
	case s.reg.kick <- struct{}{}:
	default:
	}
}

// instancesOf reads the {id, addr, draining, lease left}... of a registry
// answer to a call sent at sent.
func (s *Store) instancesOf(a []rueidis.RedisMessage, sent time.Time) *[]Instance {
	l := make([]Instance, 0, len(a)/4)
	for i := 0; i+3 < len(a); i += 4 {
		id, _ := a[i].ToString()
		addr, _ := a[i+1].ToString()
		d, _ := a[i+2].AsInt64()
		left, _ := a[i+3].AsInt64()
		l = append(l, Instance{ID: id, Addr: addr, Draining: d == 1, uuid: parseID(id), until: sent.Add(s.duration(left))})
	}
	return &l
}

// LibraryVersion is the version of this build's function library (a hash
// of its source): instances whose versions differ must not serve one
// deployment at the same time (docs/deployment.md, upgrades).
func LibraryVersion() string { return libraryVersion }
