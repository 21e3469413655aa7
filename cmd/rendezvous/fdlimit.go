package main

// File descriptors and the HTTP connection ceiling derived from them.

// fdLimit is the soft open-file limit after start raised it to the hard
// limit (0: the platform does not say), and the raise's error, if any. (The
// Go runtime itself raises it at process start on Linux, so the limit the
// process was started with is not known here.)
type fdLimit struct {
	after uint64
	err   error
}

// Ceilings of the HTTP connection settings.
const (
	maxHTTPConns         = 10_000_000
	defaultConnsPerIP    = 1024
	connsNoFDLimit       = 16384 // --http-max-conns 0 where the open-file limit is unknown
	minFDReserve         = 64    // descriptors kept for UDP sockets, the listener, /proc reads, logs
	fdReserveDenominator = 8     // and at least an eighth of the limit
)

// autoMaxConns is --http-max-conns 0: the open-file limit minus a reserve
// for everything that is not an HTTP connection, so the server stops
// accepting before the process runs out of descriptors.
func autoMaxConns(limit uint64) int {
	if limit == 0 {
		return connsNoFDLimit
	}
	reserve := max(minFDReserve, limit/fdReserveDenominator)
	if reserve > limit/2 {
		reserve = limit / 2
	}
	return int(min(limit-reserve, maxHTTPConns))
}

// logFDLimit reports the open-file limit start raised, and warns when
// --http-max-conns is set above what the limit leaves for connections.
func (s *server) logFDLimit() {
	f := s.fds
	switch {
	case f.err != nil:
		s.log.Warn("cannot raise the open-file limit", "err", f.err.Error(), "limit", f.after)
	case f.after != 0:
		s.log.Info("open-file limit", "limit", f.after)
	}
	if f.after != 0 && s.conns.MaxConns > autoMaxConns(f.after) {
		s.log.Warn("http-max-conns is above what the open-file limit leaves for connections; accepts that find no descriptor are retried",
			"http_max_conns", s.conns.MaxConns, "limit", f.after)
	}
}
