package httpapi

import "time"

// maxFastMilli is the first Unix millisecond of year 10000: the cache
// formats four-digit years only; later (and pre-1970) times take appendTime.
const maxFastMilli = 253402300800000

// minuteCache formats wall times given in Unix milliseconds as appendTime
// does (quoted RFC 3339, UTC, millisecond precision), keeping the
// `"YYYY-MM-DDTHH:MM:` prefix of the last minute formatted: the lease
// deadlines of one browse page lie within a minute or two of each other, so
// each item costs a few divisions instead of a calendar computation.
//
// It belongs to one request's scratch and is not safe for concurrent use.
type minuteCache struct {
	minute int64 // Unix minute of prefix; valid when ok
	ok     bool
	prefix [18]byte
}

// append appends ms (Unix milliseconds) as a quoted timeLayout string.
func (c *minuteCache) append(dst []byte, ms int64) []byte {
	if ms < 0 || ms >= maxFastMilli {
		return appendTime(dst, time.UnixMilli(ms))
	}
	m := ms / 60000
	if !c.ok || m != c.minute {
		var b [32]byte
		copy(c.prefix[:], appendTime(b[:0], time.UnixMilli(m*60000)))
		c.minute, c.ok = m, true
	}
	rem := int(ms - m*60000) // 0..59999
	// Written in place (see appendUUID for why not via a local array).
	dst, b := extend(dst, 26)
	copy(b, c.prefix[:])
	put2(b[18:], rem/1000)
	b[20] = '.'
	msec := rem % 1000
	b[21] = byte('0' + msec/100)
	put2(b[22:], msec%100)
	b[24] = 'Z'
	b[25] = '"'
	return dst
}
