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

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, timeLayout)
	return append(dst, '"')
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
