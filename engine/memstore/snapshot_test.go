package memstore

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func TestSnapshotNoSecretsAndDeterministic(t *testing.T) {
	f := newFx(t, nil)
	v := f.visible("pub-1")
	a := f.attempt(v, "client-1")
	f.s.BindAttemptEndpoint(f.ctx, f.bindCmd(a, engine.RoleHost, 1000))
	f.s.RevokePrincipal(f.ctx, "someone", 60e9)
	f.s.ConsumeReplay(f.ctx, engine.ConsumeReplay{Namespace: "n", Key: "k"})
	snap := f.s.Snapshot()
	if snap != f.s.Snapshot() {
		t.Fatalf("Snapshot is not deterministic")
	}
	for _, want := range []string{v.ID.String(), v.Lease.String(), v.Presence.String(), a.ID.String(), a.Handle.String(),
		`owner="pub-1"`, `client="client-1"`, "revoked_until=1m0s", `replay ns="n"`, "idempotency listing", "idempotency attempt",
		"203.0.113.10:1000", "last_seq=1"} {
		if !strings.Contains(snap, want) {
			t.Fatalf("Snapshot lacks %q:\n%s", want, snap)
		}
	}
	lc, pc, cc := f.k.Lease(v.Lease), f.k.Presence(v.Presence), f.k.AttemptClient(a.Handle)
	hc := engine.HostAttemptCapability(&pc, a.Handle)
	for _, c := range []engine.Capability{lc, pc, cc, hc} {
		fp := engine.FingerprintOf(&c)
		for _, secret := range []string{hex.EncodeToString(c[:]), string(c.AppendToken(nil)), hex.EncodeToString(fp[:]), string(fp[:8])} {
			if strings.Contains(strings.ToLower(snap), strings.ToLower(secret)) {
				t.Fatalf("Snapshot reveals a capability or fingerprint")
			}
		}
	}
}
