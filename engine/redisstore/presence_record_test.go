package redisstore

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// TestSequencesCompareAsStrings: the scripts accept a refresh when its
// sequence argument is greater, as a string, than the record that begins
// with the last accepted sequence. That must hold exactly when the number
// is greater, across every change in the number of digits, and an equal
// sequence must not pass for a greater one whatever follows it in the
// record.
func TestSequencesCompareAsStrings(t *testing.T) {
	seqs := []uint64{0, 1, 2, 9, 10, 11, 99, 100, 101, 999_999, 1_000_000, 123_456_789, engine.MaxPresenceSeq - 1, engine.MaxPresenceSeq}
	ref := [prRefLen]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	for _, last := range seqs {
		// The greatest bytes after the sequence: the likeliest to make an
		// equal or smaller sequence compare greater.
		rec, _ := appendPresenceValue(nil, last, &ref, netip.MustParseAddrPort("[ffff::ffff]:65535"), netip.MustParseAddrPort("[ffff::ffff]:65535"))
		for _, seq := range seqs {
			arg := string(appendSeq(nil, seq))
			if got, want := arg > string(rec), seq > last; got != want {
				t.Errorf("sequence %d against record of %d: greater %v, want %v", seq, last, got, want)
			}
			if got, want := arg > string(appendSeq(nil, last)), seq > last; got != want {
				t.Errorf("sequence %d against idle record of %d: greater %v, want %v", seq, last, got, want)
			}
			if arg >= "i" || arg >= "p" {
				t.Errorf("sequence %d (%q) does not sort before the records' marks", seq, arg)
			}
		}
		got, rest, ok := parseSeq(string(rec))
		if !ok || got != last || len(rest) != prRefLen+1+18+18 {
			t.Errorf("parseSeq(record of %d) = %d, %d bytes left, %v", last, got, len(rest), ok)
		}
	}
	for _, bad := range []string{"", "0", "00", "001", "17" + strings.Repeat("1", 17), "03ab1", "0x1"} {
		if _, _, ok := parseSeq(bad); ok {
			t.Errorf("parseSeq(%q) accepted", bad)
		}
	}
}

// TestPresenceValueKeepsEndpointsAsMemStoreDoes: a record's endpoints come
// back as the memory store keeps them: IPv4 as IPv4, IPv6 (an IPv4-mapped
// one included) as IPv6, the zone dropped, an absent local endpoint absent.
func TestPresenceValueKeepsEndpointsAsMemStoreDoes(t *testing.T) {
	ap := netip.MustParseAddrPort
	for _, c := range []struct{ public, local, wantPublic, wantLocal netip.AddrPort }{
		{ap("203.0.113.7:40000"), ap("192.168.1.20:40001"), ap("203.0.113.7:40000"), ap("192.168.1.20:40001")},
		{ap("[2001:db8::7]:1"), netip.AddrPort{}, ap("[2001:db8::7]:1"), netip.AddrPort{}},
		{ap("[::ffff:203.0.113.7]:3478"), ap("[fe80::1%eth0]:5000"), ap("[::ffff:203.0.113.7]:3478"), ap("[fe80::1]:5000")},
		{ap("198.51.100.1:65535"), ap("[2001:db8::1]:2"), ap("198.51.100.1:65535"), ap("[2001:db8::1]:2")},
	} {
		ref := [prRefLen]byte{1, 2, 3, 4, 5, 6, 7, 8}
		v, seqLen := appendPresenceValue(nil, 42, &ref, c.public, c.local)
		if string(v[:seqLen]) != string(appendSeq(nil, 42)) {
			t.Fatalf("the value begins with %q, not the sequence", v[:seqLen])
		}
		for _, rec := range []string{string(v), "p" + string(v)} {
			r, ok := parsePresenceRecord(rec)
			if !ok || !r.fresh || r.seq != 42 || r.ref != string(ref[:]) || r.public != c.wantPublic || r.local != c.wantLocal || r.pending != (rec[0] == 'p') {
				t.Errorf("%v|%v: record %+v (%v), want public %v local %v", c.public, c.local, r, ok, c.wantPublic, c.wantLocal)
			}
		}
	}
	for _, bad := range []string{"", "i", "i0", "p", "0142", "i0142x", "0142\x01\x02\x03\x04\x05\x06\x07\x08\x07\x01\x02\x03\x04\x05\x06"} {
		if _, ok := parsePresenceRecord(bad); ok {
			t.Errorf("parsePresenceRecord(%q) accepted", bad)
		}
	}
}
