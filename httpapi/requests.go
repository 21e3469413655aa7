package httpapi

import (
	"slices"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// Request decoders. Each reads one body with a strict decoder, rejects
// unknown and duplicate members, checks every type and range, and leaves its
// result in the caller's value. They never touch the store.

func unknownField(name []byte) error {
	if len(name) > 64 {
		name = name[:64]
	}
	return &engine.InputError{Field: string(name), Reason: "unknown field"}
}

func duplicateField(field string) error {
	return &engine.InputError{Field: field, Reason: "duplicate member"}
}

func missingField(field string) error {
	return &engine.InputError{Field: field, Reason: "is required"}
}

// seen tracks which members of a fixed-shape object have been read.
type seen uint32

func (s *seen) mark(bit uint, field string) error {
	if *s&(1<<bit) != 0 {
		return duplicateField(field)
	}
	*s |= 1 << bit
	return nil
}

const maxUint32 = 1<<32 - 1

// decodeCreateListing reads a POST /v1/listings body into spec (metadata
// sorted by key) and validates it completely.
func decodeCreateListing(d *decoder, body []byte, spec *engine.ListingSpec) error {
	d.reset(body)
	*spec = engine.ListingSpec{}
	if err := d.beginObject(""); err != nil {
		return err
	}
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
	)
	var s seen
	for first := true; ; first = false {
		name, ok, err := d.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(name) {
		case "region":
			if err := s.mark(fRegion, "region"); err != nil {
				return err
			}
			v, err := d.readString("region")
			if err != nil {
				return err
			}
			spec.Region = string(v)
		case "protocol_version":
			if err := s.mark(fProto, "protocol_version"); err != nil {
				return err
			}
			v, err := d.readUint("protocol_version", 1, maxUint32)
			if err != nil {
				return err
			}
			spec.ProtocolVersion = uint32(v)
		case "build_version":
			if err := s.mark(fBuild, "build_version"); err != nil {
				return err
			}
			v, err := d.readString("build_version")
			if err != nil {
				return err
			}
			spec.BuildVersion = string(v)
		case "display_name":
			if err := s.mark(fName, "display_name"); err != nil {
				return err
			}
			v, err := d.readString("display_name")
			if err != nil {
				return err
			}
			spec.DisplayName = string(v)
		case "visibility":
			if err := s.mark(fVis, "visibility"); err != nil {
				return err
			}
			v, err := d.readString("visibility")
			if err != nil {
				return err
			}
			switch string(v) {
			case "public":
				spec.Visibility = engine.Public
			case "unlisted":
				spec.Visibility = engine.Unlisted
			default:
				return &engine.InputError{Field: "visibility", Reason: "must be public or unlisted"}
			}
		case "trust_mode":
			if err := s.mark(fTrust, "trust_mode"); err != nil {
				return err
			}
			v, err := d.readString("trust_mode")
			if err != nil {
				return err
			}
			switch string(v) {
			case "managed_dedicated":
				spec.TrustMode = engine.ManagedDedicated
			case "player_hosted":
				spec.TrustMode = engine.PlayerHosted
			default:
				return &engine.InputError{Field: "trust_mode", Reason: "must be managed_dedicated or player_hosted"}
			}
		case "current_players":
			if err := s.mark(fCur, "current_players"); err != nil {
				return err
			}
			v, err := d.readUint("current_players", 0, engine.MaxPlayers)
			if err != nil {
				return err
			}
			spec.CurrentPlayers = int(v)
		case "max_players":
			if err := s.mark(fMax, "max_players"); err != nil {
				return err
			}
			v, err := d.readUint("max_players", 0, engine.MaxPlayers)
			if err != nil {
				return err
			}
			spec.MaxPlayers = int(v)
		case "metadata":
			if err := s.mark(fMeta, "metadata"); err != nil {
				return err
			}
			if err := decodeMetadata(d, spec); err != nil {
				return err
			}
		default:
			return unknownField(name)
		}
	}
	if err := d.end(); err != nil {
		return err
	}
	for _, f := range [...]struct {
		bit  uint
		name string
	}{{fRegion, "region"}, {fProto, "protocol_version"}, {fBuild, "build_version"},
		{fName, "display_name"}, {fVis, "visibility"}, {fTrust, "trust_mode"},
		{fCur, "current_players"}, {fMax, "max_players"}} {
		if s&(1<<f.bit) == 0 {
			return missingField(f.name)
		}
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
// false when lease_token is a string but not a well-formed capability: the
// caller answers 404 (wrong lease or token) after every 400 check.
type renewRequest struct {
	Lease           engine.LeaseID
	Token           engine.Capability
	TokenOK         bool
	ExpectedVersion uint64
	CurrentPlayers  int // -1: not given
}

// decodeRenew reads a renew body. It does not allocate on success.
func decodeRenew(d *decoder, body []byte, r *renewRequest) error {
	d.reset(body)
	*r = renewRequest{CurrentPlayers: -1}
	if err := d.beginObject(""); err != nil {
		return err
	}
	const (
		fLease = iota
		fToken
		fVersion
		fPlayers
	)
	var s seen
	for first := true; ; first = false {
		name, ok, err := d.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(name) {
		case "lease_id":
			if err := s.mark(fLease, "lease_id"); err != nil {
				return err
			}
			v, err := d.readString("lease_id")
			if err != nil {
				return err
			}
			u, ok := engine.ParseUUID(v)
			if !ok {
				return &engine.InputError{Field: "lease_id", Reason: "must be a UUID (8-4-4-4-12 hex)"}
			}
			r.Lease = engine.LeaseID{UUID: u}
		case "lease_token":
			if err := s.mark(fToken, "lease_token"); err != nil {
				return err
			}
			v, err := d.readString("lease_token")
			if err != nil {
				return err
			}
			r.Token, r.TokenOK = engine.ParseToken(v)
		case "expected_version":
			if err := s.mark(fVersion, "expected_version"); err != nil {
				return err
			}
			v, err := d.readUint("expected_version", 1, 1<<63-1)
			if err != nil {
				return err
			}
			r.ExpectedVersion = v
		case "current_players":
			if err := s.mark(fPlayers, "current_players"); err != nil {
				return err
			}
			if d.null() {
				continue
			}
			v, err := d.readUint("current_players", 0, engine.MaxPlayers)
			if err != nil {
				return err
			}
			r.CurrentPlayers = int(v)
		default:
			return unknownField(name)
		}
	}
	if err := d.end(); err != nil {
		return err
	}
	switch {
	case s&(1<<fLease) == 0:
		return missingField("lease_id")
	case s&(1<<fToken) == 0:
		return missingField("lease_token")
	case s&(1<<fVersion) == 0:
		return missingField("expected_version")
	}
	return nil
}

// decodeJoin reads a join-attempt body {"protocol_version":N}.
func decodeJoin(d *decoder, body []byte) (uint32, error) {
	d.reset(body)
	if err := d.beginObject(""); err != nil {
		return 0, err
	}
	var s seen
	var pv uint32
	for first := true; ; first = false {
		name, ok, err := d.nextMember(first)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if string(name) != "protocol_version" {
			return 0, unknownField(name)
		}
		if err := s.mark(0, "protocol_version"); err != nil {
			return 0, err
		}
		v, err := d.readUint("protocol_version", 1, maxUint32)
		if err != nil {
			return 0, err
		}
		pv = uint32(v)
	}
	if err := d.end(); err != nil {
		return 0, err
	}
	if s == 0 {
		return 0, missingField("protocol_version")
	}
	return pv, nil
}

// maxRevocationTTLSeconds is the largest ttl_s of a principal revocation.
const maxRevocationTTLSeconds = uint64(engine.MaxRevocationTTL / 1e9)

// decodeRevocation reads {"subject":S,"ttl_s":N} (ttl 1..600 s).
func decodeRevocation(d *decoder, body []byte) (engine.Subject, uint64, error) {
	d.reset(body)
	if err := d.beginObject(""); err != nil {
		return "", 0, err
	}
	var s seen
	var subject engine.Subject
	var ttl uint64
	for first := true; ; first = false {
		name, ok, err := d.nextMember(first)
		if err != nil {
			return "", 0, err
		}
		if !ok {
			break
		}
		switch string(name) {
		case "subject":
			if err := s.mark(0, "subject"); err != nil {
				return "", 0, err
			}
			v, err := d.readString("subject")
			if err != nil {
				return "", 0, err
			}
			subject = engine.Subject(v)
		case "ttl_s":
			if err := s.mark(1, "ttl_s"); err != nil {
				return "", 0, err
			}
			v, err := d.readUint("ttl_s", 1, maxRevocationTTLSeconds)
			if err != nil {
				return "", 0, err
			}
			ttl = v
		default:
			return "", 0, unknownField(name)
		}
	}
	if err := d.end(); err != nil {
		return "", 0, err
	}
	if s&1 == 0 {
		return "", 0, missingField("subject")
	}
	if s&2 == 0 {
		return "", 0, missingField("ttl_s")
	}
	if err := subject.Validate(); err != nil {
		return "", 0, err
	}
	return subject, ttl, nil
}
