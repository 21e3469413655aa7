package redisstore_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// itemsChecked is a Redis store whose every BrowseVisible also browses
// through BrowseItems (the local index) just before, and fails the test
// when the two pages differ: the contract suite's browses, through
// expiry, drain, revocation and the rest, check the local index.
type itemsChecked struct {
	*redisstore.Store
	t *testing.T
}

func (s itemsChecked) BrowseVisible(ctx context.Context, q engine.Browse, dst []engine.ListingView) ([]engine.ListingView, bool, engine.Result, error) {
	items, inext, ir, ierr := s.Store.BrowseItems(ctx, q, nil)
	n := len(dst)
	views, more, r, err := s.Store.BrowseVisible(ctx, q, dst)
	checkItemsMatchViews(s.t, q, items, inext.More, ir, ierr, views[n:], more, r, err)
	return views, more, r, err
}

// checkItemsMatchViews fails t when a BrowseItems page is not the
// BrowseVisible page of the same query.
func checkItemsMatchViews(t testing.TB, q engine.Browse, items []engine.BrowseItem, imore bool, ir engine.Result, ierr error,
	views []engine.ListingView, more bool, r engine.Result, err error) {
	t.Helper()
	if (ierr == nil) != (err == nil) || ir.Outcome != r.Outcome {
		t.Errorf("browse %+v: BrowseItems answers %v %v, BrowseVisible %v %v", q, ir.Outcome, ierr, r.Outcome, err)
		return
	}
	if len(items) != len(views) || imore != more {
		t.Errorf("browse %+v: BrowseItems has %d items (more %v), BrowseVisible %d (more %v)", q, len(items), imore, len(views), more)
		return
	}
	for i := range items {
		it, v := &items[i], &views[i]
		if it.ID != v.ID || int(it.CurrentPlayers) != v.CurrentPlayers || it.LeaseExpiresAt != v.LeaseExpiresAt.UnixMilli() ||
			!bytes.Equal(it.Doc, v.Doc) || !reflect.DeepEqual(it.Spec, v.Spec) {
			t.Errorf("browse %+v item %d: BrowseItems %v players %d lease %d, BrowseVisible %v players %d lease %d",
				q, i, it.ID, it.CurrentPlayers, it.LeaseExpiresAt, v.ID, v.CurrentPlayers, v.LeaseExpiresAt.UnixMilli())
			return
		}
	}
}

// TestRedisStoreContractThroughLocalIndex runs the store contract suite
// with every browse also answered from the local browse index and
// compared.
func TestRedisStoreContractThroughLocalIndex(t *testing.T) {
	storetest.Run(t, func(t *testing.T, l engine.Limits, c *engine.ManualClock, k *engine.Keyring) engine.Store {
		return itemsChecked{Store: newContractStore(t, l, c, k).(*redisstore.Store), t: t}
	})
}
