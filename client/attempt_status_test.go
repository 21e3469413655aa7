package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAttemptStatusRealServer: against the real binary with a relay, after
// a relay-only join connected both sides through coturn, AttemptStatus
// answers the client that joined and the listing's owner the same typed
// state (relayed, both sides bound and relayed, both outcomes relayed); a
// principal without those roles, an unknown attempt and a zero ID get
// typed errors.
func TestAttemptStatusRealServer(t *testing.T) {
	srv, _ := startRelayServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	_, jin, _, _, herr, jerr, pub, _ := relayFlow(t, ctx, srv, newLossy(t), newLossy(t), true, PunchConfig{Timeout: 2 * time.Second})
	if herr != nil || jerr != nil {
		t.Fatalf("host: %v; joiner: %v", herr, jerr)
	}
	id := jin.AttemptID()
	if id.IsZero() {
		t.Fatal("the joiner's introduction names no attempt ID")
	}
	for _, role := range []string{"client", "publisher"} {
		st, err := srv.api(t, role).AttemptStatus(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if st.AttemptID != id || st.ListingID != pub.ListingID() || st.State != AttemptRelayed || st.Reason != "relayed" ||
			!st.RelayOnly || !st.HostBound || !st.ClientBound || !st.HostRelayed || !st.ClientRelayed || !st.ExpiresAt.After(time.Now().Add(-time.Minute)) {
			t.Fatalf("%s: status %+v", role, st)
		}
		for side, o := range map[string]*PunchOutcome{"host": st.HostOutcome, "client": st.ClientOutcome} {
			if o == nil || o.Path != "relayed" || o.ConnectTime <= 0 || o.ConnectTime > hangGuard {
				t.Fatalf("%s: %s outcome %+v, want relayed with its time to connect", role, side, o)
			}
		}
	}
	if _, err := srv.api(t, "operator").AttemptStatus(ctx, id); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a principal without the client or publisher role: %v, want ErrForbidden", err)
	}
	unknown, _ := ParseAttemptID("0b9f3c1e-6a2d-4c1b-9e7f-2d3c4b5a6978")
	if _, err := srv.api(t, "client").AttemptStatus(ctx, unknown); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown attempt: %v, want ErrNotFound", err)
	}
	var in *InputError
	if _, err := srv.api(t, "client").AttemptStatus(ctx, AttemptID{}); !errors.As(err, &in) || in.Field != "attempt_id" {
		t.Fatalf("a zero attempt ID: %v, want an InputError on attempt_id", err)
	}
}
