package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/pion/logging"
	"github.com/pion/stun/v4"
	"github.com/pion/turn/v5"
)

// relayAllocation is one TURN allocation (RFC 8656) made with pion/turn: its
// own UDP socket toward the TURN server, and the relayed transport address
// on the server that the peer sends to. Datagrams from the peer arrive on the
// allocation and are handed to the Socket like any other (see relayRoute).
type relayAllocation struct {
	server string // host:port, for errors
	conn   net.PacketConn
	client *turn.Client
	relay  net.PacketConn
	addr   netip.AddrPort // our relayed address
	once   sync.Once
}

// turnRTO is pion's first retransmission timeout; it doubles per try. The
// caller's context (the punch timeout) bounds the whole exchange.
const turnRTO = 100 * time.Millisecond

// quietTURN keeps pion's own logging off: its messages may name the
// allocation's username, and the SDK reports failures as typed errors.
var quietTURN = &logging.DefaultLoggerFactory{Writer: io.Discard, DefaultLogLevel: logging.LogLevelDisabled}

// allocateRelay allocates on the first of r's UDP TURN servers that grants
// an allocation, each try bounded by ctx. The failure is a *RelayError
// (ErrRelayRefused when the server refused the credentials), or ctx's error
// when the caller cancelled.
func allocateRelay(ctx context.Context, r *Relay) (*relayAllocation, error) {
	servers := r.turnServers()
	if len(servers) == 0 {
		return nil, &RelayError{Server: "none", Reason: "the relay object has no turn: URL with UDP transport"}
	}
	var last error
	for _, srv := range servers {
		a, err := allocateOn(ctx, srv, r)
		if err == nil {
			return a, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

func allocateOn(ctx context.Context, server string, r *Relay) (*relayAllocation, error) {
	ua, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		return nil, &RelayError{Server: server, Reason: "cannot resolve: " + err.Error()}
	}
	// The relayed address has the server's family (RFC 6156), so the
	// peer's relayed address is reachable from ours.
	network, family := "udp4", turn.RequestedAddressFamilyIPv4
	if ua.IP.To4() == nil {
		network, family = "udp6", turn.RequestedAddressFamilyIPv6
	}
	conn, err := net.ListenPacket(network, ":0")
	if err != nil {
		return nil, &RelayError{Server: server, Reason: "cannot open a socket: " + err.Error()}
	}
	c, err := turn.NewClient(&turn.ClientConfig{
		TURNServerAddr:         ua.String(),
		Username:               r.Username,
		Password:               string(r.Credential),
		Conn:                   conn,
		RTO:                    turnRTO,
		RequestedAddressFamily: family,
		LoggerFactory:          quietTURN,
	})
	if err == nil {
		err = c.Listen()
	}
	if err != nil {
		conn.Close()
		return nil, &RelayError{Server: server, Reason: err.Error()}
	}
	relay, err := c.AllocateWithContext(ctx)
	if err != nil {
		c.Close()
		conn.Close()
		return nil, allocateError(ctx, server, err)
	}
	return &relayAllocation{server: server, conn: conn, client: c, relay: relay, addr: addrPortOf(relay.LocalAddr())}, nil
}

func allocateError(ctx context.Context, server string, err error) error {
	var te *stun.TurnError
	switch {
	case errors.As(err, &te):
		return &RelayError{Server: server, Code: int(te.ErrorCodeAttr.Code), Reason: string(te.ErrorCodeAttr.Reason)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &RelayError{Server: server, Reason: "no allocation within the punch timeout"}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &RelayError{Server: server, Reason: err.Error()}
}

// permit sends first to peer through the relay. The first datagram to a
// peer makes pion create the TURN permission for it, which waits for the
// server's answer; that wait is bounded by ctx. Later sends do not wait.
func (a *relayAllocation) permit(ctx context.Context, peer netip.AddrPort, first []byte) error {
	done := make(chan error, 1)
	go func() {
		_, err := a.relay.WriteTo(first, net.UDPAddrFromAddrPort(peer))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return allocateError(ctx, a.server, err)
		}
		return nil
	case <-ctx.Done():
		a.close() // unblocks the pending permission request
		return allocateError(ctx, a.server, ctx.Err())
	}
}

// WriteToUDPAddrPort sends one datagram to peer through the relay.
func (a *relayAllocation) WriteToUDPAddrPort(b []byte, peer netip.AddrPort) (int, error) {
	return a.relay.WriteTo(b, net.UDPAddrFromAddrPort(peer))
}

// close releases the allocation (a Refresh with lifetime 0, not awaited)
// and the socket. Idempotent.
func (a *relayAllocation) close() {
	a.once.Do(func() {
		a.relay.Close()
		a.client.Close()
		a.conn.Close()
	})
}
