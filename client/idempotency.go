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
	_, _ = rand.Read(b[:]) // never fails since Go 1.24: it crashes the process instead
	return base64.RawURLEncoding.EncodeToString(b[:])
}
