package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// session runs the chat over one Socket with one or more punched peers.
// Safe for concurrent use.
type session struct {
	sock *client.Socket
	echo bool

	mu       sync.Mutex
	out      io.Writer
	peers    map[netip.AddrPort]string // path → label
	seen     map[netip.AddrPort]map[uint64]bool
	nextID   uint64
	pending  map[uint64]chan struct{}
	received chan string
}

const (
	sayTries    = 8
	sayInterval = 300 * time.Millisecond
	maxSeen     = 4096
)

var errNoAck = errors.New("the peer did not acknowledge the line")

func newSession(sock *client.Socket, out io.Writer, echo bool) *session {
	return &session{sock: sock, out: out, echo: echo, peers: map[netip.AddrPort]string{},
		seen: map[netip.AddrPort]map[uint64]bool{}, pending: map[uint64]chan struct{}{},
		received: make(chan string, 64)}
}

func (s *session) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.out, format, args...)
}

func (s *session) addPeer(path netip.AddrPort, label string) {
	s.mu.Lock()
	s.peers[path] = label
	s.mu.Unlock()
}

func (s *session) peerList() []netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := make([]netip.AddrPort, 0, len(s.peers))
	for p := range s.peers {
		l = append(l, p)
	}
	return l
}

// loop reads datagrams until ctx ends or the socket closes.
func (s *session) loop(ctx context.Context) {
	buf := make([]byte, 2048)
	for {
		n, from, err := s.sock.ReadFrom(ctx, buf)
		if err != nil {
			return
		}
		kind, id, text, ok := decode(buf[:n])
		s.mu.Lock()
		label, known := s.peers[from]
		s.mu.Unlock()
		if !ok || !known {
			continue // not chat, or not from a punched peer
		}
		if kind == "ACK" {
			s.mu.Lock()
			if ch := s.pending[id]; ch != nil {
				close(ch)
				delete(s.pending, id)
			}
			s.mu.Unlock()
			continue
		}
		// A lost ACK makes the peer resend: ack every copy, show it once.
		_, _ = s.sock.WriteTo(encodeAck(id), from)
		if !s.markSeen(from, id) {
			continue
		}
		s.printf("%s says: %s\n", label, text)
		select {
		case s.received <- text:
		default:
		}
		if s.echo {
			go s.say(ctx, from, "echo: "+text) // best effort; errors are printed there
		}
	}
}

func (s *session) markSeen(from netip.AddrPort, id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.seen[from]
	if m == nil || len(m) >= maxSeen {
		m = map[uint64]bool{}
		s.seen[from] = m
	}
	if m[id] {
		return false
	}
	m[id] = true
	return true
}

// say sends one line to peer, retransmitting until it is acknowledged.
func (s *session) say(ctx context.Context, peer netip.AddrPort, text string) error {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan struct{})
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	msg := encodeMsg(id, sanitize(text))
	for range sayTries {
		if _, err := s.sock.WriteTo(msg, peer); err != nil {
			return err
		}
		t := time.NewTimer(sayInterval)
		select {
		case <-ch:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	s.printf("could not deliver a line to %v: %v\n", peer, errNoAck)
	return errNoAck
}

// describeIntro says what the mediator revealed of the peer: its endpoints,
// or for a relay-only attempt nothing (the relay connects them).
func describeIntro(in client.Introduction) string {
	if in.RelayOnly() {
		return "relay-only (no peer address revealed)"
	}
	return fmt.Sprintf("public %v local %v", in.Public, in.Local)
}

// describePath says how the peers are connected.
func describePath(p client.Path) string {
	if p.Relayed {
		return fmt.Sprintf("connected: relayed path through the TURN relay to the peer's relayed address %v in %v", p.Peer, p.Elapsed.Round(10*time.Microsecond))
	}
	return fmt.Sprintf("punched: direct path to %v in %v", p.Peer, p.Elapsed.Round(10*time.Microsecond))
}
