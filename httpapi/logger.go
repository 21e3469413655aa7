package httpapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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
// one line per connLogInterval is written, with the number of lines it
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
