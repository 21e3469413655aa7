package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
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
	// Peer is where the peer's ack came from: send application datagrams
	// here (Socket.WriteTo). On a relayed path it is the peer's relayed
	// address on its TURN relay, and Socket.WriteTo sends through the relay.
	Peer netip.AddrPort
	// Elapsed is how long the punch took (on a relayed path: the failed
	// direct punch, if one ran, and the relay's allocation, introduction and
	// probing).
	Elapsed time.Duration
	// Relayed reports that the path goes through a TURN relay.
	Relayed bool
}

// PunchError is the typed failure of a punch; it matches ErrPunchFailed.
type PunchError struct {
	Candidates []netip.AddrPort
	Timeout    time.Duration
	Probed     bool // the peer's probes reached us, ours never got an ack
	Relayed    bool // the candidates were relayed addresses, probed through the relay
}

func (e *PunchError) Error() string {
	via := ""
	if e.Relayed {
		via = " through the relay"
	}
	s := fmt.Sprintf("rendezvous: hole punch failed: no confirmed path%s to %v within %v", via, e.Candidates, e.Timeout)
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

// Punch connects s to the peer of intro. It runs a simultaneous-open hole
// punch: it probes every candidate (public, then local, then peer-reflexive
// sources its own probes reveal) each Interval, answers the peer's probes,
// and returns the first path on which its own nonce came back. It fails with
// a *PunchError (ErrPunchFailed) after Timeout, or with ctx's error.
//
// For an introduction from Joiner.Join or Publisher.Accept, Punch also falls
// back to the TURN relay the server granted: after a failed direct punch
// (within one more Timeout), or at once for a relay-only attempt, it
// allocates on the relay, sends its relayed address to the mediator, waits
// for the peer's (RELAY-INTRODUCE) and probes through the relay; the Path
// then says Relayed. A relay that refuses the credentials fails with
// ErrRelayRefused (joined with ErrPunchFailed after a failed direct punch).
// Each side reports its outcome (direct, relayed or failed, with the time
// since it joined) to the mediator once.
//
// Both sides must call Punch at about the same time (each right after its
// introduction); after success s keeps answering the peer's probes for twice
// the timeout so the peer can confirm too.
func Punch(ctx context.Context, s *Socket, intro Introduction, role Role, cfg PunchConfig) (Path, error) {
	if role != RoleHost && role != RoleClient {
		return Path{}, &InputError{Field: "role", Reason: "must be RoleHost or RoleClient"}
	}
	timeout := cmp0(cfg.Timeout, defaultPunchTimeout)
	interval := cmp0(cfg.Interval, defaultPunchInterval)
	side := intro.side
	h := intro.Attempt.engine()
	if intro.RelayOnly() {
		p, err := relayPunch(ctx, s, side, role, timeout, interval)
		s.reportPunch(ctx, side, p, err)
		return p, err
	}
	cands := intro.Candidates()
	if len(cands) == 0 || intro.Attempt.IsZero() {
		return Path{}, &InputError{Field: "introduction", Reason: "needs an attempt and at least one peer endpoint"}
	}
	p, err := probePath(ctx, s, h, role, cands, s.conn, timeout, interval, nil)
	var pe *PunchError
	if errors.As(err, &pe) && side != nil && side.relay != nil {
		var rerr error
		if p, rerr = relayPunch(ctx, s, side, role, timeout, interval); rerr == nil {
			err = nil
			p.Elapsed += pe.Timeout // the direct punch's time counts too
		} else if errors.Is(rerr, errRelayOff) {
			p = Path{} // no relay on this server: the punch's own error stands
		} else {
			err = fmt.Errorf("%w; relay fallback failed: %w", err, rerr)
		}
	}
	s.reportPunch(ctx, side, p, err)
	return p, err
}

// reportPunch reports the outcome of a punch that ended with a path or
// failed on its own (not cancelled by the caller, not a closed socket).
func (s *Socket) reportPunch(ctx context.Context, side *attemptSide, p Path, err error) {
	switch {
	case err == nil && p.Relayed:
		s.reportOutcome(ctx, side, stun.PathRelayed)
	case err == nil:
		s.reportOutcome(ctx, side, stun.PathDirect)
	case ctx.Err() == nil && !errors.Is(err, ErrClosed):
		s.reportOutcome(ctx, side, stun.PathFailed)
	}
}

// probePath probes cands through w until an ack confirms one of them. first,
// if set, sends the first probe instead of w (a relay installs its
// permission for the peer with it).
func probePath(ctx context.Context, s *Socket, h engine.Handle, role Role, cands []netip.AddrPort, w datagramWriter, timeout, interval time.Duration, first func(probe []byte) error) (Path, error) {
	ps := &punchSession{role: byte(role), acked: make(chan netip.AddrPort, 1), probed: make(chan netip.AddrPort, 4)}
	_, _ = rand.Read(ps.nonce[:]) // never fails since Go 1.24: it crashes the process instead
	if err := s.addPunch(h, ps); err != nil {
		return Path{}, err
	}
	start := time.Now()
	end := time.NewTimer(timeout)
	defer end.Stop()
	var probe [probeSize]byte
	putProbe(&probe, probeType, byte(role), h, ps.nonce)
	if first != nil {
		if err := first(probe[:]); err != nil {
			s.removePunch(h, ps)
			return Path{}, err
		}
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	probed := false
	send := func() {
		for _, c := range cands {
			// A send error (unreachable LAN candidate) only means that
			// candidate does not work; the others are still tried.
			_, _ = w.WriteToUDPAddrPort(probe[:], c)
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
				_, _ = w.WriteToUDPAddrPort(probe[:], p)
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
