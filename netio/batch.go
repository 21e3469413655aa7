package netio

import (
	"errors"
	"net"
	"net/netip"
)

// Batch geometry.
const (
	// batchSize is the most datagrams one read returns.
	batchSize = 64
	// overlapBatch is the most datagrams one batch of overlapLoop holds (a
	// blocking read and non-blocking top-ups, one commit). On a remote store
	// each commit has a fixed cost that more answers share when datagrams
	// queue: Redis CPU per presence refresh fell by about a quarter from
	// 64-refresh to 128-refresh FCALLs and no further at 256.
	overlapBatch = 2 * batchSize
	// RemoteBatch is overlapBatch for what measures the store's side of a
	// commit (BenchmarkRedisStore): the most ops one ApplyBatch carries on
	// a remote store.
	RemoteBatch = overlapBatch
	// readSlot is a receive buffer: larger than the largest served datagram
	// (stun.MaxDatagram) so an oversize datagram is seen as such.
	readSlot = 1280
	// writeSlot holds any answer: signed answers are at most 548 bytes and
	// unsigned ones far smaller (docs/contracts/udp.md#answers-and-their-sizes).
	writeSlot = 576
	// answersPerRequest: a bind that completes both introductions produces
	// its response, an INTRODUCE and a RELAY-INTRODUCE to each side.
	answersPerRequest = 5
	// ctlSlot holds one IP_PKTINFO or IPV6_PKTINFO control message.
	ctlSlot = 64
)

// packet is one datagram slot of a batch. Its buffer is allocated once and
// reused for every datagram read into or written from it.
type packet struct {
	// buf: on read, the datagram (len) in a readSlot-capacity buffer; on
	// write, the datagram to send.
	buf []byte
	// addr is the source on read and the destination on write (unmapped).
	addr netip.AddrPort
	// local is the address the request was sent to (PKTINFO on wildcard
	// sockets) and the source of the answer; invalid means "the socket's".
	local netip.Addr
	// trunc marks a datagram larger than its buffer.
	trunc bool
}

// batchConn is one UDP socket with batched I/O. ReadBatch is called by one
// goroutine at a time and WriteBatch by one goroutine at a time (the socket's
// reader does both); WriteTo (single datagrams, for OFFER) and Close are safe
// for concurrent use.
type batchConn interface {
	// ReadBatch blocks until at least one datagram arrives, then fills up to
	// len(pkts) slots and returns how many.
	ReadBatch(pkts []packet) (int, error)
	// TryReadBatch is ReadBatch without the wait: it fills up to len(pkts)
	// slots with the datagrams already queued and returns how many, 0 when
	// none is (or when the platform cannot read without waiting).
	TryReadBatch(pkts []packet) (int, error)
	// WriteBatch sends every packet, retrying partial sends; a datagram the
	// kernel refuses is skipped and counted in failed. err is non-nil only
	// when the socket is unusable (closed).
	WriteBatch(pkts []packet) (sent, failed int, err error)
	// WriteTo sends one datagram.
	WriteTo(b []byte, addr netip.AddrPort) error
	LocalAddr() netip.AddrPort
	Close() error
}

// newBatchConn wraps a bound socket with the raw Linux path or the portable
// x/net path. pktinfo is set for wildcard sockets whose answers must leave
// from the request's destination address.
func newBatchConn(c *net.UDPConn, portable, pktinfo bool) (batchConn, error) {
	if portable || !rawAvailable {
		return newPortableConn(c, pktinfo), nil
	}
	rc, err := newRawConn(c, pktinfo)
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return rc, nil
}

func newPackets(n, slot int) []packet {
	backing := make([]byte, n*slot)
	p := make([]packet, n)
	for i := range p {
		p[i].buf = backing[i*slot : i*slot : (i+1)*slot]
	}
	return p
}

func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
