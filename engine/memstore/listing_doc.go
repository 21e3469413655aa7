package memstore

import (
	"strings"
	"unsafe"

	"github.com/rendezvous/rendezvous/engine"
)

// packListingDoc copies a new listing's spec and document into memory the
// store owns, in three allocations whatever the metadata (a fourth for
// indexed attributes): the spec struct, its metadata array, and one byte
// buffer that holds the document followed
// by the bytes of every spec string that does not occur verbatim inside the
// document. Every spec string points into that buffer.
//
// The HTTP layer's document is the JSON of the same immutable fields, so in
// practice every region, name, metadata key and value is found in it and
// the listing's strings cost no bytes of their own: the store does not hold
// the same bytes twice, and a listing with 16 metadata entries is three
// heap objects instead of about forty (fewer objects is also less GC
// marking). The search runs before the commit lock is taken.
//
// The buffer is never written after this, as the spec and document are
// immutable; the document's capacity is clipped so that an append by a
// caller reallocates instead of writing over the strings after it.
func packListingDoc(src *engine.ListingSpec, doc []byte) listingDoc {
	spec := new(engine.ListingSpec)
	*spec = *src
	if len(src.Metadata) > 0 {
		spec.Metadata = make([]engine.MetaEntry, len(src.Metadata))
		copy(spec.Metadata, src.Metadata)
	} else {
		spec.Metadata = nil
	}
	// The attributes are the listing's until a renewal replaces them: a
	// copy the caller cannot change.
	spec.Attributes = ownAttrs(src.Attributes)
	strs := [3 + 2*engine.MaxMetadataEntries]*string{&spec.Region, &spec.BuildVersion, &spec.DisplayName}
	n := 3
	for i := range spec.Metadata {
		strs[n], strs[n+1] = &spec.Metadata[i].Key, &spec.Metadata[i].Value
		n += 2
	}
	// Where each string is found in the document, or -1.
	var at [len(strs)]int
	haystack := unsafe.String(unsafe.SliceData(doc), len(doc)) // read only, within this call
	extra := 0
	for k, p := range strs[:n] {
		at[k] = -1
		if len(*p) > 0 {
			at[k] = strings.Index(haystack, *p)
		}
		if at[k] < 0 {
			extra += len(*p)
		}
	}
	buf := make([]byte, len(doc)+extra)
	copy(buf, doc)
	off := len(doc)
	for k, p := range strs[:n] {
		switch {
		case len(*p) == 0:
			*p = ""
		case at[k] >= 0:
			*p = unsafe.String(&buf[at[k]], len(*p))
		default:
			copy(buf[off:], *p)
			*p = unsafe.String(&buf[off], len(*p))
			off += len(*p)
		}
	}
	var d []byte
	if len(doc) > 0 {
		d = buf[:len(doc):len(doc)]
	}
	return listingDoc{spec: spec, doc: d, attrs: spec.Attributes}
}
