package redisstore

import (
	"strconv"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// A listing's indexed attributes are one field of its hash, 'at' (absent
// when it has none), written by Go and never parsed in Lua (the scripts
// only store it and hand it back): per attribute its name, '=' and the
// string or '#' and the integer in decimal, attributes separated by '\n'.
// Names are [a-z0-9_] and strings hold no control character
// (engine.Attributes.Validate), so the separators are unambiguous.

// attrsArg renders validated attributes (empty for none).
func attrsArg(as engine.Attributes) string {
	if len(as) == 0 {
		return ""
	}
	var b []byte
	for i, a := range as {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, a.Name...)
		if a.IsNum {
			b = append(b, '#')
			b = strconv.AppendInt(b, a.Num, 10)
		} else {
			b = append(b, '=')
			b = append(b, a.Str...)
		}
	}
	return string(b)
}

// parseAttrs is attrsArg's inverse (nil for none). The names and strings
// are parts of s, which they keep alive: one allocation for them all. An
// entry it cannot read is left out.
func parseAttrs(s string) engine.Attributes {
	if s == "" {
		return nil
	}
	as := make(engine.Attributes, 0, strings.Count(s, "\n")+1)
	for s != "" {
		var e string
		e, s, _ = strings.Cut(s, "\n")
		at := strings.IndexAny(e, "=#")
		if at < 1 {
			continue
		}
		a := engine.Attribute{Name: e[:at]}
		if e[at] == '#' {
			n, err := strconv.ParseInt(e[at+1:], 10, 64)
			if err != nil {
				continue
			}
			a.Num, a.IsNum = n, true
		} else {
			a.Str = e[at+1:]
		}
		as = append(as, a)
	}
	return as
}

// attrsAre reports whether raw is attrsArg(as), without rendering it.
func attrsAre(as engine.Attributes, raw string) bool {
	var num [24]byte
	for i, a := range as {
		if i > 0 {
			if raw == "" || raw[0] != '\n' {
				return false
			}
			raw = raw[1:]
		}
		v, sep := a.Str, byte('=')
		if a.IsNum {
			v, sep = string(strconv.AppendInt(num[:0], a.Num, 10)), '#'
		}
		n := len(a.Name) + 1 + len(v)
		if len(raw) < n || raw[:len(a.Name)] != a.Name || raw[len(a.Name)] != sep || raw[len(a.Name)+1:n] != v {
			return false
		}
		raw = raw[n:]
	}
	return raw == ""
}
