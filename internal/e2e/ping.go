package e2e

import (
	"context"
	"errors"
	"net/netip"
	"time"
)

// Ping sends msg to peer every 250 ms until a datagram comes back and
// returns it with its sender, or ctx's error: one lost datagram (UDP, or a
// relay's channel still being bound) is not a broken path.
func Ping(ctx context.Context, s PacketSocket, peer netip.AddrPort, msg string) (string, netip.AddrPort, error) {
	buf := make([]byte, 1500)
	for {
		if _, err := s.WriteTo([]byte(msg), peer); err != nil {
			return "", netip.AddrPort{}, err
		}
		wait, stop := context.WithTimeout(ctx, 250*time.Millisecond)
		n, from, err := s.ReadFrom(wait, buf)
		stop()
		switch {
		case err == nil:
			return string(buf[:n]), from, nil
		case ctx.Err() != nil:
			return "", netip.AddrPort{}, ctx.Err()
		case !errors.Is(err, context.DeadlineExceeded):
			return "", netip.AddrPort{}, err
		}
	}
}
