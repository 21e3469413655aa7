package httpapi

import (
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

func appendUUID(dst []byte, u engine.UUID) []byte {
	dst = append(dst, '"')
	dst = u.AppendText(dst)
	return append(dst, '"')
}

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

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

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
