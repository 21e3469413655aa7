package turncred

import (
	"strings"
	"testing"
	"time"
)

// The password of a fixed username and secret, computed independently with
// `printf '%s' USERNAME | openssl dgst -sha1 -hmac SECRET -binary | base64`.
func TestPasswordKnownVector(t *testing.T) {
	const (
		secret   = "north-wind-secret"
		username = "1767225600:0b5e1f3c-7d2a-4c11-9e57-3f0a8d6b2c41.c"
		want     = "Z8OLy9uJuC5aT1CZqyV7KvcPAgs="
	)
	if got := Password([]byte(secret), username); got != want {
		t.Fatalf("Password = %q, want %q", got, want)
	}
	i, err := New([]string{"turn:relay.example:3478?transport=udp"}, []byte(secret), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// 1767225600 is 2026-01-01T00:00:00Z: issued ten minutes before.
	c := i.Issue(time.Unix(1767225600, 0).Add(-10*time.Minute), "0b5e1f3c-7d2a-4c11-9e57-3f0a8d6b2c41", SideClient)
	if c.Username != username || c.Credential != want || !c.Expires.Equal(time.Unix(1767225600, 0)) {
		t.Fatalf("Issue = %+v, want username %q credential %q", c, username, want)
	}
}

func TestIssueScopesSideAndExpiry(t *testing.T) {
	i, err := New([]string{"turn:a:3478"}, []byte("s"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 500_000_000)
	h := i.Issue(now, "id", SideHost)
	c := i.Issue(now, "id", SideClient)
	if h.Username != "1060:id.h" || c.Username != "1060:id.c" {
		t.Fatalf("usernames %q %q, want 1060:id.h and 1060:id.c", h.Username, c.Username)
	}
	if h.Credential == c.Credential {
		t.Fatal("the host's and the client's credentials are the same")
	}
	if !h.Expires.Equal(time.Unix(1060, 0)) {
		t.Fatalf("expires %v, want the whole second of now+ttl", h.Expires)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		urls   []string
		secret []byte
		ttl    time.Duration
		want   string
	}{
		{"no url", nil, []byte("s"), time.Minute, "no relay URL"},
		{"empty secret", []string{"turn:a"}, nil, time.Minute, "secret"},
		{"long secret", []string{"turn:a"}, make([]byte, MaxSecret+1), time.Minute, "secret"},
		{"short ttl", []string{"turn:a"}, []byte("s"), MinTTL - 1, "lifetime"},
		{"long ttl", []string{"turn:a"}, []byte("s"), MaxTTL + 1, "lifetime"},
	} {
		if _, err := New(tc.urls, tc.secret, tc.ttl); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %q", tc.name, err, tc.want)
		}
	}
}

func TestNewCopiesItsInputs(t *testing.T) {
	urls, secret := []string{"turn:a"}, []byte("s")
	i, err := New(urls, secret, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	before := i.Issue(time.Unix(0, 0), "x", SideHost)
	urls[0], secret[0] = "turn:b", 't'
	if i.URLs()[0] != "turn:a" || i.Issue(time.Unix(0, 0), "x", SideHost) != before {
		t.Fatal("the Issuer changed with its caller's slices")
	}
}
