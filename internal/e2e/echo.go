package e2e

import (
	"context"
	"net/netip"
)

// PacketSocket is the datagram side of a client peer's socket, as the
// client package's Socket provides it; an interface keeps this package
// free of an import the client package's own tests would close into a cycle.
type PacketSocket interface {
	ReadFrom(ctx context.Context, b []byte) (int, netip.AddrPort, error)
	WriteTo(b []byte, addr netip.AddrPort) (int, error)
}

// Echo answers every datagram s receives with "echo: " and its payload,
// back to its sender, until reading fails (ctx ends or s closes): the
// test peer that a library under test punches to and expects back.
func Echo(ctx context.Context, s PacketSocket) {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.ReadFrom(ctx, buf)
		if err != nil {
			return
		}
		_, _ = s.WriteTo(append([]byte("echo: "), buf[:n]...), from)
	}
}
