package httpapi

import (
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/rendezvous/rendezvous/engine"
)

// JSON encoding by appending to a caller's buffer: no reflection and no
// allocation beyond the buffer's growth.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Control characters are escaped;
// invalid UTF-8 (which validated input never holds) becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendUUID appends u quoted, in the lowercase canonical form of
// UUID.AppendText, writing two hex digits per table lookup straight into
// dst's spare capacity. (hex.Encode's byte loop was a fifth of a browse
// page's encoding; so was building the text in a local array and appending
// it, whose wide copy stalls on the byte stores just made.)
func appendUUID(dst []byte, u engine.UUID) []byte {
	dst, tail := extend(dst, 38)
	b := (*[38]byte)(tail)
	b[0], b[9], b[14], b[19], b[24], b[37] = '"', '-', '-', '-', '-', '"'
	for i, c := range u {
		j := uuidTextPos[i]
		b[j], b[j+1] = hexPairs[2*int(c)], hexPairs[2*int(c)+1]
	}
	return dst
}

// uuidTextPos is where byte i of a UUID goes in its quoted text.
var uuidTextPos = [16]uint8{1, 3, 5, 7, 10, 12, 15, 17, 20, 22, 25, 27, 29, 31, 33, 35}

// extend returns dst lengthened by n bytes and those n bytes, for writing
// in place.
func extend(dst []byte, n int) (all, tail []byte) {
	dst = slices.Grow(dst, n)
	l := len(dst)
	dst = dst[:l+n]
	return dst, dst[l:]
}

// hexPairs holds the two lowercase hex digits of every byte value.
var hexPairs = func() (t [512]byte) {
	for i := range 256 {
		t[2*i], t[2*i+1] = hexDigits[i>>4], hexDigits[i&0xf]
	}
	return t
}()

// timeLayout is RFC 3339 in UTC with millisecond precision.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// appendTime appends t as a quoted timeLayout string. It is a hand-written
// equivalent of AppendFormat (which parses its layout on every call and
// dominated browse's profile).
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, timeLayout)
		return append(dst, '"')
	}
	h, mi, s := t.Clock()
	ms := t.Nanosecond() / 1e6
	var b [26]byte
	b[0] = '"'
	put2(b[1:], y/100)
	put2(b[3:], y%100)
	b[5] = '-'
	put2(b[6:], int(mo))
	b[8] = '-'
	put2(b[9:], d)
	b[11] = 'T'
	put2(b[12:], h)
	b[14] = ':'
	put2(b[15:], mi)
	b[17] = ':'
	put2(b[18:], s)
	b[20] = '.'
	b[21] = byte('0' + ms/100)
	put2(b[22:], ms%100)
	b[24] = 'Z'
	b[25] = '"'
	return append(dst, b[:]...)
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// put2 writes v (0..99) as two digits.
func put2(b []byte, v int) {
	b[0] = digitPairs[2*v]
	b[1] = digitPairs[2*v+1]
}

// seconds renders a lifetime as whole seconds (rounded down).
func seconds(d time.Duration) int64 { return int64(d / time.Second) }

// appendInt appends v in decimal; 0..99 (player counts, mostly) without strconv.
func appendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0 && v < 10:
		return append(dst, byte('0'+v))
	case v >= 10 && v < 100:
		return append(dst, digitPairs[2*v], digitPairs[2*v+1])
	}
	return strconv.AppendInt(dst, v, 10)
}

func appendUint(dst []byte, v uint64) []byte { return strconv.AppendUint(dst, v, 10) }

// appendKey appends ,"key": (or "key": when first is true).
func appendKey(dst []byte, key string, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}
