package redisstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// FenceArg is the fencing token the store's calls carry now ("" without a
// registration).
func (s *Store) FenceArg() string {
	if f := s.reg.fence.Load(); f != nil {
		return f.arg
	}
	return ""
}

// StopRenewing stops the renewal goroutine, as a paused process would,
// leaving the registration as it is.
func (s *Store) StopRenewing() { s.stopRenewing() }

// RenewNow runs one renewal as the goroutine does (registering anew when
// the lease was lost).
func (s *Store) RenewNow(ctx context.Context) error { return s.renew(ctx) }

// CreateListingUnderFence sends CreateListing's call carrying fenceArg and
// skipping the local lease check: what an instance paused between its
// check and its send would do.
func (s *Store) CreateListingUnderFence(ctx context.Context, fenceArg string, cmd engine.CreateListing) (engine.Result, error) {
	m, err := s.c.Do(ctx, s.command("rdv_create_listing", s.now()+fenceArg, s.createListingArgs(&cmd))).ToMessage()
	_, r, _ := reply(m, err == nil)
	return r, err
}
