package stunoracle

import (
	"bytes"
	"errors"
	"testing"

	pion "github.com/pion/stun/v3"
)

// A message Sign signed verifies with its key only, a changed byte before
// the attribute breaks it, and a message without the attribute is unsigned.
func TestSignVerify(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	m, err := pion.Build(pion.TransactionID, pion.BindingRequest, pion.NewUsername("p:someone"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(m.Raw, key); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("unsigned message: %v", err)
	}
	Sign(m, key)
	if err := pion.Fingerprint.AddTo(m); err != nil {
		t.Fatal(err)
	}
	if err := Verify(m.Raw, key); err != nil {
		t.Fatalf("signed message: %v", err)
	}
	if err := Verify(m.Raw, bytes.Repeat([]byte{8}, 32)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("other key: %v", err)
	}
	bad := append([]byte(nil), m.Raw...)
	bad[len(bad)-45] ^= 1 // inside USERNAME, before the integrity attribute
	if err := Verify(bad, key); !errors.Is(err, ErrMismatch) {
		t.Fatalf("changed message: %v", err)
	}
}
