package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// The floor of a batched presence refresh in Redis's Lua, apart from the
// store: functions that only read each record with one HMGET, compare the
// sequence, build the new record with one join and write it with one HSET,
// 128 refreshes per FCALL over 25,000 records (the full fill). Whatever a
// one-call-per-batch design decides on top of this, it pays at least this
// much per refresh:
//
//	go test -run '^$' -bench PresenceFloor -benchtime 1500x -count 5 ./engine/redisstore/
//
// FourArguments passes a refresh as the store does (ID, key, sequence,
// endpoints) into the store's record size (120 bytes) and checks the key;
// TwoArguments packs sequence, key and endpoints into one argument;
// ShortRecords does so too into 39-byte records (binary sequence,
// fingerprint, deadline and endpoints, a 2-byte instance number).

const floorLibrary = `#!lua name=rdv_floor
-- floor_fill(n, seq, key, ep, mid): n records seq..key..ep..mid under
-- KEYS[1], with IDs of 36 digits.
redis.register_function('floor_fill', function(keys, a)
  for i = 1, tonumber(a[1]) do
    redis.call('HSET', keys[1], string.format('%036d', i), a[2] .. a[3] .. a[4] .. a[5])
  end
  return 0
end)
-- floor_four: IDs, keys, sequences, endpoints (n each); a record is
-- seq(16)..key(17)..ep..mid.
redis.register_function('floor_four', function(keys, a)
  local n, mid = (#a - 1) / 4, a[#a]
  local r = redis.call('HMGET', keys[1], unpack(a, 1, n))
  local w, nw = {}, 0
  for k = 1, n do
    local rec, key, seq = r[k], a[n + k], a[2 * n + k]
    if rec and seq > rec and string.find(rec, key, 17, true) == 17 then
      w[nw + 1], w[nw + 2] = a[k], seq .. key .. a[3 * n + k] .. mid
      nw = nw + 2
    end
  end
  if nw > 0 then redis.call('HSET', keys[1], unpack(w)) end
  return nw / 2
end)
-- floor_two: IDs, then seq..key..ep (n each).
redis.register_function('floor_two', function(keys, a)
  local n, mid = (#a - 1) / 2, a[#a]
  local r = redis.call('HMGET', keys[1], unpack(a, 1, n))
  local w, nw = {}, 0
  for k = 1, n do
    local rec, v = r[k], a[n + k]
    if rec and v > rec then
      w[nw + 1], w[nw + 2] = a[k], v .. mid
      nw = nw + 2
    end
  end
  if nw > 0 then redis.call('HSET', keys[1], unpack(w)) end
  return nw / 2
end)
`

// floorShape is one record layout: the widths of the sequence and the
// fingerprint key, the endpoints and the instance-and-deadline tail.
type floorShape struct {
	fn             string
	seqW           int
	key, ep, mid   string
	packedArgument bool
}

var (
	floorLong = floorShape{seqW: 16, key: strings.Repeat("f", 16) + "0", ep: "203.0.113.10:4000|10.0.0.1:4000",
		mid: strings.Repeat("i", 36) + strings.Repeat("9", 20)}
	floorShort = floorShape{seqW: 8, key: strings.Repeat("f", 8) + "0", ep: strings.Repeat("e", 12),
		mid: "ii" + strings.Repeat("9", 8)}
)

func BenchmarkPresenceFloorFourArguments(b *testing.B) {
	s := floorLong
	s.fn = "floor_four"
	benchPresenceFloor(b, s)
}

func BenchmarkPresenceFloorTwoArguments(b *testing.B) {
	s := floorLong
	s.fn, s.packedArgument = "floor_two", true
	benchPresenceFloor(b, s)
}

func BenchmarkPresenceFloorShortRecords(b *testing.B) {
	s := floorShort
	s.fn, s.packedArgument = "floor_two", true
	benchPresenceFloor(b, s)
}

func benchPresenceFloor(b *testing.B, s floorShape) {
	const records, n = 25_000, 128
	ctx := context.Background()
	_, c := dedicatedServerB(b)
	do := func(cmd []string) int64 {
		v, err := c.Do(ctx, c.B().Arbitrary(cmd...).Build()).AsInt64()
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	if err := c.Do(ctx, c.B().FunctionLoad().Replace().FunctionCode(floorLibrary).Build()).Error(); err != nil {
		b.Fatal(err)
	}
	seq := func(i int) string { return fmt.Sprintf("%0*d", s.seqW, i) }
	do([]string{"FCALL", "floor_fill", "1", "floor:pr", fmt.Sprint(records), seq(0), s.key, s.ep, s.mid})
	ids := make([]string, records)
	for i := range ids {
		ids[i] = fmt.Sprintf("%036d", i+1)
	}
	if err := c.Do(ctx, c.B().ConfigResetstat().Build()).Error(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base := (i * n) % (records - n)
		cmd := append(make([]string, 0, 4+4*n), "FCALL", s.fn, "1", "floor:pr")
		cmd = append(cmd, ids[base:base+n]...)
		sq := seq(i + 1)
		if s.packedArgument {
			for range n {
				cmd = append(cmd, sq+s.key+s.ep)
			}
		} else {
			for _, part := range []string{s.key, sq, s.ep} {
				for range n {
					cmd = append(cmd, part)
				}
			}
		}
		if got := do(append(cmd, s.mid)); got != n {
			b.Fatalf("%d of %d records written", got, n)
		}
	}
	b.StopTimer()
	info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	calls, usec := redistest.CommandStat(info, "fcall")
	b.ReportMetric(usec/calls/n, "redis-us/refresh")
}
