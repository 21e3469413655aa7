package memstore

// browseRec is one scope of browse indexes: the currently visible listings
// (public, lease and presence fresh) of one (tenant, protocol_version), or of
// one (tenant, protocol_version, region) when region is set, in every order
// and filter set a browse walks (BrowseScope). refs counts the public listings that map to it (visible or
// not), so an index lives as long as a listing can enter it and presence
// flapping never creates or frees one.
type browseRec struct {
	hashed
	tenant int32 // tenants slot (the listing's reference keeps it alive)
	proto  uint32
	region string // "" for the all-regions index
	scope  BrowseScope
	refs   int
}

func (s *Store) browseHash(tenant int32, proto uint32, region string) uint64 {
	h := newKeyHasher(s.seed)
	h.num(uint64(tenant))
	h.num(uint64(proto))
	h.str(region)
	return h.sum()
}

// findBrowse returns the slot of the index, or -1.
func (s *Store) findBrowse(tenant int32, proto uint32, region string) int32 {
	hv := s.browseHash(tenant, proto, region)
	return chainFind(&s.browseIdx, &s.browse, hv, func(r *browseRec) bool { return r.tenant == tenant && r.proto == proto && r.region == region })
}

// browseRef returns the index slot (creating it) with one more reference.
func (s *Store) browseRef(tenant int32, proto uint32, region string) int32 {
	i := s.findBrowse(tenant, proto, region)
	if i < 0 {
		i = s.browse.alloc()
		r := s.browse.at(i)
		r.hash = s.browseHash(tenant, proto, region)
		r.tenant, r.proto, r.region = tenant, proto, region
		chainInsert(&s.browseIdx, &s.browse, i)
	}
	s.browse.at(i).refs++
	return i
}

func (s *Store) browseUnref(i int32) {
	r := s.browse.at(i)
	r.refs--
	if r.refs == 0 {
		if r.scope.Len() != 0 {
			panic("BUG: freeing a non-empty browse index")
		}
		chainRemove(&s.browseIdx, &s.browse, i)
		s.browse.release(i)
	}
}

// setVisible inserts or removes listing slot li in its browse indexes.
func (s *Store) setVisible(li int32, visible bool) {
	l := s.listings.at(li)
	if l.browseAll < 0 {
		return
	}
	for _, b := range [2]int32{l.browseAll, l.browseRegion} {
		sc := &s.browse.at(b).scope
		var ok bool
		if visible {
			ok = sc.Insert(li, &s.bents[li])
		} else {
			ok = sc.Delete(&s.bents[li])
		}
		if !ok {
			panic("BUG: browse index out of step with presence")
		}
	}
}

// setBrowseEntry replaces listing slot li's browse entry with cur, moving
// it in its browse indexes when it is visible.
func (s *Store) setBrowseEntry(li int32, cur *BrowseEntry) {
	l := s.listings.at(li)
	old := &s.bents[li]
	if l.browseAll >= 0 && l.fresh {
		for _, b := range [2]int32{l.browseAll, l.browseRegion} {
			s.browse.at(b).scope.Update(li, old, cur)
		}
	}
	*old = *cur
	s.docs[li].attrs = cur.Attrs
}
