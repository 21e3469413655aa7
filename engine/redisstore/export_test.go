package redisstore

import (
	"context"
	"fmt"
	"strconv"
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

// NextCallRef is the call reference the store's next call will carry.
func (s *Store) NextCallRef() string {
	ref := s.refs.ref(s.refs.count.Load() + 1)
	return string(ref[:])
}

// TakeCallRef writes a live call entry for ref as another instance's
// call would (instance inst, due at deadline ticks).
func (s *Store) TakeCallRef(ctx context.Context, ref, inst string, deadline int64) error {
	return s.c.Do(ctx, s.c.B().Eval().Script(`redis.call('SET', KEYS[1] .. 'c:' .. ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1] .. 'cexp', ARGV[3], ARGV[1])
return 1`).Numkeys(1).Key(s.prefix).Arg(ref, inst, strconv.FormatInt(deadline, 10)).Build()).Error()
}

// CallEntry is the instance call reference ref's entry names ("" and
// false when it has none).
func (s *Store) CallEntry(ctx context.Context, ref string) (string, bool) {
	inst, err := s.c.Do(ctx, s.c.B().Get().Key(s.prefix+"c:"+ref).Build()).ToString()
	return inst, err == nil
}

// PresenceRecordOf is listing id's presence record as Snapshot shows it.
func (s *Store) PresenceRecordOf(ctx context.Context, id engine.ListingID) string {
	field, _ := s.c.Do(ctx, s.c.B().Hget().Key(s.prefix+"l:"+id.String()).Field("prf").Build()).ToString()
	rec, _ := s.c.Do(ctx, s.c.B().Hget().Key(s.prefix+"pr").Field(field).Build()).ToString()
	return showPresenceRecord([2]string{field, rec})[1]
}

// RunScript runs a Lua script with KEYS[1] the deployment's prefix.
func (s *Store) RunScript(ctx context.Context, script string, args ...string) error {
	return s.c.Do(ctx, s.c.B().Eval().Script(script).Numkeys(1).Key(s.prefix).Arg(args...).Build()).Error()
}

// CheckBrowseIndex verifies every scope of the instance's local browse
// index (memstore.BrowseScope.Check) and that the scopes hold each listing
// of the index once per scope it belongs to.
func (s *Store) CheckBrowseIndex() error {
	m := &s.mirror
	m.mu.RLock()
	defer m.mu.RUnlock()
	x := m.idx
	if x == nil {
		return nil
	}
	held := 0
	for k, sc := range x.sets {
		if err := sc.Check(x.ents); err != nil {
			return fmt.Errorf("scope %+v: %w", k, err)
		}
		held += sc.Len()
	}
	want := 0
	for _, li := range x.byID {
		want++
		if x.rest[li].region != "" {
			want++
		}
	}
	if held != want {
		return fmt.Errorf("the scopes hold %d entries, the index's listings belong in %d", held, want)
	}
	return nil
}
