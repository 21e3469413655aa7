package memstore

import (
	"math"
	"time"
)

// Deadlines are monotonic store time (Clock.Now), never wall time.

// maxDuration is a deadline after every other: clearActive drains the
// schedules with it.
const maxDuration = time.Duration(math.MaxInt64)
