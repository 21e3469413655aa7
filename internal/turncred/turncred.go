// Package turncred issues TURN credentials in coturn's shared-secret scheme
// (the "TURN REST API": turnserver --use-auth-secret
// --static-auth-secret=<secret>): the username is
// "<unix-expiry>:<attempt_id>.<h|c>" and the password is
// base64(HMAC-SHA1(secret, username)). coturn recomputes the password from
// the username and its copy of the secret and refuses a username whose
// expiry has passed, so Rendezvous and the relay share nothing but the
// secret and a clock.
package turncred

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"strconv"
	"time"
)

// Sides of an attempt a credential is scoped to: the username ends in ".h"
// for the listing's host and ".c" for the joining client.
const (
	SideHost   byte = 'h'
	SideClient byte = 'c'
)

// Bounds of an Issuer's settings.
const (
	MinTTL = 10 * time.Second
	MaxTTL = 24 * time.Hour
	// MaxSecret bounds the shared secret's length in bytes.
	MaxSecret = 512
)

// Issuer makes credentials for one set of relay URLs and one secret. It is
// immutable and safe for concurrent use. The secret never leaves it.
type Issuer struct {
	urls   []string
	secret []byte
	ttl    time.Duration
}

// New checks the settings and builds an Issuer. It keeps copies of urls and
// secret.
func New(urls []string, secret []byte, ttl time.Duration) (*Issuer, error) {
	switch {
	case len(urls) == 0:
		return nil, errors.New("turncred: no relay URL")
	case len(secret) == 0 || len(secret) > MaxSecret:
		return nil, errors.New("turncred: the secret must be 1.." + strconv.Itoa(MaxSecret) + " bytes")
	case ttl < MinTTL || ttl > MaxTTL:
		return nil, errors.New("turncred: the lifetime must be in " + MinTTL.String() + ".." + MaxTTL.String())
	}
	return &Issuer{urls: append([]string(nil), urls...), secret: append([]byte(nil), secret...), ttl: ttl}, nil
}

// URLs are the relay URLs every credential is valid for. Do not modify.
func (i *Issuer) URLs() []string { return i.urls }

// TTL is how long a credential is valid after it is issued.
func (i *Issuer) TTL() time.Duration { return i.ttl }

// Credential is one side's TURN credential for one attempt.
type Credential struct {
	Username   string // "<unix-expiry>:<attempt_id>.<h|c>"
	Credential string // base64(HMAC-SHA1(secret, Username)); never log it
	Expires    time.Time
}

// Issue makes the credential of side (SideHost or SideClient) for the
// attempt whose ID is attemptID, valid from now for the Issuer's TTL.
func (i *Issuer) Issue(now time.Time, attemptID string, side byte) Credential {
	return i.until(now.Add(i.ttl), attemptID, side)
}

// until makes side's credential for attemptID expiring at exp, rounded down
// to a second.
func (i *Issuer) until(exp time.Time, attemptID string, side byte) Credential {
	exp = exp.Truncate(time.Second)
	u := make([]byte, 0, 20+1+len(attemptID)+2)
	u = strconv.AppendInt(u, exp.Unix(), 10)
	u = append(u, ':')
	u = append(u, attemptID...)
	u = append(u, '.', side)
	return Credential{Username: string(u), Credential: Password(i.secret, string(u)), Expires: exp}
}

// IssueForAttempt makes the credential of side for the attempt attemptID
// whose lifetime ends at attemptExpires: valid until then plus the
// Issuer's TTL (the allocation margin: time left to allocate and use the
// relay once the attempt itself is over), rounded down to a second. It
// depends on nothing else, so asking again for the same attempt and side
// (an idempotent replay of the join, another instance of the deployment)
// gives the same credential, and no credential outlives its attempt by
// more than the margin.
func (i *Issuer) IssueForAttempt(attemptID string, side byte, attemptExpires time.Time) Credential {
	return i.until(attemptExpires.Add(i.ttl), attemptID, side)
}

// Password is coturn's password for username under secret:
// base64(HMAC-SHA1(secret, username)), standard encoding with padding.
func Password(secret []byte, username string) string {
	m := hmac.New(sha1.New, secret)
	m.Write([]byte(username))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
