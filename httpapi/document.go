package httpapi

import "github.com/rendezvous/rendezvous/engine"

// Listing documents. A listing's immutable browse-item members are encoded
// once, at creation, and stored with it (engine.CreateListing.Doc); browse
// and get concatenate that fragment with the few live members (players,
// indexed attributes, lease deadline) instead of encoding every listing on
// every page.

// appendListingDoc appends the immutable members of a browse item, without
// braces: "region":…,"protocol_version":…,"build_version":…,
// "display_name":…,"trust_mode":…,"max_players":…,"metadata":{…}, and
// "relay_only_joins":true for a listing that requires relay-only joins
// (absent otherwise, so every other listing keeps its bytes).
func appendListingDoc(dst []byte, s *engine.ListingSpec) []byte {
	dst = appendKey(dst, "region", true)
	dst = appendString(dst, s.Region)
	dst = appendKey(dst, "protocol_version", false)
	dst = appendUint(dst, uint64(s.ProtocolVersion))
	dst = appendKey(dst, "build_version", false)
	dst = appendString(dst, s.BuildVersion)
	dst = appendKey(dst, "display_name", false)
	dst = appendString(dst, s.DisplayName)
	dst = appendKey(dst, "trust_mode", false)
	dst = appendString(dst, s.TrustMode.String())
	dst = appendKey(dst, "max_players", false)
	dst = appendInt(dst, int64(s.MaxPlayers))
	dst = appendKey(dst, "metadata", false)
	dst = append(dst, '{')
	for i, e := range s.Metadata {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, e.Key)
		dst = append(dst, ':')
		dst = appendString(dst, e.Value)
	}
	dst = append(dst, '}')
	if s.RelayOnlyJoins {
		dst = append(dst, `,"relay_only_joins":true`...)
	}
	return dst
}

// listingDoc returns a new document for s, sized exactly.
func listingDoc(s *engine.ListingSpec) []byte {
	doc := appendListingDoc(make([]byte, 0, 256), s)
	return append(make([]byte, 0, len(doc)), doc...)
}

// appendListingItem appends one browse item. v.Doc is used when present; a
// listing stored without one (another writer) is encoded from its spec.
// withVisibility adds the member that GET by ID returns.
func appendListingItem(dst []byte, v *engine.ListingView, withVisibility bool) []byte {
	dst = appendItemHead(dst, v.ID, v.Doc, v.Spec)
	dst = appendKey(dst, "current_players", false)
	dst = appendInt(dst, int64(v.CurrentPlayers))
	dst = appendAttributes(dst, v.Attributes)
	dst = appendKey(dst, "lease_expires_at", false)
	dst = appendTime(dst, v.LeaseExpiresAt)
	if withVisibility {
		dst = appendKey(dst, "visibility", false)
		dst = appendString(dst, v.Spec.Visibility.String())
	}
	return append(dst, '}')
}

// appendItemHead opens an item with its listing_id and the listing's
// document: doc when present, else one encoded from spec (a listing stored
// without one, by another writer).
func appendItemHead(dst []byte, id engine.ListingID, doc []byte, spec *engine.ListingSpec) []byte {
	dst = append(dst, `{"listing_id":`...)
	dst = appendUUID(dst, id.UUID)
	dst = append(dst, ',')
	if len(doc) > 0 {
		return append(dst, doc...)
	}
	return appendListingDoc(dst, spec)
}

// appendBrowseItem appends one browse item from a store's light item: the
// same bytes as appendListingItem(dst, v, false) for the listing's view.
// tc formats lease_expires_at.
func appendBrowseItem(dst []byte, it *engine.BrowseItem, tc *minuteCache) []byte {
	dst = appendItemHead(dst, it.ID, it.Doc, it.Spec)
	dst = append(dst, `,"current_players":`...)
	dst = appendInt(dst, int64(it.CurrentPlayers))
	dst = appendAttributes(dst, it.Attributes)
	dst = append(dst, `,"lease_expires_at":`...)
	dst = tc.append(dst, it.LeaseExpiresAt)
	return append(dst, '}')
}
