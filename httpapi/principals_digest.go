package httpapi

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"slices"
	"sync/atomic"
)

// metricPrincipals is the gauge naming the principals an instance serves
// by a prefix of their content hash: instances of one deployment that
// disagree show different labels (the alert RendezvousPrincipalsDiffer).
const metricPrincipals = "rendezvous_principals_info"

// digestLen is how many hex characters of the SHA-256 the label and the
// log show: 64 bits tell two sets apart; the full hash is not needed.
const digestLen = 16

// Digest is a prefix of the SHA-256 of the set's content: each principal's
// subject, tenant, roles and token hash, in subject order, so the same
// principals give the same digest whatever the file's format, order or
// spacing. It reveals nothing usable about a token (it hashes the token
// hashes with everything else).
func (ps *Principals) Digest() string {
	all := make([]*Principal, 0, len(ps.bySubject))
	for _, p := range ps.bySubject {
		all = append(all, p)
	}
	slices.SortFunc(all, func(x, y *Principal) int { return cmp.Compare(x.Subject, y.Subject) })
	h := sha256.New()
	for _, p := range all {
		global := byte('0')
		if p.Global {
			global = '1'
		}
		// NUL cannot occur in a subject or a tenant part, so the
		// fields cannot run into each other.
		for _, f := range [...]string{string(p.Subject), p.Tenant.Game, p.Tenant.Env} {
			h.Write([]byte(f))
			h.Write([]byte{0})
		}
		h.Write([]byte{global, byte(p.Roles), 0})
		h.Write(p.hash[:])
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:digestLen]
}

// digestCache keeps the digest of the set in force: the set only changes
// on a reload, the metric is written on every scrape.
type digestCache struct {
	ps     *Principals
	digest string
}

type principalsDigest struct{ cur atomic.Pointer[digestCache] }

// PrincipalsDigest is the Digest of the principals this API serves now.
func (a *API) PrincipalsDigest() string {
	ps := a.ps.cur.Load()
	if c := a.digest.cur.Load(); c != nil && c.ps == ps {
		return c.digest
	}
	d := ps.Digest()
	a.digest.cur.Store(&digestCache{ps: ps, digest: d})
	return d
}

// writePrincipalsInfo writes rendezvous_principals_info{sha256_prefix} 1
// (a metrics.Set writer: its label changes with every reload).
func (a *API) writePrincipalsInfo(w io.Writer) {
	_, _ = io.WriteString(w, "# HELP "+metricPrincipals+"\n# TYPE "+metricPrincipals+" gauge\n"+
		metricPrincipals+`{sha256_prefix="`+a.PrincipalsDigest()+"\"} 1\n")
}
