package redisstore

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// How values are written into Redis and read back: IDs in their canonical
// form (lexicographic order is ID order, which browse relies on), tenants as
// "game/env" (neither part may hold a '/'), endpoints in netip's form, a
// binding as "public|local", fingerprints as their 16 raw bytes, the spec as
// JSON (immutable, decoded per view).

func tenantArg(t engine.Tenant) string { return t.Game + "/" + t.Env }

func parseTenant(s string) engine.Tenant {
	game, env, _ := strings.Cut(s, "/")
	return engine.Tenant{Game: game, Env: env}
}

func fpArg(f *engine.Fingerprint) string { return string(f[:]) }

func uuidArg(u engine.UUID) string { return u.String() }

func parseID(s string) engine.UUID {
	u, _ := engine.ParseUUID(s)
	return u
}

func endpointArg(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// parseEndpoint parses endpointArg's form. An absent endpoint ("") is
// answered without netip, whose error for it allocates.
func parseEndpoint(s string) netip.AddrPort {
	if s == "" {
		return netip.AddrPort{}
	}
	a, _ := netip.ParseAddrPort(s)
	return a
}

func bindingArg(public, local netip.AddrPort) string {
	return endpointArg(public) + "|" + endpointArg(local)
}

func parseBinding(s string) engine.Binding {
	pub, loc, _ := strings.Cut(s, "|")
	return engine.Binding{Public: parseEndpoint(pub), Local: parseEndpoint(loc)}
}

// packKey joins parts length-prefixed, so no choice of parts collides.
func packKey(kind byte, parts ...string) string {
	b := []byte{kind}
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return string(b)
}

// attemptRequest is a join's request fingerprint (hex, as the listing's);
// a relay-only request adds a byte.
func attemptRequest(cmd *engine.CreateAttempt) string {
	var b [21]byte
	copy(b[:16], cmd.Listing.UUID[:])
	binary.BigEndian.PutUint32(b[16:], cmd.ProtocolVersion)
	n := 20
	if cmd.RelayOnly {
		b[20], n = 1, 21
	}
	sum := sha256.Sum256(b[:n])
	return hex.EncodeToString(sum[:])
}

// handleKeyID names the lease capability used as the key of presence handle
// derivation and attempt handle tags. It is not a version-4 UUID, so no store ever makes a lease
// with this ID and the capability is issued to no one.
var handleKeyID = engine.UUID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// presenceHandle derives a listing's presence handle from its ID with the
// shared keyring, so any instance knows it without a round trip: a join
// attempt's host key derives from it (HostAttemptCapability) and is stored
// by the same call that creates the attempt. It is as unpredictable as a
// random handle to anyone without the capability key.
func (s *Store) presenceHandle(id engine.ListingID) engine.Handle {
	const label = "rdv-presence-handle"
	var msg [len(label) + 16]byte
	copy(msg[copy(msg[:], label):], id.UUID[:])
	sum := engine.HMACSHA256(s.handleKey[:], msg[:])
	var u engine.UUID
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return engine.Handle{UUID: u}
}

// newAttemptHandle makes a random attempt handle that carries a keyed tag:
// bytes 9..15 are an HMAC, under the shared keyring, of bytes 0..8 (66
// random bits besides the version and variant). attemptHandleTagged checks
// it without Redis, so a datagram naming a made-up attempt handle costs no
// round trip: a forger passes with probability 2^-56.
func (s *Store) newAttemptHandle() engine.Handle {
	u := engine.NewUUID()
	tag := s.attemptHandleTag(&u)
	copy(u[9:], tag[:7])
	return engine.Handle{UUID: u}
}

func (s *Store) attemptHandleTagged(h engine.Handle) bool {
	tag := s.attemptHandleTag(&h.UUID)
	return subtle.ConstantTimeCompare(tag[:7], h.UUID[9:]) == 1
}

func (s *Store) attemptHandleTag(u *engine.UUID) [32]byte {
	const label = "rdv-attempt-handle"
	var msg [len(label) + 9]byte
	copy(msg[copy(msg[:], label):], u[:9])
	return engine.HMACSHA256(s.handleKey[:], msg[:])
}

func str(m rueidis.RedisMessage) string {
	v, _ := m.ToString()
	return v
}

func num(m rueidis.RedisMessage) int64 {
	if v, err := m.AsInt64(); err == nil {
		return v
	}
	v, _ := strconv.ParseInt(str(m), 10, 64)
	return v
}

// duration converts ticks to a duration.
func (s *Store) duration(ticks int64) time.Duration { return time.Duration(ticks) * s.tick }

// wall converts a deadline in ticks to informational wall time.
func (s *Store) wall(ticks int64) time.Time {
	if s.clock == nil {
		return time.UnixMicro(ticks)
	}
	return s.wallOrigin.Add(s.duration(ticks) - s.monoOrigin)
}

// listingView decodes 70_views.lua's listingView.
func (s *Store) listingView(m rueidis.RedisMessage) (engine.ListingView, bool) {
	f, err := m.ToArray()
	if err != nil || len(f) != 16 {
		return engine.ListingView{}, false
	}
	id := parseID(str(f[0]))
	spec, ok := s.specOf(id, str(f[5]))
	if !ok {
		return engine.ListingView{}, false
	}
	v := engine.ListingView{
		ID: engine.ListingID{UUID: id}, Lease: engine.LeaseID{UUID: parseID(str(f[1]))},
		Presence: engine.Handle{UUID: parseID(str(f[2]))}, Tenant: parseTenant(str(f[3])),
		Owner: engine.Subject(str(f[4])), Spec: spec, CurrentPlayers: int(num(f[7])),
		LeaseExpiresAt: s.wall(num(f[9])), LeaseTTL: s.duration(num(f[10])), PresenceFresh: num(f[11]) == 1,
		HostPublic: parseBinaryEndpoint(str(f[12])), HostLocal: parseBinaryEndpoint(str(f[13])), PresenceInstance: parseID(str(f[14])),
		Attributes: parseAttrs(str(f[15])),
	}
	if doc := str(f[6]); doc != "" {
		v.Doc = []byte(doc)
	}
	v.Version, _ = strconv.ParseUint(str(f[8]), 10, 64)
	return v, true
}

// specOf is listing id's spec, stored as raw: the local browse index's
// copy when it holds the listing (a spec never changes once stored, so a
// renewal or a read of a visible listing decodes nothing), else decoded.
func (s *Store) specOf(id engine.UUID, raw string) (*engine.ListingSpec, bool) {
	if spec := s.mirror.spec(id); spec != nil {
		return spec, true
	}
	spec := new(engine.ListingSpec)
	if json.Unmarshal([]byte(raw), spec) != nil {
		return nil, false
	}
	return spec, true
}

// listingReadFields are get_listing.lua's answer: the listing's fields as
// stored, its presence record while fresh and the instance it names.
type listingReadFields [12]string

// listingRead decodes get_listing.lua's answer for listing id of tenant t:
// the view is built here from the stored fields, not in the function.
func (s *Store) listingRead(m rueidis.RedisMessage, id engine.ListingID, t engine.Tenant) (engine.ListingView, bool) {
	var f listingReadFields
	if !fieldsOf(m, f[:]) {
		return engine.ListingView{}, false
	}
	spec, ok := s.specOf(id.UUID, f[3])
	if !ok {
		return engine.ListingView{}, false
	}
	v := engine.ListingView{
		ID: id, Lease: engine.LeaseID{UUID: parseID(f[0])}, Presence: engine.Handle{UUID: parseID(f[1])}, Tenant: t,
		Owner: engine.Subject(f[2]), Spec: spec, CurrentPlayers: int(parseNum(f[5])),
		LeaseExpiresAt: s.wall(parseNum(f[7])), LeaseTTL: s.duration(parseNum(f[8])), PresenceInstance: parseID(f[10]),
		Attributes: parseAttrs(f[11]),
	}
	if f[4] != "" {
		v.Doc = []byte(f[4])
	}
	v.Version, _ = strconv.ParseUint(f[6], 10, 64)
	if f[9] != "" {
		rec, ok := parsePresenceRecord(f[9])
		if !ok || !rec.fresh {
			return engine.ListingView{}, false
		}
		v.PresenceFresh, v.HostPublic, v.HostLocal = true, rec.public, rec.local
	}
	return v, true
}

// attemptView decodes 70_views.lua's attemptView.
func (s *Store) attemptView(m rueidis.RedisMessage) (engine.AttemptView, bool) {
	var f attemptFields
	if !fieldsOf(m, f[:]) {
		return engine.AttemptView{}, false
	}
	return s.attemptViewOf(&f), true
}

// attemptFields are 70_views.lua's attemptView as strings.
type attemptFields [19]string

func (s *Store) attemptViewOf(f *attemptFields) engine.AttemptView {
	return engine.AttemptView{
		ID: engine.AttemptID{UUID: parseID(f[0])}, Handle: engine.Handle{UUID: parseID(f[1])},
		Listing: engine.ListingID{UUID: parseID(f[2])}, Tenant: parseTenant(f[3]),
		Client: engine.Subject(f[4]), ExpiresAt: s.wall(parseNum(f[5])), TTL: s.duration(parseNum(f[6])),
		HostPresence: engine.Handle{UUID: parseID(f[7])}, HostPresencePublic: parseBinaryEndpoint(f[8]),
		Host: parseBinding(f[9]), Peer: parseBinding(f[10]), Consumed: f[11] == "1",
		HostPresenceInstance: parseID(f[12]), HostInstance: parseID(f[13]), PeerInstance: parseID(f[14]),
		RelayOnly: f[15] == "1", HostRelayed: parseEndpoint(f[16]), PeerRelayed: parseEndpoint(f[17]),
		RelayConsumed: f[18] == "1",
	}
}

// introduction decodes 70_views.lua's introduction.
func introduction(m rueidis.RedisMessage) (engine.Introduction, bool) {
	var f introductionFields
	if !fieldsOf(m, f[:]) {
		return engine.Introduction{}, false
	}
	return introductionOf(&f), true
}

// introductionFields are 70_views.lua's introduction as strings.
type introductionFields [4]string

func introductionOf(f *introductionFields) engine.Introduction {
	return engine.Introduction{
		Attempt: engine.AttemptID{UUID: parseID(f[0])}, Handle: engine.Handle{UUID: parseID(f[1])},
		Host: parseBinding(f[2]), Client: parseBinding(f[3]),
	}
}

// fieldsOf reads an array answer of exactly len(f) strings or integers
// into f.
func fieldsOf(m rueidis.RedisMessage, f []string) bool {
	a, err := m.ToArray()
	if err != nil || len(a) != len(f) {
		return false
	}
	for i := range a {
		if n, err := a[i].AsInt64(); err == nil {
			f[i] = strconv.FormatInt(n, 10)
		} else {
			f[i] = str(a[i])
		}
	}
	return true
}

// packedFields reads len(f) fields, each after its length (2 bytes,
// big-endian), from the front of p (apply_batch.lua's packFields) into f,
// and returns the rest.
func packedFields(p string, f []string) (string, bool) {
	for i := range f {
		if len(p) < 2 {
			return p, false
		}
		n := int(p[0])<<8 | int(p[1])
		if len(p) < 2+n {
			return p, false
		}
		f[i], p = p[2:2+n], p[2+n:]
	}
	return p, true
}

func parseNum(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// presenceView decodes bind_presence.lua's answer.
func (s *Store) presenceView(m rueidis.RedisMessage) (engine.PresenceView, bool) {
	f, err := m.ToArray()
	if err != nil || len(f) != 3 {
		return engine.PresenceView{}, false
	}
	pending, _ := f[2].ToArray()
	v := engine.PresenceView{Listing: engine.ListingID{UUID: parseID(str(f[0]))}, TTL: s.duration(num(f[1]))}
	for _, h := range pending {
		if v.NPending == engine.PendingOffersMax {
			break
		}
		v.Pending[v.NPending] = engine.Handle{UUID: parseID(str(h))}
		v.NPending++
	}
	return v, true
}
