package main

import "strings"

// endMarker closes a generated region of a page that also has hand-written
// text (the fault scenarios page); the measured pages of `make bench` are
// generated whole and have none.
const endMarker = "<!-- /results -->"

// fillResults puts tables in doc at its results marker, replacing what an
// earlier run generated up to the end marker; without a marker the tables
// follow the document.
func fillResults(doc, tables string) string {
	i := strings.Index(doc, marker)
	if i < 0 {
		return strings.TrimRight(doc, "\n") + "\n\n" + marker + "\n" + tables + endMarker + "\n"
	}
	rest := doc[i+len(marker):]
	if j := strings.Index(rest, endMarker); j >= 0 {
		rest = rest[j+len(endMarker):]
	}
	return doc[:i] + marker + "\n" + tables + endMarker + rest
}
