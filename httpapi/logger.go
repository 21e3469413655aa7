package httpapi

import (
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
