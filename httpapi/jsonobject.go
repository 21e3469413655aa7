package httpapi

import "github.com/rendezvous/rendezvous/engine"

// object reads body as one JSON object of known members: fields names them
// (at most 32), required has bit i set when fields[i] must be present, and
// member(i) reads the value of fields[i]. An unknown or repeated member, or a
// missing required one, is an *engine.InputError naming it; trailing bytes
// after the object are a syntax error. member must not retain d.
func (d *decoder) object(body []byte, fields []string, required uint32, member func(i int) error) error {
	d.reset(body)
	if err := d.beginObject(""); err != nil {
		return err
	}
	var seen uint32
	for first := true; ; first = false {
		name, ok, err := d.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		i := fieldIndex(fields, name)
		if i < 0 {
			return unknownField(name)
		}
		if seen&(1<<i) != 0 {
			return &engine.InputError{Field: fields[i], Reason: "duplicate member"}
		}
		seen |= 1 << i
		if err := member(i); err != nil {
			return err
		}
	}
	if err := d.end(); err != nil {
		return err
	}
	for i, f := range fields {
		if required&(1<<i) != 0 && seen&(1<<i) == 0 {
			return missingField(f)
		}
	}
	return nil
}

func fieldIndex(fields []string, name []byte) int {
	for i, f := range fields {
		if string(name) == f {
			return i
		}
	}
	return -1
}

func missingField(field string) error {
	return &engine.InputError{Field: field, Reason: "is required"}
}

func unknownField(name []byte) error {
	if len(name) > 64 {
		name = name[:64]
	}
	return &engine.InputError{Field: string(name), Reason: "unknown field"}
}

// readText reads a string member into a new string.
func (d *decoder) readText(field string) (string, error) {
	v, err := d.readString(field)
	return string(v), err
}

// readInt reads an integer member in min..max.
func (d *decoder) readInt(field string, min, max int) (int, error) {
	v, err := d.readUint(field, uint64(min), uint64(max))
	return int(v), err
}

// enumName is one allowed string of an enumerated member.
type enumName[T any] struct {
	name  string
	value T
}

// readEnum reads a string member that must be one of names.
func readEnum[T any](d *decoder, field string, names []enumName[T], reason string) (T, error) {
	var zero T
	v, err := d.readString(field)
	if err != nil {
		return zero, err
	}
	for _, n := range names {
		if string(v) == n.name {
			return n.value, nil
		}
	}
	return zero, &engine.InputError{Field: field, Reason: reason}
}
