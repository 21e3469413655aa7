package httpapi

import (
	"strconv"
	"unicode/utf8"

	"github.com/rendezvous/rendezvous/engine"
)

// decoder is a strict single-pass JSON reader over one request body. It
// accepts exactly RFC 8259 JSON and reports every deviation as an
// *engine.InputError; it knows only the shapes our requests use (objects of
// strings and integers, one nested object of strings), so anything else is a
// type error, never silently skipped.
//
// A decoder is not safe for concurrent use. Strings returned by readString
// alias either the body or the decoder's scratch buffer and are valid only
// until the next readString call.
type decoder struct {
	b       []byte
	i       int
	scratch []byte
}

func (d *decoder) reset(b []byte) {
	d.b = b
	d.i = 0
	d.scratch = d.scratch[:0]
}

func syntaxErr(d *decoder, what string) error {
	return &engine.InputError{Field: "body", Reason: "malformed JSON at byte " + strconv.Itoa(d.i) + ": " + what}
}

func (d *decoder) skipWS() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next non-whitespace byte, or 0 at the end.
func (d *decoder) peek() byte {
	d.skipWS()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// beginObject consumes '{'. field names the object for a type error.
func (d *decoder) beginObject(field string) error {
	c := d.peek()
	if c == '{' {
		d.i++
		return nil
	}
	if c == 0 {
		return syntaxErr(d, "unexpected end of input")
	}
	if field == "" {
		return &engine.InputError{Field: "body", Reason: "must be a JSON object"}
	}
	return d.typeErr(field, "must be an object")
}

// nextMember advances to the next member of the current object. It returns
// ok=false after consuming the closing '}'. first must be true for the first
// call on an object. The name is valid until the next readString.
func (d *decoder) nextMember(first bool) (name []byte, ok bool, err error) {
	c := d.peek()
	if c == '}' {
		d.i++
		return nil, false, nil
	}
	if !first {
		if c != ',' {
			return nil, false, syntaxErr(d, "expected ',' or '}'")
		}
		d.i++
		c = d.peek()
	}
	if c != '"' {
		return nil, false, syntaxErr(d, "expected a member name")
	}
	name, err = d.readString("")
	if err != nil {
		return nil, false, err
	}
	if d.peek() != ':' {
		return nil, false, syntaxErr(d, "expected ':'")
	}
	d.i++
	return name, true, nil
}

// end checks that only whitespace follows the top-level value.
func (d *decoder) end() error {
	if d.peek() != 0 {
		return syntaxErr(d, "unexpected data after the JSON object")
	}
	return nil
}

// null consumes a literal null if it comes next.
func (d *decoder) null() bool {
	if d.peek() == 'n' && len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// readBool reads true or false.
func (d *decoder) readBool(field string) (bool, error) {
	for _, lit := range [2]string{"false", "true"} {
		if d.peek() == lit[0] && len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
			d.i += len(lit)
			return lit == "true", nil
		}
	}
	if d.i >= len(d.b) {
		return false, syntaxErr(d, "unexpected end of input")
	}
	return false, d.typeErr(field, "must be true or false")
}

// typeErr reports a value of the wrong type for field; it first checks that
// the value is at least well-formed JSON so a syntax error is named as one.
func (d *decoder) typeErr(field, reason string) error {
	if err := d.skipValue(0); err != nil {
		return err
	}
	return &engine.InputError{Field: field, Reason: reason}
}

// readString reads a JSON string. field names it for a type error ("" for a
// member name). Raw control characters, invalid UTF-8, bad escapes and lone
// surrogates are rejected.
func (d *decoder) readString(field string) ([]byte, error) {
	if d.peek() != '"' {
		if d.i >= len(d.b) {
			return nil, syntaxErr(d, "unexpected end of input")
		}
		return nil, d.typeErr(field, "must be a string")
	}
	d.i++
	start := d.i
	// Fast path: no escapes.
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			s := d.b[start:d.i]
			d.i++
			if !utf8.Valid(s) {
				return nil, stringErr(field, "is not valid UTF-8")
			}
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, syntaxErr(d, "control character in string")
		}
		d.i++
	}
	d.scratch = append(d.scratch[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(d.scratch) {
				return nil, stringErr(field, "is not valid UTF-8")
			}
			return d.scratch, nil
		case c < 0x20:
			return nil, syntaxErr(d, "control character in string")
		case c != '\\':
			d.scratch = append(d.scratch, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			break
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			d.scratch = append(d.scratch, e)
		case 'b':
			d.scratch = append(d.scratch, '\b')
		case 'f':
			d.scratch = append(d.scratch, '\f')
		case 'n':
			d.scratch = append(d.scratch, '\n')
		case 'r':
			d.scratch = append(d.scratch, '\r')
		case 't':
			d.scratch = append(d.scratch, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return nil, syntaxErr(d, "bad \\u escape")
			}
			if r >= 0xD800 && r < 0xDC00 {
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					d.i += 2
					lo, ok := d.hex4()
					if ok && lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
						d.scratch = utf8.AppendRune(d.scratch, r)
						continue
					}
				}
				return nil, stringErr(field, "contains a lone surrogate escape")
			}
			if r >= 0xDC00 && r < 0xE000 {
				return nil, stringErr(field, "contains a lone surrogate escape")
			}
			d.scratch = utf8.AppendRune(d.scratch, r)
		default:
			return nil, syntaxErr(d, "bad escape")
		}
	}
	return nil, syntaxErr(d, "unterminated string")
}

func stringErr(field, reason string) error {
	if field == "" {
		field = "body"
		reason = "member name " + reason
	}
	return &engine.InputError{Field: field, Reason: reason}
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	d.i += 4
	return r, true
}

// readUint reads a JSON integer in 0..max. Fractions, exponents, strings and
// other types are type errors for field; a well-formed integer out of range
// is reported with its range.
func (d *decoder) readUint(field string, min, max uint64) (uint64, error) {
	c := d.peek()
	if c != '-' && (c < '0' || c > '9') {
		if c == 0 {
			return 0, syntaxErr(d, "unexpected end of input")
		}
		return 0, d.typeErr(field, "must be an integer")
	}
	neg := false
	if c == '-' {
		neg = true
		d.i++
	}
	start := d.i
	var v uint64
	overflow := false
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		dv := uint64(d.b[d.i] - '0')
		if v > (1<<64-1-dv)/10 {
			overflow = true
		} else {
			v = v*10 + dv
		}
		d.i++
	}
	n := d.i - start
	if n == 0 {
		return 0, syntaxErr(d, "bad number")
	}
	if n > 1 && d.b[start] == '0' {
		return 0, syntaxErr(d, "leading zero in number")
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		if err := d.skipNumberTail(); err != nil {
			return 0, err
		}
		return 0, &engine.InputError{Field: field, Reason: "must be an integer"}
	}
	if overflow || (neg && v != 0) || v < min || v > max {
		return 0, &engine.InputError{Field: field, Reason: "must be an integer in " +
			strconv.FormatUint(min, 10) + ".." + strconv.FormatUint(max, 10)}
	}
	return v, nil
}

func (d *decoder) skipNumberTail() error {
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return syntaxErr(d, "bad number")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return syntaxErr(d, "bad number")
		}
	}
	return nil
}

func (d *decoder) digits() int {
	n := 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}

// maxDepth bounds nesting while skipping a value of the wrong type.
const maxDepth = 32

// skipValue consumes one well-formed JSON value of any type.
func (d *decoder) skipValue(depth int) error {
	if depth > maxDepth {
		return syntaxErr(d, "nested too deeply")
	}
	switch c := d.peek(); {
	case c == '"':
		_, err := d.readString("body")
		return err
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		d.i++
		if d.peek() == closer {
			d.i++
			return nil
		}
		for {
			if c == '{' {
				if d.peek() != '"' {
					return syntaxErr(d, "expected a member name")
				}
				if _, err := d.readString(""); err != nil {
					return err
				}
				if d.peek() != ':' {
					return syntaxErr(d, "expected ':'")
				}
				d.i++
			}
			if err := d.skipValue(depth + 1); err != nil {
				return err
			}
			switch d.peek() {
			case ',':
				d.i++
			case closer:
				d.i++
				return nil
			default:
				return syntaxErr(d, "expected ',' or a closing bracket")
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		if c == '-' {
			d.i++
		}
		start := d.i
		if d.digits() == 0 || d.i-start > 1 && d.b[start] == '0' {
			return syntaxErr(d, "bad number")
		}
		return d.skipNumberTail()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
				d.i += len(lit)
				return nil
			}
		}
		return syntaxErr(d, "bad literal")
	case c == 0:
		return syntaxErr(d, "unexpected end of input")
	default:
		return syntaxErr(d, "unexpected character")
	}
}
