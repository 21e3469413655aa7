package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// ErrNotReloadable: the server was started without a principals file
// (--dev), so there is nothing to re-read.
var ErrNotReloadable = errors.New("httpapi: no principals file to reload (started with --dev)")

// livePrincipals is the API's current principal set. A reload builds a
// whole new immutable *Principals and swaps it in through an atomic
// pointer, so authentication on the request path is one atomic load: no
// lock, no allocation. A request that authenticated just before a swap
// finishes with the principal it got; the next one sees the new set.
type livePrincipals struct {
	cur  atomic.Pointer[Principals]
	file string     // re-read by reload; empty: not reloadable
	mu   sync.Mutex // serialises reloads (never taken on the request path)
}

func (l *livePrincipals) Authenticate(token []byte) (*Principal, bool) {
	return l.cur.Load().Authenticate(token)
}

func (l *livePrincipals) Lookup(s engine.Subject) (*Principal, bool) {
	return l.cur.Load().Lookup(s)
}

// ReloadPrincipals re-reads the principals file and, if it is valid,
// replaces the whole principal set at once: removed principals stop
// authenticating with their next request, added ones start. Listings,
// attempts and revocations are untouched. An invalid file changes nothing:
// the error (which names the entry and field, never a token or hash) is
// logged and returned, and the previous set stays in force. by names who
// asked, for the log ("SIGHUP", "operator <subject>"). It returns the
// number of principals now loaded. After a success it calls
// Config.PrincipalsReloaded (the other instances of a deployment reload
// too) before it returns. Safe for concurrent use.
func (a *API) ReloadPrincipals(by string) (int, error) {
	n, err := a.reload(by)
	if err == nil && a.announce != nil {
		a.announce()
	}
	return n, err
}

// FollowPrincipalsReload is ReloadPrincipals asked by another instance of
// the deployment: this instance re-reads its own file, and tells nobody.
func (a *API) FollowPrincipalsReload(by string) (int, error) { return a.reload(by) }

func (a *API) reload(by string) (int, error) {
	l := &a.ps
	if l.file == "" {
		return 0, ErrNotReloadable
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ps, err := LoadPrincipals(l.file)
	if err != nil {
		a.log.LogAttrs(context.Background(), slog.LevelError, "principals reload refused; the previous principals stay in force",
			slog.String("by", by), slog.String("err", err.Error()))
		return 0, err
	}
	old := l.cur.Swap(ps)
	added, removed := 0, 0
	for s := range ps.bySubject {
		if _, ok := old.bySubject[s]; !ok {
			added++
		}
	}
	for s := range old.bySubject {
		if _, ok := ps.bySubject[s]; !ok {
			removed++
		}
	}
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "principals reloaded",
		slog.String("by", by), slog.String("file", l.file), slog.Int("loaded", ps.Len()),
		slog.Int("added", added), slog.Int("removed", removed), slog.String("sha256_prefix", ps.Digest()))
	return ps.Len(), nil
}

// reloadPrincipals serves POST /v1/admin/principals/reload: 200
// {"loaded":N} (opAccess admits global operators only: the file spans
// every tenant); 409 not_reloadable without a file; 422
// principals_invalid with the reason when the file is refused.
func (a *API) reloadPrincipals(ctx *fasthttp.RequestCtx, p *Principal) {
	n, err := a.ReloadPrincipals("operator " + string(p.Subject))
	switch {
	case errors.Is(err, ErrNotReloadable):
		a.writeProblem(ctx, probNotReloadable, "the server was started with --dev and no principals file", nil)
		return
	case err != nil:
		a.writeProblem(ctx, probPrincipalsInvalid, err.Error(), nil)
		return
	}
	s := acquireBuf()
	defer releaseBuf(s)
	b := append(s.b[:0], `{"loaded":`...)
	b = appendInt(b, int64(n))
	s.b = append(b, '}')
	sendJSON(ctx, fasthttp.StatusOK, s)
}
