package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram layout: HDR-style log-linear buckets over nanoseconds. Values
// below histSub fall in their own bucket; above, each power of two is split
// into histSub equal sub-buckets, so a bucket's width is at most 1/histSub
// (about 3%) of its lower bound. histMaxExp covers up to ~2^41 ns (36 min);
// larger values land in the last bucket.
const (
	histSubBits = 5
	histSub     = 1 << histSubBits
	histMaxExp  = 36
	histBuckets = (histMaxExp + 1) * histSub
)

// Histogram counts latencies without allocating. Record is safe for
// concurrent use (one atomic add per sample); Snapshot reads a consistent
// enough copy while writers continue (each bucket is read atomically).
type Histogram struct {
	counts [histBuckets]atomic.Uint64
}

func bucketOf(ns uint64) int {
	if ns < histSub {
		return int(ns)
	}
	e := bits.Len64(ns) - histSubBits - 1
	idx := (e+1)*histSub + int(ns>>uint(e)) - histSub
	if idx >= histBuckets {
		return histBuckets - 1
	}
	return idx
}

// bucketLow returns the smallest value mapped to bucket i; bucketHigh the
// smallest value of the next bucket.
func bucketLow(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	e := i/histSub - 1
	return uint64(histSub+i%histSub) << uint(e)
}

func bucketHigh(i int) uint64 {
	if i+1 >= histBuckets {
		return bucketLow(i) * 2
	}
	return bucketLow(i + 1)
}

// Record adds one sample. Negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))].Add(1)
}

// HistSnapshot is an immutable copy of a Histogram.
type HistSnapshot struct {
	Counts [histBuckets]uint64
	Total  uint64
}

// Snapshot copies the counts into s (no allocation when s is reused).
func (h *Histogram) Snapshot(s *HistSnapshot) {
	s.Total = 0
	for i := range h.counts {
		c := h.counts[i].Load()
		s.Counts[i] = c
		s.Total += c
	}
}

// Quantile returns the q-quantile (0..1), reported as the upper edge of the
// bucket holding it (a conservative value), or 0 with no samples.
func (s *HistSnapshot) Quantile(q float64) time.Duration {
	if s.Total == 0 {
		return 0
	}
	if q < 0 {
		q = 0
	}
	if q > 1 {
		q = 1
	}
	rank := uint64(q*float64(s.Total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range s.Counts {
		seen += c
		if seen >= rank {
			if i < histSub {
				return time.Duration(i)
			}
			return time.Duration(bucketHigh(i) - 1)
		}
	}
	return time.Duration(bucketHigh(histBuckets-1) - 1)
}

// Max returns the upper edge of the highest non-empty bucket.
func (s *HistSnapshot) Max() time.Duration {
	for i := histBuckets - 1; i >= 0; i-- {
		if s.Counts[i] > 0 {
			if i < histSub {
				return time.Duration(i)
			}
			return time.Duration(bucketHigh(i) - 1)
		}
	}
	return 0
}

// Add merges o into s.
func (s *HistSnapshot) Add(o *HistSnapshot) {
	for i := range s.Counts {
		s.Counts[i] += o.Counts[i]
	}
	s.Total += o.Total
}
