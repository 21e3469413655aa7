package engine

// Browse filters, orders and continuation
// (docs/contracts/semantics.md#filters-and-order).

const (
	// BrowseExamineMax bounds the index entries one browse examines,
	// whatever its filters: a page that reaches it is returned short, with
	// a continuation at the last entry examined.
	BrowseExamineMax = 1000
	// MaxBrowseFilters bounds the attribute filters of one browse, and
	// MaxFilterValues the values of one one-of filter.
	MaxBrowseFilters = 8
	MaxFilterValues  = 8
)

// Order is the key a browse walks in.
type Order uint8

const (
	OrderID             Order = iota // listing ID (the default)
	OrderFreeSlots                   // max_players - current_players, then ID
	OrderCurrentPlayers              // current_players, then ID
	OrderCreated                     // creation time, then ID
	numOrders
)

var orderNames = names{"id", "free_slots", "current_players", "created_at"}

func (o Order) String() string { return orderNames.name(int(o)) }

// ParseOrder is String's inverse.
func ParseOrder(s string) (Order, bool) {
	i, ok := orderNames.parse(s)
	return Order(i), ok
}

// Mutable reports whether a listing's key in o can change while it lives
// (a renewal changes its players), so a walk skips what moved since it
// began (Browse.Since).
func (o Order) Mutable() bool { return o == OrderFreeSlots || o == OrderCurrentPlayers }

// NumOp is a numeric attribute comparison.
type NumOp uint8

const (
	OpEq NumOp = iota
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	numNumOps
)

var numOpNames = names{"eq", "ne", "lt", "le", "gt", "ge"}

func (o NumOp) String() string { return numOpNames.name(int(o)) }

// ParseNumOp is String's inverse.
func ParseNumOp(s string) (NumOp, bool) {
	i, ok := numOpNames.parse(s)
	return NumOp(i), ok
}

// names is the wire names of an enumeration, by value.
type names []string

func (ns names) name(i int) string {
	if i >= 0 && i < len(ns) {
		return ns[i]
	}
	return "unknown"
}

func (ns names) parse(s string) (int, bool) {
	for i, n := range ns {
		if n == s {
			return i, true
		}
	}
	return 0, false
}

// StringFilter matches a listing whose string attribute Name is one of
// Values (one value: equality).
type StringFilter struct {
	Name   string
	Values []string
}

// NumberFilter matches a listing whose numeric attribute Name compares
// to Value by Op.
type NumberFilter struct {
	Name  string
	Op    NumOp
	Value int64
}

// BrowseFilter narrows a browse beyond tenant, protocol and region. The
// zero value matches every listing. A listing without the attribute a
// filter names, or with a value of the other type, does not match it.
type BrowseFilter struct {
	MinFreeSlots  int32 // 0: any; 1: not full
	MinPlayers    int32 // 0: any; 1: has players
	MaxPlayers    int32 // with HasMaxPlayers; 0: empty
	HasMaxPlayers bool
	Strings       []StringFilter
	Numbers       []NumberFilter
}

// IsZero reports whether f filters nothing.
func (f *BrowseFilter) IsZero() bool {
	return f.MinFreeSlots == 0 && f.MinPlayers == 0 && !f.HasMaxPlayers && len(f.Strings) == 0 && len(f.Numbers) == 0
}

// Match reports whether a listing with players of maxPlayers and attrs
// passes f.
func (f *BrowseFilter) Match(players, maxPlayers int32, attrs Attributes) bool {
	if maxPlayers-players < f.MinFreeSlots || players < f.MinPlayers || f.HasMaxPlayers && players > f.MaxPlayers {
		return false
	}
	for i := range f.Strings {
		sf := &f.Strings[i]
		a, ok := attrs.Get(sf.Name)
		if !ok || a.IsNum || !oneOf(a.Str, sf.Values) {
			return false
		}
	}
	for i := range f.Numbers {
		nf := &f.Numbers[i]
		a, ok := attrs.Get(nf.Name)
		if !ok || !a.IsNum || !nf.Op.holds(a.Num, nf.Value) {
			return false
		}
	}
	return true
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

func (o NumOp) holds(a, b int64) bool {
	switch o {
	case OpEq:
		return a == b
	case OpNe:
		return a != b
	case OpLt:
		return a < b
	case OpLe:
		return a <= b
	case OpGt:
		return a > b
	default:
		return a >= b
	}
}

// OrderKey is a listing's key in order o (OrderID: 0, the ID alone
// orders). created is the store's creation stamp of the listing.
func OrderKey(o Order, players, maxPlayers int32, created int64) int64 {
	switch o {
	case OrderFreeSlots:
		return int64(maxPlayers - players)
	case OrderCurrentPlayers:
		return int64(players)
	case OrderCreated:
		return created
	}
	return 0
}

// BrowseNext is where a browse page ended: More reports that the walk can
// go on (a further match exists, or the examination bound was reached
// first), and the position to go on from is (AfterKey, After) in the
// page's order, with Since the walk's change version. Pass them back in
// Browse (HasAfter true) for the next page.
type BrowseNext struct {
	More     bool
	After    ListingID
	AfterKey int64
	Since    uint64
}

// validateQuery checks q's filters and order (ValidateBrowse checks the
// rest).
func (q *Browse) validateQuery() error {
	if q.Order >= numOrders {
		return errOrder
	}
	f := &q.Filter
	if f.MinFreeSlots < 0 || f.MinFreeSlots > MaxPlayers {
		return errMinFree
	}
	if f.MinPlayers < 0 || f.MinPlayers > MaxPlayers || f.HasMaxPlayers && (f.MaxPlayers < 0 || f.MaxPlayers > MaxPlayers) {
		return errPlayersRange
	}
	if len(f.Strings)+len(f.Numbers) > MaxBrowseFilters {
		return errFilterCount
	}
	for i := range f.Strings {
		sf := &f.Strings[i]
		if !validAttrName(sf.Name) {
			return errFilterName
		}
		if len(sf.Values) < 1 || len(sf.Values) > MaxFilterValues {
			return errFilterValues
		}
		for _, v := range sf.Values {
			if !validAttrString(v) {
				return errFilterString
			}
		}
	}
	for i := range f.Numbers {
		nf := &f.Numbers[i]
		if !validAttrName(nf.Name) {
			return errFilterName
		}
		if nf.Op >= numNumOps {
			return errFilterOp
		}
		if nf.Value > MaxAttributeNumber || nf.Value < -MaxAttributeNumber {
			return errFilterNumber
		}
	}
	return nil
}
