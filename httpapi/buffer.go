package httpapi

import (
	"sync"

	"github.com/rendezvous/rendezvous/engine"
)

// scratch is per-request working memory: an encoding buffer, a browse page
// and a JSON decoder. Acquire it at the start of a handler and release it
// before returning; nothing in it may be retained after release.
type scratch struct {
	b     []byte
	views []engine.ListingView
	items []engine.BrowseItem // for stores that implement engine.ItemBrowser
	times minuteCache
	dec   decoder
	spec  engine.ListingSpec
	renew renewRequest
	// query and filters hold a browse's or quick join's query.
	query   engine.Browse
	filters queryFilters
}

// maxPooledBuf keeps one huge response from pinning memory in the pool.
const maxPooledBuf = 64 << 10

var scratchPool = sync.Pool{New: func() any {
	return &scratch{b: make([]byte, 0, 4096), views: make([]engine.ListingView, 0, engine.BrowsePageMax),
		items: make([]engine.BrowseItem, 0, engine.BrowsePageMax)}
}}

func acquireBuf() *scratch { return scratchPool.Get().(*scratch) }

func releaseBuf(s *scratch) {
	if cap(s.b) > maxPooledBuf {
		s.b = make([]byte, 0, 4096)
	}
	s.b = s.b[:0]
	clear(s.views) // drop references to specs and documents (callers keep len = items used)
	s.views = s.views[:0]
	clear(s.items)
	s.items = s.items[:0]
	s.dec.reset(nil)
	if cap(s.dec.scratch) > maxPooledBuf {
		s.dec.scratch = nil
	}
	s.spec = engine.ListingSpec{}
	s.renew.Attributes = nil
	s.query = engine.Browse{}
	s.filters = queryFilters{} // drop the filters' strings
	scratchPool.Put(s)
}
