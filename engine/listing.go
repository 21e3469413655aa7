package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

type Visibility uint8

const (
	Public Visibility = iota + 1
	Unlisted
)

func (v Visibility) String() string {
	switch v {
	case Public:
		return "public"
	case Unlisted:
		return "unlisted"
	}
	return ""
}

type TrustMode uint8

const (
	ManagedDedicated TrustMode = iota + 1
	PlayerHosted
)

func (m TrustMode) String() string {
	switch m {
	case ManagedDedicated:
		return "managed_dedicated"
	case PlayerHosted:
		return "player_hosted"
	}
	return ""
}

// Listing field limits (docs/contracts/http.md#create-a-listing).
const (
	MaxRegionLen       = 32
	MaxBuildVersionLen = 32
	MaxDisplayNameRune = 64
	MaxPlayers         = 1024
	MaxMetadataEntries = 16
	MaxMetadataKeyLen  = 32
	MaxMetadataValue   = 256
)

// MetaEntry is one metadata pair.
type MetaEntry struct{ Key, Value string }

// ListingSpec is what a publisher advertises. Once stored it is immutable and
// shared by every view of the listing (CurrentPlayers in the spec is the
// initial count; the live count is in ListingView).
type ListingSpec struct {
	Region          string
	ProtocolVersion uint32
	BuildVersion    string
	DisplayName     string
	Visibility      Visibility
	TrustMode       TrustMode
	CurrentPlayers  int
	MaxPlayers      int
	// Metadata is sorted by key with unique keys (Validate checks it).
	Metadata []MetaEntry
	// RelayOnlyJoins makes every join attempt of the listing relay-only.
	RelayOnlyJoins bool
	// Attributes are the indexed attributes the listing starts with.
	Attributes Attributes
}

// Validate checks every limit of docs/contracts/http.md#create-a-listing.
func (s *ListingSpec) Validate() error {
	if len(s.Region) < 1 || len(s.Region) > MaxRegionLen || !allBytes(s.Region, isRegionByte) {
		return inputErr("region", "must be 1-32 characters of [a-z0-9-]")
	}
	if s.ProtocolVersion == 0 {
		return inputErr("protocol_version", "must be 1..4294967295")
	}
	if len(s.BuildVersion) < 1 || len(s.BuildVersion) > MaxBuildVersionLen || !allBytes(s.BuildVersion, isBuildByte) {
		return inputErr("build_version", "must be 1-32 characters of [0-9A-Za-z.+_-]")
	}
	if !validDisplayName(s.DisplayName) {
		return inputErr("display_name", "must be 1-64 code points of UTF-8, no control or format characters")
	}
	if s.Visibility != Public && s.Visibility != Unlisted {
		return inputErr("visibility", "must be public or unlisted")
	}
	if s.TrustMode != ManagedDedicated && s.TrustMode != PlayerHosted {
		return inputErr("trust_mode", "must be managed_dedicated or player_hosted")
	}
	if s.MaxPlayers < 1 || s.MaxPlayers > MaxPlayers { // 0 would be a session nobody can join
		return inputErr("max_players", "must be 1..1024")
	}
	if s.CurrentPlayers < 0 || s.CurrentPlayers > s.MaxPlayers {
		return inputErr("current_players", "must be 0..max_players")
	}
	if len(s.Metadata) > MaxMetadataEntries {
		return inputErr("metadata", "at most 16 entries")
	}
	for i, e := range s.Metadata {
		if len(e.Key) < 1 || len(e.Key) > MaxMetadataKeyLen || !allBytes(e.Key, isMetaKeyByte) {
			return inputErr("metadata", "keys must be 1-32 characters of [a-z0-9_.-]")
		}
		if i > 0 && s.Metadata[i-1].Key >= e.Key {
			return inputErr("metadata", "keys must be unique and sorted")
		}
		if len(e.Value) > MaxMetadataValue || !utf8.ValidString(e.Value) || hasControl(e.Value) {
			return inputErr("metadata", "values must be 0-256 bytes of UTF-8 without control characters")
		}
	}
	return s.Attributes.Validate()
}

// Hash is the canonical request fingerprint used for idempotency: equal specs
// hash equal whatever the JSON member order or whitespace was.
func (s *ListingSpec) Hash() [32]byte {
	h := sha256.New()
	var n [8]byte
	str := func(v string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		h.Write([]byte(v))
	}
	num := func(v uint64) {
		binary.BigEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	str(s.Region)
	num(uint64(s.ProtocolVersion))
	str(s.BuildVersion)
	str(s.DisplayName)
	num(uint64(s.Visibility))
	num(uint64(s.TrustMode))
	num(uint64(s.CurrentPlayers))
	num(uint64(s.MaxPlayers))
	num(uint64(len(s.Metadata)))
	for _, e := range s.Metadata {
		str(e.Key)
		str(e.Value)
	}
	if s.RelayOnlyJoins { // appended only when set: every other spec keeps its fingerprint
		num(1)
	}
	if len(s.Attributes) > 0 { // likewise: a spec without attributes keeps its fingerprint
		num(2)
		num(uint64(len(s.Attributes)))
		for _, a := range s.Attributes {
			str(a.Name)
			if a.IsNum {
				num(1)
				num(uint64(a.Num))
			} else {
				num(0)
				str(a.Str)
			}
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isRegionByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' }
func isMetaKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}
func isBuildByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '+' || c == '_' || c == '-'
}

func validDisplayName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	n := utf8.RuneCountInString(s)
	if n < 1 || n > MaxDisplayNameRune {
		return false
	}
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) {
			return true
		}
	}
	return false
}
