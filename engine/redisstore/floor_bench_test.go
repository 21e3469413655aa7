package redisstore_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// The floor of a batched presence refresh in Redis's Lua, apart from the
// store: functions that do only what every one-call-per-batch design must
// do (read each record with one HMGET, check the key, the sequence and the
// pending flag, write with one HSET), 128 refreshes per FCALL, over records
// that differ as real ones do (every ID, fingerprint, endpoint and record
// distinct: Lua interns and hashes each string it makes, so identical
// arguments would cost less), in an order that scatters each call over the
// whole hash, as 25,000 hosts refreshing every few seconds do:
//
//	go test -run '^$' -bench PresenceFloor -benchtime 1000x -count 1 ./engine/redisstore/
//
// Shapes:
//   - store: the store's shape before its records were written as sent:
//     ID, key argument, sequence and endpoints; a 120-byte record found by
//     ID, the key checked in it, the new record joined from four strings.
//   - joined: two arguments, the field (ID and fingerprint, so a wrong key
//     finds no record) and the sequence, endpoints and pending flag; the
//     record is that value joined with the call's instance and deadline.
//   - verbatim: two arguments, the record written as the caller sent it:
//     what a design would write that kept the instance and the server's
//     deadline out of the record, in a per-call entry the record names.
//   - compact, compact-joined: verbatim and joined with every part but the
//     sequence in binary (a 24-byte field; a 37-byte record).
//   - sent: the store's records now: three arguments, the field (ID and
//     fingerprint, 32 bytes), the sequence (its digit count and digits)
//     and the value (the sequence, an 8-byte call reference and binary
//     endpoints), which is the record; one comparison decides.
//
// With RDV_CALLGRIND set to a directory (redistest.CallgrindEnv),
// redis-server runs under valgrind's callgrind and redis-instr/refresh
// reports the instructions it executed per refresh, request parsing
// included, which the machine's load does not move:
//
//	RDV_CALLGRIND=$(mktemp -d) go test -run '^$' -bench PresenceFloor -benchtime 200x ./engine/redisstore/
//
// The verbatim shape is also cut short after each stage (until=arguments,
// read, decide) to show where a refresh goes, and run over 1,024 records to
// show what the full fill adds (records no longer in the CPU's caches);
// the ballast runs lay the records out among what the store keeps beside
// them at the full fill.

const floorLibrary = `#!lua name=rdv_floor
local find, byte
-- floor_fill(field, record, ...): the records to refresh.
redis.register_function('floor_fill', function(keys, a)
  for i = 2, #a, 2 do redis.call('HSET', keys[1], a[i - 1], a[i]) end
  return 0
end)
-- floor_ballast(from, to, doc): what the store keeps beside a listing's
-- presence record, for listings from..to (a hash like l:<id>, its entries
-- in three deadline or browse sets) and, for every fifth, an attempt's
-- (a hash like a:<id> and its deadline), so the records lie among the
-- full fill's other allocations.
redis.register_function('floor_ballast', function(keys, a)
  local p, doc = keys[1], a[3]
  for i = tonumber(a[1]), tonumber(a[2]) do
    local id = string.format('%036d', i)
    redis.call('HSET', p .. 'l:' .. id, 'lease', id, 'pres', id, 'tenant', 'game\0prod', 'owner', 'owner-' .. i % 100,
      'spec', doc, 'doc', doc, 'players', '1', 'ver', '1', 'dl', '1000000000', 'region', 'eu', 'proto', '7', 'public', '1')
    redis.call('ZADD', p .. 'lexp', i, id)
    redis.call('ZADD', p .. 'pexp', i, id)
    redis.call('ZADD', p .. 'b', 0, id)
    if i % 5 == 0 then
      redis.call('HSET', p .. 'a:' .. id, 'handle', id, 'listing', id, 'tenant', 'game\0prod', 'client', 'c' .. i,
        'dl', '1000000000', 'hkey', doc:sub(1, 16), 'ckey', doc:sub(17, 32), 'host', '', 'peer', '', 'consumed', '0')
      redis.call('ZADD', p .. 'aexp', i, id)
    end
  end
  return 0
end)
-- floor_store: IDs, keys, sequences, endpoints (n each), then the call's
-- instance and deadline; a record is seq(16)..key(17)..mid..endpoints.
redis.register_function('floor_store', function(keys, a)
  find = string.find
  local n, mid = (#a - 1) / 4, a[#a]
  local r = redis.call('HMGET', keys[1], unpack(a, 1, n))
  local w, nw = {}, 0
  for k = 1, n do
    local rec, key, seq = r[k], a[n + k], a[2 * n + k]
    if rec and #rec > 69 and seq > rec and find(rec, key, 17, true) == 17 then
      w[nw + 1], w[nw + 2] = a[k], seq .. key .. mid .. a[3 * n + k]
      nw = nw + 2
    end
  end
  if nw > 0 then redis.call('HSET', keys[1], unpack(w)) end
  return nw / 2
end)
-- floor_refresh: fields, values seq..rest..flag (n each), then the
-- sequence's width, what to join to each value (the call's instance and
-- deadline; '' writes the values as sent, which Lua does without making a
-- string) and the stage to stop after: 'arguments', 'read', 'decide' or
-- 'write'. An equal sequence must not pass for a greater one with other
-- endpoints: the last digits must differ too (a refresh whose sequence
-- grew by a multiple of ten would take the store's general path).
redis.register_function('floor_refresh', function(keys, a)
  byte = string.byte
  local n, w, mid, stop = (#a - 3) / 2, tonumber(a[#a - 2]), a[#a - 1], a[#a]
  if stop == 'arguments' then return n end
  local r = redis.call('HMGET', keys[1], unpack(a, 1, n))
  if stop == 'read' then return n end
  local out, nw, flag = {}, 0, -#mid - 1
  for k = 1, n do
    local rec, v = r[k], a[n + k]
    if rec and v > rec and byte(v, w) ~= byte(rec, w) and byte(rec, flag) == 48 then
      out[nw + 1], out[nw + 2] = a[k], v .. mid
      nw = nw + 2
    end
  end
  if stop == 'decide' then return nw / 2 end
  if nw > 0 then redis.call('HSET', keys[1], unpack(out)) end
  return nw / 2
end)
-- floor_sent: fields, sequences, values (n each), as the store sends
-- them: a record is a value, which begins with its sequence, so one
-- comparison decides (an equal sequence is a prefix, so not greater).
redis.register_function('floor_sent', function(keys, a)
  local n = #a / 3
  local r = redis.call('HMGET', keys[1], unpack(a, 1, n))
  local out, nw = {}, 0
  for k = 1, n do
    local rec = r[k]
    if rec and a[n + k] > rec then
      out[nw + 1], out[nw + 2] = a[k], a[2 * n + k]
      nw = nw + 2
    end
  end
  if nw > 0 then redis.call('HSET', keys[1], unpack(out)) end
  return nw / 2
end)
`

// floorDoc stands for a listing's spec and document as the store keeps
// them (about the size of the benchmark fill's).
var floorDoc = strings.Repeat(`{"region":"eu-central","display_name":"Bench host"}`, 6)

// floorRefresh is one listing's refresh: the parts every shape lays out in
// its own way.
type floorRefresh struct {
	id, fingerprint, seq, endpoints string
}

// floorShape lays refreshes out as one function takes them.
type floorShape struct {
	fn     string
	groups int
	// tail is the function's arguments after the refreshes' (floor_refresh
	// takes the stage to stop after last).
	tail func(mid string) []string
	// ballast lays the records out among what the full fill keeps beside
	// them (floor_ballast), in the order the fill creates them.
	ballast bool
	args    func(r floorRefresh, mid string) []string
	field   func(r floorRefresh) string
	record  func(r floorRefresh, mid string) string
}

var floorShapes = map[string]floorShape{
	"store": {fn: "floor_store", groups: 4, tail: func(mid string) []string { return []string{mid} },
		args: func(r floorRefresh, _ string) []string {
			return []string{r.id, r.fingerprint + "0", r.seq, r.endpoints}
		},
		field:  func(r floorRefresh) string { return r.id },
		record: func(r floorRefresh, mid string) string { return r.seq + r.fingerprint + "0" + mid + r.endpoints }},
	"joined": {fn: "floor_refresh", groups: 2, tail: func(mid string) []string { return []string{"16", mid} },
		args: func(r floorRefresh, _ string) []string {
			return []string{r.id + r.fingerprint, r.seq + r.endpoints + "0"}
		},
		field:  func(r floorRefresh) string { return r.id + r.fingerprint },
		record: func(r floorRefresh, mid string) string { return r.seq + r.endpoints + "0" + mid }},
	"verbatim": {fn: "floor_refresh", groups: 2, tail: asSent,
		args: func(r floorRefresh, mid string) []string {
			return []string{r.id + r.fingerprint, r.seq + mid + r.endpoints + "0"}
		},
		field:  func(r floorRefresh) string { return r.id + r.fingerprint },
		record: func(r floorRefresh, mid string) string { return r.seq + mid + r.endpoints + "0" }},
	// compact is verbatim with all but the sequence in binary: a 16-byte ID
	// and 8-byte fingerprint as the field; the sequence (text, so Lua's
	// comparison, which follows the server's collation locale, sees only
	// digits), a 2-byte instance number, a 6-byte deadline, 12 bytes of
	// endpoints and the flag as the record.
	"compact": {fn: "floor_refresh", groups: 2, tail: asSent,
		args: func(r floorRefresh, _ string) []string {
			return []string{compact(r.id, r.fingerprint), r.seq + compactMid + compactEndpoints(r) + "0"}
		},
		field:  func(r floorRefresh) string { return compact(r.id, r.fingerprint) },
		record: func(r floorRefresh, _ string) string { return r.seq + compactMid + compactEndpoints(r) + "0" }},
	// compact-joined is joined with compact's parts: the record is the
	// sequence, endpoints and flag joined with the call's instance number
	// and deadline (8 bytes), so the deadline stays the server's.
	"sent": {fn: "floor_sent", groups: 3, tail: func(string) []string { return nil },
		args: func(r floorRefresh, _ string) []string {
			return []string{compact(r.id) + compact(r.fingerprint) + compact(r.fingerprint), sentSeq(r), sentValue(r)}
		},
		field:  func(r floorRefresh) string { return compact(r.id) + compact(r.fingerprint) + compact(r.fingerprint) },
		record: func(r floorRefresh, _ string) string { return sentValue(r) }},
	"compact-joined": {fn: "floor_refresh", groups: 2, tail: func(string) []string { return []string{"16", compactMid} },
		args: func(r floorRefresh, _ string) []string {
			return []string{compact(r.id, r.fingerprint), r.seq + compactEndpoints(r) + "0"}
		},
		field:  func(r floorRefresh) string { return compact(r.id, r.fingerprint) },
		record: func(r floorRefresh, _ string) string { return r.seq + compactEndpoints(r) + "0" + compactMid }},
}

// sentSeq is r's sequence as the store sends it (its digit count, then its
// digits), six digits as in the store's benchmarks.
func sentSeq(r floorRefresh) string {
	n, err := strconv.Atoi(r.seq)
	if err != nil {
		panic(err)
	}
	d := strconv.Itoa(100_000 + n)
	return fmt.Sprintf("%02d%s", len(d), d)
}

// sentValue is r's record as the store writes it: the sequence, a call
// reference, the public endpoint's length and both endpoints, binary.
func sentValue(r floorRefresh) string {
	eps := compactEndpoints(r)
	return sentSeq(r) + "\x00\x00\x00\x07\x3b\x9a\xca\x01" + "\x06" + eps
}

// asSent is the tail of a shape whose records are written as sent: the
// sequence's width, and nothing to join.
func asSent(string) []string { return []string{"16", ""} }

// compactMid is an instance number (2 bytes) and a deadline (6 bytes).
const compactMid = "\x00\x07\x00\x3b\x9a\xca\x00\x01"

// compact packs the hex digits of parts into bytes (an ID's dashes left
// out).
func compact(parts ...string) string {
	h := strings.ReplaceAll(strings.Join(parts, ""), "-", "")
	b, err := hex.DecodeString(h)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// compactEndpoints is the listing's public and local IPv4 endpoints in
// binary (address and port each).
func compactEndpoints(r floorRefresh) string {
	var b []byte
	for _, ep := range strings.Split(r.endpoints, "|") {
		ap := netip.MustParseAddrPort(ep)
		a4 := ap.Addr().As4()
		b = binary.BigEndian.AppendUint16(append(b, a4[:]...), ap.Port())
	}
	return string(b)
}

func BenchmarkPresenceFloor(b *testing.B) {
	for _, shape := range []string{"store", "joined", "verbatim", "compact", "compact-joined", "sent"} {
		b.Run("shape="+shape, func(b *testing.B) { benchPresenceFloor(b, floorShapes[shape], 25_000, "write") })
	}
	for _, stop := range []string{"arguments", "read", "decide"} {
		b.Run("shape=verbatim/until="+stop, func(b *testing.B) {
			benchPresenceFloor(b, floorShapes["verbatim"], 25_000, stop)
		})
	}
	b.Run("shape=verbatim/records=1024", func(b *testing.B) {
		benchPresenceFloor(b, floorShapes["verbatim"], 1024, "write")
	})
	for _, shape := range []string{"store", "verbatim", "compact", "compact-joined", "sent"} {
		b.Run("shape="+shape+"/ballast", func(b *testing.B) {
			s := floorShapes[shape]
			s.ballast = true
			benchPresenceFloor(b, s, 25_000, "write")
		})
	}
}

// floorListing is listing i's refresh at round seq: a UUID-shaped ID, a
// 16-character fingerprint and endpoints of its own.
func floorListing(i, seq int) floorRefresh {
	return floorRefresh{
		id:          fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(i*2654435761), i&0xffff, i&0xfff, i*7&0xfff, i*977),
		fingerprint: fmt.Sprintf("%016x", uint64(i)*0x9E3779B97F4A7C15),
		seq:         fmt.Sprintf("%016d", seq),
		endpoints:   fmt.Sprintf("203.0.%d.%d:%d|10.0.%d.%d:4000", i/250%250, i%250, 4000+i%997, i/250%250, i%250),
	}
}

func benchPresenceFloor(b *testing.B, s floorShape, records int, stop string) {
	const n = 128
	const stride = 7919 // prime, so i*stride mod records visits every record once a round
	ctx := context.Background()
	srv, c := dedicatedServerB(b)
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
	// mid: the call's instance (an ID) and deadline (20 digits).
	mid := strings.Repeat("7", 36) + fmt.Sprintf("%020d", 1_000_000_000)
	// The records go in 1,000 at a time, each thousand followed by its
	// listings' ballast, as the store's fill interleaves them.
	for from := 0; from < records; from += 1000 {
		to := min(from+1000, records)
		fill := []string{"FCALL", "floor_fill", "1", "floor:pr"}
		for i := from; i < to; i++ {
			r := floorListing(i, 1)
			fill = append(fill, s.field(r), s.record(r, mid))
		}
		do(fill)
		if s.ballast {
			do([]string{"FCALL", "floor_ballast", "1", "floor:", fmt.Sprint(from), fmt.Sprint(to - 1), floorDoc})
		}
	}
	// The calls' arguments are made before the clock starts, a round (every
	// record once, but the last records%n) at a time, each at a sequence
	// above the last round's.
	perRound := records / n
	calls := make([][]string, 0, b.N)
	for round := range (b.N + perRound - 1) / perRound {
		for from := 0; from+n <= records && len(calls) < b.N; from += n {
			groups := make([][]string, s.groups)
			for j := from; j < from+n; j++ {
				for g, v := range s.args(floorListing(j*stride%records, round+2), mid) {
					groups[g] = append(groups[g], v)
				}
			}
			cmd := []string{"FCALL", s.fn, "1", "floor:pr"}
			for _, g := range groups {
				cmd = append(cmd, g...)
			}
			cmd = append(cmd, s.tail(mid)...)
			if s.fn == "floor_refresh" {
				cmd = append(cmd, stop)
			}
			calls = append(calls, cmd)
		}
	}
	if err := c.Do(ctx, c.B().ConfigResetstat().Build()).Error(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	srv.MeasureInstructions(b, n, func() {
		for i := range b.N {
			got := do(calls[i])
			if want := int64(n); (stop == "write" || stop == "decide") && got != want {
				b.Fatalf("%d of %d refreshes accepted", got, want)
			}
		}
	})
	b.StopTimer()
	info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	fcalls, usec := redistest.CommandStat(info, "fcall")
	b.ReportMetric(usec/fcalls/n, "redis-us/refresh")
}
