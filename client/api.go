package client

import (
	"net/netip"
	"sort"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// ListingSpec is what a publisher advertises (docs/contracts/http.md#create-a-listing).
type ListingSpec struct {
	Region          string            `json:"region"`
	ProtocolVersion uint32            `json:"protocol_version"`
	BuildVersion    string            `json:"build_version"`
	DisplayName     string            `json:"display_name"`
	Visibility      string            `json:"visibility"` // "public" or "unlisted"
	TrustMode       string            `json:"trust_mode"` // "managed_dedicated" or "player_hosted"
	CurrentPlayers  int               `json:"current_players"`
	MaxPlayers      int               `json:"max_players"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	// RelayOnlyJoins makes every join attempt of the listing relay-only.
	RelayOnlyJoins bool `json:"relay_only_joins,omitempty"`
	// Attributes are the indexed attributes the listing starts with.
	Attributes Attributes `json:"attributes,omitempty"`
}

// Validate checks the contract's limits locally, so a bad spec is refused
// with an *InputError before anything is sent.
func (s *ListingSpec) Validate() error {
	es := engine.ListingSpec{
		Region: s.Region, ProtocolVersion: s.ProtocolVersion, BuildVersion: s.BuildVersion,
		DisplayName: s.DisplayName, CurrentPlayers: s.CurrentPlayers, MaxPlayers: s.MaxPlayers,
	}
	switch s.Visibility {
	case "public":
		es.Visibility = engine.Public
	case "unlisted":
		es.Visibility = engine.Unlisted
	}
	switch s.TrustMode {
	case "managed_dedicated":
		es.TrustMode = engine.ManagedDedicated
	case "player_hosted":
		es.TrustMode = engine.PlayerHosted
	}
	for k, v := range s.Metadata {
		es.Metadata = append(es.Metadata, engine.MetaEntry{Key: k, Value: v})
	}
	sort.Slice(es.Metadata, func(i, j int) bool { return es.Metadata[i].Key < es.Metadata[j].Key })
	var err error
	if es.Attributes, err = s.Attributes.engine(); err != nil {
		return err
	}
	return checked(es.Validate())
}

// Listing is one browse or get-by-ID item
// (docs/contracts/http.md#browse-listings,
// docs/contracts/http.md#get-a-listing).
type Listing struct {
	ListingID       ListingID         `json:"listing_id"`
	Region          string            `json:"region"`
	ProtocolVersion uint32            `json:"protocol_version"`
	BuildVersion    string            `json:"build_version"`
	DisplayName     string            `json:"display_name"`
	TrustMode       string            `json:"trust_mode"`
	CurrentPlayers  int               `json:"current_players"`
	MaxPlayers      int               `json:"max_players"`
	Metadata        map[string]string `json:"metadata"`
	LeaseExpiresAt  time.Time         `json:"lease_expires_at"`
	Visibility      string            `json:"visibility,omitempty"` // get-by-ID only
	RelayOnlyJoins  bool              `json:"relay_only_joins,omitempty"`
	// Attributes are the live indexed attributes (nil when none).
	Attributes Attributes `json:"attributes,omitempty"`
}

// Lease is a listing's lease as the owner sees it. Token is the lease
// capability: it prints redacted.
type Lease struct {
	ID        LeaseID
	Token     Capability
	Version   uint64
	ExpiresAt time.Time
	TTL       time.Duration
}

// PresenceGrant is what the host needs for its UDP heartbeat.
type PresenceGrant struct {
	Handle   Handle
	Token    Capability
	Mediator string // host:port as the server advertised it
	Interval time.Duration
	TTL      time.Duration
}

// CreatedListing is the answer to a listing creation.
type CreatedListing struct {
	ListingID ListingID
	Lease     Lease
	Presence  PresenceGrant
	// Replayed is true when the server answered an idempotent replay.
	Replayed bool
}

// Attempt is a join attempt as the client sees it (docs/contracts/http.md#create-a-join-attempt).
type Attempt struct {
	AttemptID AttemptID
	// ListingID is the listing joined (the one a quick join chose).
	ListingID ListingID
	Handle    Handle
	Token     Capability // the client's attempt capability
	Mediator  string
	// RelayOnly: the attempt never reveals either side's addresses to the
	// other (the client asked, or the listing requires it).
	RelayOnly bool
	// Relay is the client side's TURN relay, nil when the server has
	// relaying off.
	Relay     *Relay
	ExpiresAt time.Time
	TTL       time.Duration
	Replayed  bool
}

// Whoami describes the authenticated principal.
type Whoami struct {
	Subject       string   `json:"subject"`
	GameID        string   `json:"game_id"`
	EnvironmentID string   `json:"environment_id"`
	Roles         []string `json:"roles"`
}

// Introduction is what the mediator tells each side about the other: the
// attempt it belongs to and the peer's endpoints. Local is invalid when the
// peer did not report its LAN address. For a relay-only attempt Public and
// Local stay invalid (the mediator never reveals them) and Punch connects
// through the relay; Relayed is the peer's address on its TURN relay once a
// relay introduction arrived.
type Introduction struct {
	Attempt Handle
	Public  netip.AddrPort
	Local   netip.AddrPort
	Relayed netip.AddrPort
	// side is what this side keeps for the relay fallback and its outcome
	// report; nil for an Introduction the caller built itself.
	side *attemptSide
}

// AttemptID returns the attempt's ID to the client that joined (for
// API.AttemptStatus); zero on the host side, which never learns it.
func (in Introduction) AttemptID() AttemptID {
	if in.side == nil {
		return AttemptID{}
	}
	return in.side.id
}

// RelayOnly reports that the attempt connects through the relay only.
func (in Introduction) RelayOnly() bool { return in.side != nil && in.side.relayOnly }

// Candidates returns the endpoints worth probing, public first, without
// duplicates or invalid ones.
func (in Introduction) Candidates() []netip.AddrPort {
	c := make([]netip.AddrPort, 0, 2)
	if in.Public.IsValid() {
		c = append(c, in.Public)
	}
	if in.Local.IsValid() && in.Local != in.Public && !in.Local.Addr().IsUnspecified() {
		c = append(c, in.Local)
	}
	return c
}
