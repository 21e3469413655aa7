package client

import (
	"crypto/rand"
	"encoding/base64"
)

// NewIdempotencyKey returns a fresh random key (22 visible ASCII characters,
// 128 bits). The SDK generates one per logical creation and reuses it on every
// retry of that creation, so a retry after a lost answer replays instead of
// creating twice.
func NewIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}
