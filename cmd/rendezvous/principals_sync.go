package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/httpapi"
)

// principalsPoll is how often an instance of a deployment reads the
// principals reload mark: a reload asked of any instance reaches every
// other within this plus its own reload (well under a second).
const principalsPoll = 250 * time.Millisecond

// principalsSync carries principals reloads across a deployment's
// instances (--store redis with a principals file): the instance asked to
// reload announces it in Redis after reloading (redisstore
// AnnouncePrincipalsReload); every instance polls the mark and re-reads
// its own file when it changed. Each instance reads its own copy of the
// file: rendezvous_principals_info shows whether the copies agree.
type principalsSync struct {
	store *redisstore.Store
	log   *slog.Logger

	mu   sync.Mutex // held while announcing, so the poll never takes our own mark for another's
	last string     // the mark this instance's principals correspond to

	stopOnce   sync.Once
	stop, done chan struct{}
}

// newPrincipalsSync reads the current mark: the principals this instance
// just loaded from its file are as new as any reload announced before.
func newPrincipalsSync(rs *redisstore.Store, log *slog.Logger) *principalsSync {
	p := &principalsSync{store: rs, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), redisstore.DefaultTimeout)
	defer cancel()
	mark, err := rs.PrincipalsReloadMark(ctx)
	if err != nil {
		// The first poll that succeeds reloads once: harmless.
		log.Warn("cannot read the deployment's principals reload mark; reloading at the first poll that can", "err", err)
	}
	p.last = mark
	return p
}

// announce is httpapi.Config.PrincipalsReloaded: this instance reloaded,
// tell the others. A failure leaves them on their principals: logged, and
// visible as a rendezvous_principals_info mismatch once the files differ.
func (p *principalsSync) announce() {
	p.mu.Lock()
	defer p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), redisstore.DefaultTimeout)
	defer cancel()
	mark, err := p.store.AnnouncePrincipalsReload(ctx)
	if err != nil {
		p.log.Warn("principals reload not announced: the other instances keep their principals until the next reload reaches them", "err", err)
		return
	}
	p.last = mark
	p.log.Info("principals reload announced to the deployment")
}

// run polls the mark until stopped, and reloads when another instance
// announced a reload. A run of failed polls is logged at its start and
// its end.
func (p *principalsSync) run(api *httpapi.API) {
	defer close(p.done)
	t := time.NewTicker(principalsPoll)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), redisstore.DefaultTimeout)
		mark, err := p.store.PrincipalsReloadMark(ctx)
		cancel()
		switch {
		case err != nil && !failing:
			p.log.Warn("cannot read the deployment's principals reload mark; a reload asked of another instance waits until it can", "err", err)
		case err == nil && failing:
			p.log.Info("principals reload mark read again")
		}
		failing = err != nil
		if err != nil {
			continue
		}
		p.mu.Lock()
		changed := mark != p.last
		p.last = mark
		p.mu.Unlock()
		if !changed {
			continue
		}
		by, _, _ := strings.Cut(mark, " ")
		// FollowPrincipalsReload logs the outcome, success or refusal.
		if _, err := api.FollowPrincipalsReload("instance " + by); errors.Is(err, httpapi.ErrNotReloadable) {
			return // cannot happen: the sync runs only with a file
		}
	}
}

// close stops run and waits for it.
func (p *principalsSync) close() {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
}
