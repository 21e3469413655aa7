package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"sync"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// linSlot is what the goroutines of one slot know (from answers they got)
// and the sockets they share. Every operation records its own input and
// answer; what it learns here only steers later operations.
type linSlot struct {
	idx     int
	p       *proc
	d       *linDeployment // several instances (nil: p alone)
	client  *http.Client
	key     string // the creation idempotency key
	host    [linSocks]*linSock
	clients [linSocks]*linSock

	mu         sync.Mutex
	known      bool // a create answered the IDs below
	listing    string
	leaseID    string
	leaseToken string
	presence   engine.Handle
	presCap    engine.Capability
	version    uint64 // the last version an answer named: a hint for renew
	seq        uint64 // the last RDV-SEQUENCE handed out
	attempts   [linJoinKeys]linAttempt
	intro      introCounts // INTRODUCEs the sockets received
	introErr   error
	// countOnly: count INTRODUCEs in introTotal without attributing them
	// (for load whose attempts outnumber linJoinKeys).
	countOnly  bool
	introTotal int
}

type linAttempt struct {
	known     bool
	handle    engine.Handle
	clientCap engine.Capability
	hostCap   engine.Capability
}

// listingBodyFor is creation body b (0 or 1: they differ only in the
// display name) of slot k; the region names the slot, so a browse by
// region sees this slot alone.
func listingBodyFor(k, b int) map[string]any {
	return map[string]any{
		"region": "lin-" + strconv.Itoa(k), "protocol_version": 7, "build_version": "1.0",
		"display_name": fmt.Sprintf("slot %d body %d", k, b), "visibility": "public", "trust_mode": "player_hosted",
		"current_players": initialPlayers, "max_players": maxPlayers,
	}
}

// do sends one HTTP request with the token of role and returns the status
// and body. With several instances it goes to the next live one in turn;
// when the one it went to is the victim of the run's fault, a failure to
// get an answer is errUnknownOutcome.
func (s *linSlot) do(method, path, role string, body any, hdr ...string) (int, []byte, error) {
	p, victim := s.p, false
	if s.d != nil {
		p, victim = s.d.pick()
	}
	req, err := e2e.NewRequest(method, "http://"+p.httpAddr+path, p.tokens[role], body, hdr...)
	if err != nil {
		return 0, nil, err
	}
	resp, b, err := e2e.Exchange(s.client, req)
	if resp == nil {
		return 0, nil, unknownIf(victim, fmt.Errorf("%s %s: %w", method, path, err))
	}
	if err != nil {
		return 0, nil, unknownIf(victim, fmt.Errorf("%s %s: reading the body: %w", method, path, err))
	}
	return resp.StatusCode, b, nil
}

func decodeIf(ok bool, b []byte, v any) error {
	if !ok {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("body %s: %w", b, err)
	}
	return nil
}

func (s *linSlot) create(in linInput) (linOutput, error) {
	code, b, err := s.do("POST", "/v1/listings", "publisher", listingBodyFor(s.idx, in.Body), "Idempotency-Key", s.key)
	if err != nil {
		return linOutput{}, err
	}
	var pub published
	if err := decodeIf(code == 200 || code == 201, b, &pub); err != nil {
		return linOutput{}, err
	}
	out := linOutput{Code: code, ID1: pub.ListingID, ID2: pub.Lease.LeaseID, ID3: pub.Presence.Handle, Version: pub.Lease.Version}
	if code == 200 || code == 201 {
		s.mu.Lock()
		if !s.known {
			s.known = true
			s.listing, s.leaseID, s.leaseToken = pub.ListingID, pub.Lease.LeaseID, pub.Lease.Token
			h, okH := engine.ParseUUID(pub.Presence.Handle)
			c, okC := engine.ParseToken(pub.Presence.Token)
			if !okH || !okC {
				s.mu.Unlock()
				return out, fmt.Errorf("create: bad presence handle or token")
			}
			s.presence, s.presCap = engine.Handle{UUID: h}, c
		}
		s.mu.Unlock()
	}
	return out, nil
}

func (s *linSlot) renew(in linInput) (linOutput, error) {
	s.mu.Lock()
	body := map[string]any{"lease_id": s.leaseID, "lease_token": s.leaseToken, "expected_version": in.Expect}
	listing := s.listing
	s.mu.Unlock()
	if in.Players >= 0 {
		body["current_players"] = in.Players
	}
	code, b, err := s.do("PUT", "/v1/listings/"+listing+"/lease", "publisher", body)
	if err != nil {
		return linOutput{}, err
	}
	var r struct {
		Version        uint64 `json:"version"`
		CurrentVersion uint64 `json:"current_version"`
	}
	if err := decodeIf(code == 200 || code == 409, b, &r); err != nil {
		return linOutput{}, err
	}
	out := linOutput{Code: code, Version: r.Version}
	if code == 409 {
		out.Version = r.CurrentVersion
	}
	if out.Version != 0 {
		s.mu.Lock()
		s.version = max(s.version, out.Version)
		s.mu.Unlock()
	}
	return out, nil
}

func (s *linSlot) remove() (linOutput, error) {
	s.mu.Lock()
	listing, leaseID, tok := s.listing, s.leaseID, s.leaseToken
	s.mu.Unlock()
	code, _, err := s.do("DELETE", "/v1/listings/"+listing, "publisher", nil, "Lease-Id", leaseID, "Lease-Token", tok)
	return linOutput{Code: code}, err
}

func (s *linSlot) get() (linOutput, error) {
	s.mu.Lock()
	listing := s.listing
	s.mu.Unlock()
	code, b, err := s.do("GET", "/v1/listings/"+listing, "client", nil)
	if err != nil {
		return linOutput{}, err
	}
	var item struct {
		CurrentPlayers int `json:"current_players"`
	}
	err = decodeIf(code == 200, b, &item)
	return linOutput{Code: code, Players: item.CurrentPlayers}, err
}

func (s *linSlot) browse() (linOutput, error) {
	code, b, err := s.do("GET", "/v1/listings?protocol_version=7&region=lin-"+strconv.Itoa(s.idx), "client", nil)
	if err != nil {
		return linOutput{}, err
	}
	var page struct {
		Items []struct {
			CurrentPlayers int `json:"current_players"`
		} `json:"items"`
	}
	if err := decodeIf(code == 200, b, &page); err != nil {
		return linOutput{}, err
	}
	out := linOutput{Code: code, Items: len(page.Items)}
	if len(page.Items) > 0 {
		out.Players = page.Items[0].CurrentPlayers
	}
	return out, nil
}

func (s *linSlot) join(in linInput) (linOutput, error) {
	s.mu.Lock()
	listing := s.listing
	s.mu.Unlock()
	code, b, err := s.do("POST", "/v1/listings/"+listing+"/join-attempts", "client", map[string]any{"protocol_version": 7},
		"Idempotency-Key", s.key+"-join-"+strconv.Itoa(in.Key))
	if err != nil {
		return linOutput{}, err
	}
	var j joined
	if err := decodeIf(code == 200 || code == 201, b, &j); err != nil {
		return linOutput{}, err
	}
	if code == 200 || code == 201 {
		u, okH := engine.ParseUUID(j.Handle)
		c, okC := engine.ParseToken(j.Token)
		if !okH || !okC {
			return linOutput{}, fmt.Errorf("join: bad handle or token")
		}
		h := engine.Handle{UUID: u}
		s.mu.Lock()
		if a := &s.attempts[in.Key]; !a.known {
			*a = linAttempt{known: true, handle: h, clientCap: c, hostCap: engine.HostAttemptCapability(&s.presCap, h)}
		}
		s.mu.Unlock()
	}
	return linOutput{Code: code, ID1: j.AttemptID, ID2: j.Handle}, nil
}

func (s *linSlot) refresh(in linInput) (linOutput, error) {
	s.mu.Lock()
	h, key := s.presence, s.presCap
	s.mu.Unlock()
	code, m, err := s.host[0].roundTrip(stun.KindPresence, h, &key, in.Seq)
	if err != nil || code != 200 {
		return linOutput{Code: code}, err
	}
	out := linOutput{Code: code, NPending: m.NumAttempts()}
	i := 0
	for a := range m.Attempts() {
		if i < len(out.Pending) {
			out.Pending[i] = a.UUID.String()
		}
		i++
	}
	return out, nil
}

func (s *linSlot) bind(in linInput) (linOutput, error) {
	s.mu.Lock()
	a := s.attempts[in.Key]
	s.mu.Unlock()
	sock, kind, key := s.host[in.Sock], stun.KindAttemptHost, a.hostCap
	if in.Role == roleClientIdx {
		sock, kind, key = s.clients[in.Sock], stun.KindAttemptClient, a.clientCap
	}
	code, _, err := sock.roundTrip(kind, a.handle, &key, 0)
	return linOutput{Code: code}, err
}

// onIntro counts an INTRODUCE that reached sock number sockIdx of role
// role, after checking its USERNAME, signature and the peer it names.
func (s *linSlot) onIntro(role, sockIdx int, m *stun.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.countOnly {
		s.introTotal++
		return
	}
	fail := func(format string, args ...any) {
		if s.introErr == nil {
			s.introErr = fmt.Errorf(format, args...)
		}
	}
	name, _ := m.Username()
	kind, h, ok := stun.ParseUsername(name)
	wantKind := map[int]byte{roleHostIdx: stun.KindAttemptHost, roleClientIdx: stun.KindAttemptClient}[role]
	if !ok || kind != wantKind {
		fail("INTRODUCE with USERNAME %q reached a socket of role %d", name, role)
		return
	}
	for k, a := range s.attempts {
		if !a.known || a.handle != h {
			continue
		}
		key := a.hostCap
		peers := s.clients
		if role == roleClientIdx {
			key, peers = a.clientCap, s.host
		}
		if !m.CheckIntegrity(key[:]) {
			fail("INTRODUCE not signed with the recipient's capability")
			return
		}
		pub, _ := m.XORAddress(stun.AttrXORPeerAddress)
		local, _ := m.XORAddress(stun.AttrPeerLocalAddress)
		peer := linSocks // neither of the other role's sockets
		for i, ps := range peers {
			if ps.addr == pub && ps.local == local {
				peer = i
			}
		}
		s.intro[k][role][sockIdx][peer]++
		return
	}
	fail("INTRODUCE for an attempt no join answered")
}

// openSockets opens the slot's sockets with made-up LAN addresses unique
// per socket, and starts their readers.
func (s *linSlot) openSockets() error {
	for role, socks := range []*[linSocks]*linSock{&s.host, &s.clients} {
		for i := range socks {
			local := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(s.idx), byte(role), byte(i + 1)}), 5000)
			mediator := s.p.mediator
			if s.d != nil {
				mediator = s.d.mediatorFor(s.idx + role + i)
			}
			sock, err := newLinSock(mediator, local)
			if err != nil {
				return err
			}
			role, i := role, i
			sock.onIntro = func(m *stun.Message) { s.onIntro(role, i, m) }
			if s.d != nil {
				s.d.addSock(sock)
			}
			socks[i] = sock
			go sock.read()
		}
	}
	return nil
}

func (s *linSlot) closeSockets() {
	for _, sock := range append(s.host[:], s.clients[:]...) {
		if sock != nil {
			sock.conn.Close()
		}
	}
}

// sockErr is the first malformed datagram any socket of the slot saw.
func (s *linSlot) sockErr() error {
	for _, sock := range append(s.host[:], s.clients[:]...) {
		sock.mu.Lock()
		err := sock.err
		sock.mu.Unlock()
		if err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.introErr
}
