package httpapi

import (
	"slices"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// Indexed attributes on the wire (docs/contracts/semantics.md#indexed-attributes):
// an object of at most 8 members, each a string or an integer, in a create
// or renew body and in browse items and GET documents.

const attrNumberReason = "numbers must be integers in -(2^53-1)..2^53-1"

// decodeAttributes reads null or an object of strings and integers into a
// new Attributes sorted by name (nil for null and {}), rejecting duplicate
// names; Attributes.Validate checks the rest. The result is freshly
// allocated: the store keeps it.
func decodeAttributes(d *decoder) (engine.Attributes, error) {
	if d.null() {
		return nil, nil
	}
	if err := d.beginObject("attributes"); err != nil {
		return nil, err
	}
	var as engine.Attributes
	for first := true; ; first = false {
		name, ok, err := d.nextMember(first)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if len(as) == engine.MaxAttributes {
			return nil, &engine.InputError{Field: "attributes", Reason: "at most 8 entries"}
		}
		a := engine.Attribute{Name: string(name)}
		for _, b := range as {
			if b.Name == a.Name {
				return nil, &engine.InputError{Field: "attributes", Reason: "duplicate name"}
			}
		}
		switch c := d.peek(); {
		case c == '"':
			v, err := d.readString("attributes")
			if err != nil {
				return nil, err
			}
			a.Str = string(v)
		case c == '-' || c >= '0' && c <= '9':
			a.IsNum = true
			if a.Num, err = d.readAttrNumber(); err != nil {
				return nil, err
			}
		case c == 0:
			return nil, syntaxErr(d, "unexpected end of input")
		default:
			return nil, d.typeErr("attributes", "values must be strings or integers")
		}
		as = append(as, a)
	}
	slices.SortFunc(as, func(a, b engine.Attribute) int { return strings.Compare(a.Name, b.Name) })
	return as, nil
}

// readAttrNumber reads a JSON number that must be an integer in
// ±(2^53-1), written without fraction or exponent.
func (d *decoder) readAttrNumber() (int64, error) {
	neg := d.b[d.i] == '-'
	if neg {
		d.i++
		if d.i >= len(d.b) || d.b[d.i] < '0' || d.b[d.i] > '9' {
			return 0, syntaxErr(d, "bad number")
		}
	}
	v, err := d.readUint("attributes", 0, engine.MaxAttributeNumber)
	if err != nil {
		if ie, ok := err.(*engine.InputError); ok && ie.Field == "attributes" {
			return 0, &engine.InputError{Field: "attributes", Reason: attrNumberReason}
		}
		return 0, err
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

// appendAttributes appends ,"attributes":{…} for a listing that has
// attributes (nothing for one without, which keeps its bytes).
func appendAttributes(dst []byte, as engine.Attributes) []byte {
	if len(as) == 0 {
		return dst
	}
	dst = append(dst, `,"attributes":{`...)
	for i := range as {
		a := &as[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, a.Name)
		dst = append(dst, ':')
		if a.IsNum {
			dst = appendInt(dst, a.Num)
		} else {
			dst = appendString(dst, a.Str)
		}
	}
	return append(dst, '}')
}
