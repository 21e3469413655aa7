//go:build race

package netio

// raceEnabled: the race detector changes allocation counts. Under it,
// crypto/sha256's AppendBinary (which HMAC.SetKey uses) allocates the
// padding it appends (append(b, make([]byte, n)...) is not optimised), so
// the zero-allocation checks of paths that derive HMAC pad states only
// assert without -race.
const raceEnabled = true
