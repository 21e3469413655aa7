package client

import (
	"errors"
	"syscall"
)

// isConnRefused reports an ECONNREFUSED from a previous send's ICMP error,
// which Linux reports on the next read of an unconnected UDP socket only in
// some configurations; it never means the socket is unusable.
func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
