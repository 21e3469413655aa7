package httpapi

import (
	"slices"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// Request decoders. Each reads one body with a strict decoder, rejects
// unknown and duplicate members, checks every type and range, and leaves its
// result in the caller's value. They never touch the store.

const maxUint32 = 1<<32 - 1

// Members of a POST /v1/listings body, in the order of listingFields.
const (
	fRegion = iota
	fProto
	fBuild
	fName
	fVis
	fTrust
	fCur
	fMax
	fMeta
	fRelayOnlyJoins
	fAttrs
)

var listingFields = []string{"region", "protocol_version", "build_version", "display_name",
	"visibility", "trust_mode", "current_players", "max_players", "metadata", "relay_only_joins", "attributes"}

// Every member but metadata, relay_only_joins and attributes is required
// (omitted, null and {} metadata or attributes are equal; relay_only_joins
// defaults to false).
const listingRequired = 1<<fMeta - 1

var (
	visibilities = []enumName[engine.Visibility]{{"public", engine.Public}, {"unlisted", engine.Unlisted}}
	trustModes   = []enumName[engine.TrustMode]{
		{"managed_dedicated", engine.ManagedDedicated}, {"player_hosted", engine.PlayerHosted}}
)

// decodeCreateListing reads a POST /v1/listings body into spec (metadata
// sorted by key) and validates it completely.
func decodeCreateListing(d *decoder, body []byte, spec *engine.ListingSpec) error {
	*spec = engine.ListingSpec{}
	err := d.object(body, listingFields, listingRequired, func(i int) (err error) {
		f := listingFields[i]
		switch i {
		case fRegion:
			spec.Region, err = d.readText(f)
		case fProto:
			var v uint64
			v, err = d.readUint(f, 1, maxUint32)
			spec.ProtocolVersion = uint32(v)
		case fBuild:
			spec.BuildVersion, err = d.readText(f)
		case fName:
			spec.DisplayName, err = d.readText(f)
		case fVis:
			spec.Visibility, err = readEnum(d, f, visibilities, "must be public or unlisted")
		case fTrust:
			spec.TrustMode, err = readEnum(d, f, trustModes, "must be managed_dedicated or player_hosted")
		case fCur:
			spec.CurrentPlayers, err = d.readInt(f, 0, engine.MaxPlayers)
		case fMax:
			spec.MaxPlayers, err = d.readInt(f, 1, engine.MaxPlayers)
		case fMeta:
			err = decodeMetadata(d, spec)
		case fRelayOnlyJoins:
			spec.RelayOnlyJoins, err = d.readBool(f)
		case fAttrs:
			spec.Attributes, err = decodeAttributes(d)
		}
		return err
	})
	if err != nil {
		return err
	}
	return spec.Validate()
}

// decodeMetadata reads null or an object of at most 16 string members into
// spec.Metadata, sorted by key; duplicate keys are rejected.
func decodeMetadata(d *decoder, spec *engine.ListingSpec) error {
	if d.null() {
		return nil
	}
	if err := d.beginObject("metadata"); err != nil {
		return err
	}
	for first := true; ; first = false {
		name, ok, err := d.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if len(spec.Metadata) == engine.MaxMetadataEntries {
			return &engine.InputError{Field: "metadata", Reason: "at most 16 entries"}
		}
		key := string(name)
		for _, e := range spec.Metadata {
			if e.Key == key {
				return &engine.InputError{Field: "metadata", Reason: "duplicate key"}
			}
		}
		v, err := d.readString("metadata")
		if err != nil {
			return err
		}
		spec.Metadata = append(spec.Metadata, engine.MetaEntry{Key: key, Value: string(v)})
	}
	slices.SortFunc(spec.Metadata, func(a, b engine.MetaEntry) int { return strings.Compare(a.Key, b.Key) })
	return nil
}

// renewRequest is a decoded PUT /v1/listings/{id}/lease body. TokenOK is
// false when lease_token is a string but not a well-formed capability: it
// matches no lease, so the store answers 404 (wrong lease or token) unless
// an outcome that precedes NotFound applies.
type renewRequest struct {
	Lease           engine.LeaseID
	Token           engine.Capability
	TokenOK         bool
	ExpectedVersion uint64
	CurrentPlayers  int // -1: not given
	// SetAttributes is set when attributes is given (null and {} clear).
	SetAttributes bool
	Attributes    engine.Attributes
}

var renewFields = []string{"lease_id", "lease_token", "expected_version", "current_players", "attributes"}

const renewRequired = 0b0111 // current_players is optional

// decodeRenew reads a renew body. It does not allocate on success, unless
// the body sets attributes.
func decodeRenew(d *decoder, body []byte, r *renewRequest) error {
	*r = renewRequest{CurrentPlayers: -1}
	err := d.object(body, renewFields, renewRequired, func(i int) error {
		f := renewFields[i]
		switch i {
		case 0:
			v, err := d.readString(f)
			if err != nil {
				return err
			}
			u, ok := engine.ParseUUID(v)
			if !ok {
				return &engine.InputError{Field: f, Reason: "must be a UUID (8-4-4-4-12 hex)"}
			}
			r.Lease = engine.LeaseID{UUID: u}
		case 1:
			v, err := d.readString(f)
			if err != nil {
				return err
			}
			r.Token, r.TokenOK = engine.ParseToken(v)
		case 2:
			v, err := d.readUint(f, 1, 1<<63-1)
			r.ExpectedVersion = v
			return err
		case 3:
			if d.null() {
				return nil
			}
			v, err := d.readInt(f, 0, engine.MaxPlayers)
			r.CurrentPlayers = v
			return err
		case 4:
			var err error
			r.SetAttributes = true
			r.Attributes, err = decodeAttributes(d)
			return err
		}
		return nil
	})
	if err == nil && r.SetAttributes {
		err = r.Attributes.Validate()
	}
	return err
}

var joinFields = []string{"protocol_version", "relay_only"}

// decodeJoin reads a join-attempt body {"protocol_version":N} with an
// optional "relay_only":bool.
func decodeJoin(d *decoder, body []byte) (pv uint32, relayOnly bool, err error) {
	var v uint64
	err = d.object(body, joinFields, 1, func(i int) (err error) {
		if i == 0 {
			v, err = d.readUint(joinFields[0], 1, maxUint32)
		} else {
			relayOnly, err = d.readBool(joinFields[1])
		}
		return err
	})
	return uint32(v), relayOnly, err
}

// maxRevocationTTLSeconds is the largest ttl_s of a principal revocation.
const maxRevocationTTLSeconds = uint64(engine.MaxRevocationTTL / 1e9)

var revocationFields = []string{"subject", "ttl_s"}

// decodeRevocation reads {"subject":S,"ttl_s":N} (ttl 1..600 s).
func decodeRevocation(d *decoder, body []byte) (engine.Subject, uint64, error) {
	var subject string
	var ttl uint64
	err := d.object(body, revocationFields, 0b11, func(i int) (err error) {
		if i == 0 {
			subject, err = d.readText(revocationFields[0])
		} else {
			ttl, err = d.readUint(revocationFields[1], 1, maxRevocationTTLSeconds)
		}
		return err
	})
	if err == nil {
		err = engine.Subject(subject).Validate()
	}
	if err != nil {
		return "", 0, err
	}
	return engine.Subject(subject), ttl, nil
}
