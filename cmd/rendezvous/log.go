package main

import (
	"io"
	"log/slog"

	"github.com/rendezvous/rendezvous/httpapi"
)

// newLogger makes the process logger (slog text or JSON on w) with the
// HTTP API's constructor. Nothing that reaches it may carry a token,
// capability or fingerprint; engine's secret types print [REDACTED] should
// one slip through.
func newLogger(c *config, w io.Writer) *slog.Logger {
	var level slog.Level
	// validate accepted only names UnmarshalText knows.
	_ = level.UnmarshalText([]byte(c.LogLevel))
	log, err := httpapi.NewLogger(w, c.LogFormat, level)
	if err != nil {
		panic("BUG: validate accepted log-format " + c.LogFormat + ": " + err.Error())
	}
	return log
}
