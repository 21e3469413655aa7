package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// CreateListingsPipelined runs CreateListing for every cmd, sent in
// pipelined chunks (DoMulti): the same function and arguments, so tests
// can fill a large store quickly. Every cmd must be valid and succeed.
func (s *Store) CreateListingsPipelined(ctx context.Context, cmds []engine.CreateListing) ([]engine.ListingView, error) {
	views := make([]engine.ListingView, 0, len(cmds))
	const chunk = 1000
	for i := 0; i < len(cmds); i += chunk {
		batch := make(rueidis.Commands, 0, chunk)
		now := s.now()
		for j := i; j < min(i+chunk, len(cmds)); j++ {
			batch = append(batch, s.command("rdv_create_listing", now, s.createListingArgs(&cmds[j])))
		}
		for j, res := range s.c.DoMulti(ctx, batch...) {
			m, err := res.ToMessage()
			_, r, rest := reply(m, err == nil)
			v, r, _ := s.listingResult(r, rest)
			if !r.OK() {
				return nil, fmt.Errorf("listing %d: %v (%v)", i+j, r.Outcome, err)
			}
			views = append(views, v)
		}
	}
	return views, nil
}

// DeploymentName is the Config.Name the store was made with.
func (s *Store) DeploymentName() string {
	return strings.TrimSuffix(strings.TrimPrefix(s.prefix, "rdv:{"), "}:")
}
