package main

import "strings"

// baselineMarkers name the sub-benchmarks that are baselines: the reference
// store's full scans, a bare fasthttp handler, a raw batched UDP echo, coturn.
// A benchmark is compared with the baseline whose name differs from its own
// in exactly one '/'-separated element, where the baseline's element is
// one of these (alone, as the value of key=value with the same key, or as
// the first word of a dashed or underscored element whose rest both share).
var baselineMarkers = map[string]bool{
	"bare": true, "echo": true, "raw": true, "rawecho": true, "raw-echo": true,
	"ref": true, "reference": true, "refstore": true, "baseline": true,
	"coturn": true, "scan": true, "fullscan": true,
}

// markerSuffix reports whether elem names a baseline, and what follows the
// marker word: "echo-120B" is the echo baseline for "-120B" payloads, so it
// pairs with "presence-120B" but not with "plain-binding-20B".
func markerSuffix(elem string) (string, bool) {
	if _, v, ok := strings.Cut(elem, "="); ok {
		elem = v
	}
	elem = strings.ToLower(elem)
	if baselineMarkers[elem] {
		return "", true
	}
	if i := strings.IndexAny(elem, "-_"); i > 0 && baselineMarkers[elem[:i]] {
		return elem[i:], true
	}
	return "", false
}

func isMarker(elem string) bool {
	_, ok := markerSuffix(elem)
	return ok
}

// IsBaseline reports whether any element of name is a baseline marker.
func IsBaseline(name string) bool {
	for _, e := range strings.Split(name, "/") {
		if isMarker(e) {
			return true
		}
	}
	return false
}

// FindBaseline returns the baseline sample of s among all (same package or
// not), or nil.
func FindBaseline(s *Sample, all []*Sample) *Sample {
	if IsBaseline(s.Name) {
		return nil
	}
	mine := strings.Split(s.Name, "/")
	for _, b := range all {
		if b == s || !IsBaseline(b.Name) {
			continue
		}
		theirs := strings.Split(b.Name, "/")
		if len(theirs) != len(mine) {
			continue
		}
		diff := -1
		for i := range mine {
			if mine[i] != theirs[i] {
				if diff >= 0 {
					diff = -2
					break
				}
				diff = i
			}
		}
		if diff < 0 {
			continue
		}
		suffix, ok := markerSuffix(theirs[diff])
		if !ok || !strings.HasSuffix(strings.ToLower(mine[diff]), suffix) {
			continue
		}
		mk, _, mkv := strings.Cut(mine[diff], "=")
		tk, _, tkv := strings.Cut(theirs[diff], "=")
		if mkv != tkv || (mkv && mk != tk) {
			continue // key=value must compare like keys
		}
		return b
	}
	return nil
}

// Overrides are explicit pairs an area document declares with lines
// `<!-- baseline: HTTP/browse100 = HTTP/bare_page -->` (benchmark names as
// in the table, without the Benchmark prefix); they win over the rule.
type Overrides map[string]string

// parseOverrides reads the baseline declarations of an area document.
func parseOverrides(doc string) Overrides {
	o := Overrides{}
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "<!-- baseline:")
		if !ok {
			continue
		}
		rest, ok = strings.CutSuffix(rest, "-->")
		if !ok {
			continue
		}
		if a, b, ok := strings.Cut(rest, "="); ok {
			o[strings.TrimSpace(a)] = strings.TrimSpace(b)
		}
	}
	return o
}

// Baseline returns s's baseline: a declared one if present, else the rule's.
func (o Overrides) Baseline(s *Sample, all []*Sample) *Sample {
	if name, ok := o[s.Name]; ok {
		for _, b := range all {
			if b.Name == name {
				return b
			}
		}
	}
	return FindBaseline(s, all)
}
