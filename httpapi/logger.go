package httpapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// NewLogger makes the process logger: format "json" or "text". Nothing this
// package logs ever holds a token, capability or fingerprint.
func NewLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("unknown log format %q (want text or json)", format)
}

// fasthttpLogger takes fasthttp's log lines at warning level. fasthttp
// formats request data into them (an invalid header value, which may be a
// bearer or lease token; a query; addresses), so only the format, a
// constant of fasthttp's source, is written, never the arguments. At most
// one line per logInterval is written, with the number of lines it
// stands for: malformed requests cannot flood the log.
type fasthttpLogger struct {
	l     *slog.Logger
	limit logLimiter
}

func (f *fasthttpLogger) Printf(format string, _ ...any) {
	if !f.l.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	if n, ok := f.limit.allow(); ok {
		f.l.Warn("fasthttp", "format", format, "lines", n)
	}
}

// logInterval is the least time between two log lines of one logLimiter:
// a flood (refused connections, accept errors, failed store calls,
// fasthttp's complaints) is one line a second, not one per event.
const logInterval = time.Second

// logLimiter lets one log line through per logInterval and counts the
// events in between, which the next line reports.
type logLimiter struct {
	mu     sync.Mutex
	last   time.Time
	events int
}

// allow records one event and reports whether to log now, with the number
// of events the line stands for.
func (r *logLimiter) allow() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events++
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < logInterval {
		return 0, false
	}
	n := r.events
	r.last, r.events = now, 0
	return n, true
}
