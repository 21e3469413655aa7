package client

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Role says which side of an attempt a peer is.
type Role byte

const (
	RoleHost   Role = 'h'
	RoleClient Role = 'c'
)

// PunchConfig tunes Punch. Zero fields take the defaults.
type PunchConfig struct {
	// Timeout bounds the whole punch (default 5 s).
	Timeout time.Duration
	// Interval between probe rounds (default 100 ms).
	Interval time.Duration
}

const (
	defaultPunchTimeout  = 5 * time.Second
	defaultPunchInterval = 100 * time.Millisecond
	maxCandidates        = 6 // introduced ones plus peer-reflexive ones learnt from probes
)

// Path is the result of a successful punch.
type Path struct {
	// Peer is where the peer's ack came from: send application datagrams here.
	Peer netip.AddrPort
	// Elapsed is how long the punch took.
	Elapsed time.Duration
}

// PunchError is the typed failure of a punch; it matches ErrPunchFailed.
type PunchError struct {
	Candidates []netip.AddrPort
	Timeout    time.Duration
	Probed     bool // the peer's probes reached us, ours never got an ack
}

func (e *PunchError) Error() string {
	s := fmt.Sprintf("rendezvous: hole punch failed: no confirmed path to %v within %v", e.Candidates, e.Timeout)
	if e.Probed {
		s += " (the peer's probes arrived, our acks or probes did not get through)"
	}
	return s
}

func (e *PunchError) Unwrap() error { return ErrPunchFailed }

// punchSession is one active punch on a Socket, keyed by attempt handle.
type punchSession struct {
	role   byte
	nonce  [8]byte
	acked  chan netip.AddrPort
	probed chan netip.AddrPort
}

// Punch runs a simultaneous-open hole punch on s toward the peer of intro:
// it probes every candidate (public, then local, then peer-reflexive sources
// its own probes reveal) each Interval, answers the peer's probes, and returns
// the first path on which its own nonce came back. It fails with a
// *PunchError (ErrPunchFailed) after Timeout, or with ctx's error.
//
// Both sides must call Punch at about the same time (each right after its
// introduction); after success s keeps answering the peer's probes for twice
// the timeout so the peer can confirm too.
func Punch(ctx context.Context, s *Socket, intro Introduction, role Role, cfg PunchConfig) (Path, error) {
	if role != RoleHost && role != RoleClient {
		return Path{}, &InputError{Field: "role", Reason: "must be RoleHost or RoleClient"}
	}
	cands := intro.Candidates()
	if len(cands) == 0 || intro.Attempt.IsZero() {
		return Path{}, &InputError{Field: "introduction", Reason: "needs an attempt and at least one peer endpoint"}
	}
	timeout := cmp0(cfg.Timeout, defaultPunchTimeout)
	interval := cmp0(cfg.Interval, defaultPunchInterval)
	ps := &punchSession{role: byte(role), acked: make(chan netip.AddrPort, 1), probed: make(chan netip.AddrPort, 4)}
	_, _ = rand.Read(ps.nonce[:]) // never fails since Go 1.24: it crashes the process instead
	h := intro.Attempt.engine()
	if err := s.addPunch(h, ps); err != nil {
		return Path{}, err
	}
	start := time.Now()
	end := time.NewTimer(timeout)
	defer end.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var probe [probeSize]byte
	putProbe(&probe, probeType, byte(role), h, ps.nonce)
	probed := false
	send := func() {
		for _, c := range cands {
			// A send error (unreachable LAN candidate) only means that
			// candidate does not work; the others are still tried.
			_, _ = s.conn.WriteToUDPAddrPort(probe[:], c)
		}
	}
	send()
	for {
		select {
		case p := <-ps.acked:
			s.lingerPunch(h, ps, 2*timeout)
			return Path{Peer: p, Elapsed: time.Since(start)}, nil
		case p := <-ps.probed:
			probed = true
			if !slices.Contains(cands, p) && len(cands) < maxCandidates {
				cands = append(cands, p) // peer-reflexive: probe it right away
				_, _ = s.conn.WriteToUDPAddrPort(probe[:], p)
			}
		case <-tick.C:
			send()
		case <-end.C:
			s.removePunch(h, ps)
			return Path{}, &PunchError{Candidates: cands, Timeout: timeout, Probed: probed}
		case <-ctx.Done():
			s.removePunch(h, ps)
			return Path{}, ctx.Err()
		case <-s.done:
			return Path{}, ErrClosed
		}
	}
}

func cmp0(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// maxPunches bounds concurrent and lingering punch sessions per Socket.
const maxPunches = 64

func (s *Socket) addPunch(h engine.Handle, ps *punchSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.punches[h]; !dup && len(s.punches) >= maxPunches {
		return &ConfigError{Field: "punch", Reason: "too many concurrent punches on one socket"}
	}
	s.punches[h] = ps
	return nil
}

func (s *Socket) removePunch(h engine.Handle, ps *punchSession) {
	s.mu.Lock()
	if s.punches[h] == ps {
		delete(s.punches, h)
	}
	s.mu.Unlock()
}

// lingerPunch keeps answering the peer's probes for d, then forgets the session.
func (s *Socket) lingerPunch(h engine.Handle, ps *punchSession, d time.Duration) {
	time.AfterFunc(d, func() { s.removePunch(h, ps) })
}
