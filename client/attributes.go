package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/rendezvous/rendezvous/engine"
)

// Attributes are a listing's indexed attributes
// (docs/contracts/semantics.md#indexed-attributes): at most 8, each value a
// string or an integer (int or int64 when sent; int64 when received).
// Browse filters on them (BrowseQuery), unlike Metadata.
type Attributes map[string]any

// UnmarshalJSON reads integers as int64, not float64.
func (as *Attributes) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return err
	}
	if m == nil {
		*as = nil
		return nil
	}
	out := make(Attributes, len(m))
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				return fmt.Errorf("attribute %s: %w", k, err)
			}
			out[k] = i
		} else {
			out[k] = v
		}
	}
	*as = out
	return nil
}

// engine converts as into the sorted form the contract checks, refusing
// a value that is neither a string nor an integer.
func (as Attributes) engine() (engine.Attributes, error) {
	out := make(engine.Attributes, 0, len(as))
	for k, v := range as {
		a := engine.Attribute{Name: k}
		switch v := v.(type) {
		case string:
			a.Str = v
		case int:
			a.Num, a.IsNum = int64(v), true
		case int64:
			a.Num, a.IsNum = v, true
		case int32:
			a.Num, a.IsNum = int64(v), true
		default:
			return nil, &InputError{Field: "attributes", Reason: fmt.Sprintf("%s: values must be strings or integers, not %T", k, v)}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Validate checks the contract's limits locally.
func (as Attributes) Validate() error {
	ea, err := as.engine()
	if err != nil {
		return err
	}
	return checked(ea.Validate())
}
