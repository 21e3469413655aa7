package engine

import (
	"unicode/utf8"
)

// Indexed attributes (docs/contracts/semantics.md#indexed-attributes): a
// small, bounded set of named strings and integers beside a listing's
// free-form metadata, set at creation and replaced whole by the owner with a
// lease renewal. Browse filters on them; metadata it only returns.
const (
	MaxAttributes         = 8
	MaxAttributeNameLen   = 16
	MaxAttributeStringLen = 32
	// MaxAttributeNumber bounds numeric attributes to the integers a JSON
	// double and a Lua number both hold exactly.
	MaxAttributeNumber = 1<<53 - 1
)

// Attribute is one indexed attribute: a string (IsNum false) or an integer.
type Attribute struct {
	Name  string
	Str   string
	Num   int64
	IsNum bool
}

// Attributes is sorted by name with unique names (Validate checks it). A
// listing's value is replaced, never changed in place, so views may share it.
type Attributes []Attribute

// Validate checks the count, names and values of
// docs/contracts/semantics.md#indexed-attributes.
func (as Attributes) Validate() error {
	if len(as) > MaxAttributes {
		return errAttrCount
	}
	for i, a := range as {
		if !validAttrName(a.Name) {
			return errAttrName
		}
		if i > 0 && as[i-1].Name >= a.Name {
			return errAttrOrder
		}
		if a.IsNum {
			if a.Str != "" || a.Num > MaxAttributeNumber || a.Num < -MaxAttributeNumber {
				return errAttrNumber
			}
		} else if !validAttrString(a.Str) {
			return errAttrString
		}
	}
	return nil
}

// Get returns the attribute named name.
func (as Attributes) Get(name string) (Attribute, bool) {
	for _, a := range as {
		if a.Name == name {
			return a, true
		}
	}
	return Attribute{}, false
}

// Equal reports whether as and bs hold the same attributes.
func (as Attributes) Equal(bs Attributes) bool {
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		if as[i] != bs[i] {
			return false
		}
	}
	return true
}

// validAttrName is 1-16 characters of [a-z0-9_] starting with a letter.
func validAttrName(s string) bool {
	if len(s) < 1 || len(s) > MaxAttributeNameLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return allBytes(s, func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' })
}

// validAttrString is 1-32 bytes of UTF-8 without control characters or
// '|', which separates the values of a one-of filter.
func validAttrString(s string) bool {
	if len(s) < 1 || len(s) > MaxAttributeStringLen || !utf8.ValidString(s) || hasControl(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			return false
		}
	}
	return true
}
