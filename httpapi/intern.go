package httpapi

import "sync"

// interner maps byte strings to shared strings so a browse filter can become
// a string without allocating once the value has been seen. It is bounded:
// when full, lookups of new values fall back to allocating. Safe for
// concurrent use.
type interner struct {
	mu  sync.RWMutex
	m   map[string]string
	max int
}

// maxInternedRegions bounds the region interner.
const maxInternedRegions = 4096

func newInterner(max int) *interner { return &interner{m: make(map[string]string), max: max} }

// get returns the interned copy of b, interning it if there is room. It
// does not allocate for a value already interned.
func (in *interner) get(b []byte) string {
	in.mu.RLock()
	s, ok := in.m[string(b)]
	in.mu.RUnlock()
	if ok {
		return s
	}
	return in.insert(string(b))
}

// add interns s (if there is room) and returns the interned copy.
func (in *interner) add(s string) string {
	in.mu.RLock()
	v, ok := in.m[s]
	in.mu.RUnlock()
	if ok {
		return v
	}
	return in.insert(s)
}

// insert interns s under the write lock (if there is room; another caller
// may have interned it since the read-locked lookup) and returns the
// interned copy.
func (in *interner) insert(s string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.m[s]; ok {
		return v
	}
	if len(in.m) < in.max {
		in.m[s] = s
	}
	return s
}
