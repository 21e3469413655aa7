package memstore

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/rendezvous/rendezvous/engine"
)

func TestPackListingDoc(t *testing.T) {
	f := func(name string, spec engine.ListingSpec, doc []byte, wantOwnBytes int) {
		t.Helper()
		want := spec
		want.Metadata = append([]engine.MetaEntry(nil), spec.Metadata...)
		wantDoc := append([]byte(nil), doc...)
		d := packListingDoc(&spec, doc)
		if !reflect.DeepEqual(*d.spec, want) {
			t.Fatalf("%s: spec %+v, want %+v", name, *d.spec, want)
		}
		if !bytes.Equal(d.doc, wantDoc) || cap(d.doc) != len(d.doc) {
			t.Fatalf("%s: doc %q (cap %d), want %q with its capacity clipped", name, d.doc, cap(d.doc), wantDoc)
		}
		// Nothing may alias the caller's memory: scribble over it.
		for i := range doc {
			doc[i] = '#'
		}
		if d.spec.Region != want.Region || d.spec.DisplayName != want.DisplayName {
			t.Fatalf("%s: spec aliases the caller's document", name)
		}
		for i, e := range d.spec.Metadata {
			if e != want.Metadata[i] {
				t.Fatalf("%s: metadata %d = %+v, want %+v", name, i, e, want.Metadata[i])
			}
		}
		// Every string lies in the one buffer: inside the document, or
		// in wantOwnBytes after it.
		own := 0
		in := func(s string) {
			if s == "" {
				return
			}
			p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
			base := uintptr(unsafe.Pointer(unsafe.SliceData(d.doc)))
			if len(d.doc) == 0 || p < base || p+uintptr(len(s)) > base+uintptr(len(d.doc)) {
				own += len(s)
			}
		}
		in(d.spec.Region)
		in(d.spec.BuildVersion)
		in(d.spec.DisplayName)
		for _, e := range d.spec.Metadata {
			in(e.Key)
			in(e.Value)
		}
		if own != wantOwnBytes {
			t.Fatalf("%s: %d bytes of strings outside the document, want %d", name, own, wantOwnBytes)
		}
	}
	sp := engine.ListingSpec{Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "Host \"one\"",
		Visibility: engine.Public, TrustMode: engine.PlayerHosted, CurrentPlayers: 1, MaxPlayers: 8,
		Metadata: []engine.MetaEntry{{Key: "map", Value: "dust"}, {Key: "mode", Value: ""}, {Key: "x", Value: "not-in-doc"}}}
	doc := []byte(`"region":"eu-central","build_version":"1.2.3","display_name":"Host \"one\"","metadata":{"map":"dust","mode":"","x":"y"}`)
	// The display name is escaped in the JSON, and one value is missing:
	// those two are stored after the document.
	f("json document", sp, doc, len(`Host "one"`)+len("not-in-doc"))
	f("no document", sp, nil, len("eu-central")+len("1.2.3")+len(`Host "one"`)+len("mapdustmodexnot-in-doc"))
	sp.Metadata = nil
	f("no metadata", sp, []byte("eu-central 1.2.3"), len(`Host "one"`))

	big := engine.ListingSpec{Region: "r", BuildVersion: "b", DisplayName: "n"}
	for i := 0; i < engine.MaxMetadataEntries; i++ {
		big.Metadata = append(big.Metadata, engine.MetaEntry{Key: string(rune('a' + i)), Value: "v"})
	}
	bigDoc := []byte("r b n abcdefghijklmnop v")
	if n := testing.AllocsPerRun(100, func() { packListingDoc(&big, bigDoc) }); n != 3 {
		t.Fatalf("packListingDoc allocates %v times, want 3 (spec, metadata, buffer)", n)
	}
}
