package main

import (
	"testing"
	"time"
)

func TestBucketBounds(t *testing.T) {
	f := func(v uint64) {
		t.Helper()
		i := bucketOf(v)
		if i == histBuckets-1 {
			if v < bucketLow(i) {
				t.Fatalf("value %d below last bucket low %d", v, bucketLow(i))
			}
			return
		}
		if lo, hi := bucketLow(i), bucketHigh(i); v < lo || v >= hi {
			t.Fatalf("value %d in bucket %d [%d,%d)", v, i, lo, hi)
		}
		// Relative width at most 1/histSub above the direct range.
		if v >= histSub {
			if w := bucketHigh(i) - bucketLow(i); float64(w) > float64(bucketLow(i))/histSub+1 {
				t.Fatalf("bucket %d width %d too wide for low %d", i, w, bucketLow(i))
			}
		}
	}
	for v := uint64(0); v < 5000; v++ {
		f(v)
	}
	for v := uint64(5000); v < 1<<42; v = v*3/2 + 7 {
		f(v)
		f(v - 1)
		f(v + 1)
	}
	f(1 << 63)
	for i := 1; i < histBuckets; i++ {
		if bucketLow(i) <= bucketLow(i-1) {
			t.Fatalf("bucket lows not increasing at %d", i)
		}
	}
}

func TestQuantile(t *testing.T) {
	f := func(samples []time.Duration, q float64, lo, hi time.Duration) {
		t.Helper()
		var h Histogram
		for _, s := range samples {
			h.Record(s)
		}
		var s HistSnapshot
		h.Snapshot(&s)
		if got := s.Quantile(q); got < lo || got > hi {
			t.Fatalf("q%.2f = %v, want in [%v, %v]", q, got, lo, hi)
		}
	}
	f(nil, 0.5, 0, 0)
	one := []time.Duration{time.Millisecond}
	f(one, 0.99, time.Millisecond, time.Millisecond*104/100)
	var ramp []time.Duration
	for i := 1; i <= 1000; i++ {
		ramp = append(ramp, time.Duration(i)*time.Microsecond)
	}
	f(ramp, 0.5, 500*time.Microsecond, 520*time.Microsecond)
	f(ramp, 0.99, 990*time.Microsecond, 1030*time.Microsecond)
	f(ramp, 1, 1000*time.Microsecond, 1040*time.Microsecond)
	f([]time.Duration{-5}, 0.5, 0, 0) // negative counts as zero
}

func TestHistogramRecordAllocs(t *testing.T) {
	var rec Recorder
	n := testing.AllocsPerRun(1000, func() {
		rec.Observe(KindPresence, CodeOK, 1234*time.Microsecond)
		rec.Observe(KindCreate, CodeCapacity, 5*time.Millisecond)
	})
	if n != 0 {
		t.Fatalf("Observe allocates %v times per run", n)
	}
}

func TestRecorderCounts(t *testing.T) {
	var rec Recorder
	rec.Observe(KindCreate, CodeOK, time.Millisecond)
	rec.Observe(KindCreate, CodeCapacity, time.Millisecond)
	rec.Observe(KindCreate, CodeQuota, time.Millisecond)
	rec.Observe(KindCreate, CodeTimeout, time.Millisecond)
	rec.Observe(KindPresence, CodeStun508, time.Millisecond)
	rec.Late(KindJoin)
	var c Counts
	rec.Load(&c)
	f := func(k Kind, cl Class, want uint64) {
		t.Helper()
		if got := c.Class(k, cl); got != want {
			t.Fatalf("%s %s = %d, want %d", k, cl, got, want)
		}
	}
	f(KindCreate, ClassOK, 1)
	f(KindCreate, ClassShed, 2)
	f(KindCreate, ClassError, 1)
	f(KindPresence, ClassShed, 1)
	if c.Total(KindCreate) != 4 || c.Late[KindJoin] != 1 {
		t.Fatalf("totals wrong: %+v", c)
	}
	rec.Observe(KindCreate, CodeTransport, 0)
	rec.Load(&c)
	if c.Answered(KindCreate) != 3 || c.Answered(KindPresence) != 1 {
		t.Fatalf("answered %d creates and %d presence, want 3 and 1 (timeouts and transport failures are not answers)",
			c.Answered(KindCreate), c.Answered(KindPresence))
	}
	var sh HistSnapshot
	rec.KindHist(KindCreate, ClassShed, false, &sh)
	if sh.Total != 2 {
		t.Fatalf("shed histogram holds %d samples, want 2", sh.Total)
	}
}
