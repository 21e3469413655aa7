package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
)

// livez sends GET /livez over the pool every kind shares and classifies
// the answer: 200 is CodeOK. The server answers it without a store call,
// so its latency is the floor the generator, the HTTP stack and the
// machine set under the run's load (KindLivez).
func (s *apiSet) livez(ctx context.Context) Code {
	req, err := http.NewRequestWithContext(ctx, "GET", s.base+"/livez", nil)
	if err != nil {
		return CodeTransport
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return CodeTimeout
		}
		return CodeTransport
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10)) // drained: the connection is reused
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return CodeOtherStatus
	}
	return CodeOK
}
