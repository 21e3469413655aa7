package storetest

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// runRelay covers the relay fallback: attempt state and its authorisation,
// relayed candidates and the one-time relay introduction, relay-only
// attempts (which never consume the direct introduction), outcome reports,
// tombstones, their input checks and races. A store WithoutRelay must
// refuse every entry point with *engine.UnsupportedError, changing nothing.
func runRelay(t *testing.T, f Factory, o options) {
	if o.noRelay {
		t.Run("UnsupportedIsTypedAndChangesNothing", func(t *testing.T) { runRelayUnsupported(t, f) })
		return
	}
	runGroups(t, f, []group{
		{"StateProgression", runRelayStates},
		{"StatusAuthorisation", runRelayStatusAuth},
		{"RelayedCandidates", runRelayCandidates},
		{"RelayOnly", runRelayOnly},
		{"Outcomes", runRelayOutcomes},
		{"Tombstones", runRelayTombstones},
		{"TombstonesBounded", runRelayTombstonesBounded},
		{"TombstonesPerTenant", runRelayTombstonesPerTenant},
		{"Input", runRelayInput},
		{"UnavailableAndCancel", runRelayUnavailable},
		{"Race", runRelayRace},
	})
}

// relayed is a relayed transport address on a TURN server (192.0.2.50:port).
func relayed(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("192.0.2.50"), port)
}

// relayBind is bindCmd carrying a relayed address.
func (e *env) relayBind(a engine.AttemptView, role engine.Role, public, relay netip.AddrPort) engine.BindAttempt {
	c := e.bindCmd(a, role, public, netipZero)
	c.Relayed = relay
	return c
}

// reportCmd is role's outcome report for attempt a.
func (e *env) reportCmd(a engine.AttemptView, role engine.Role, p engine.Path, ms uint32) engine.PunchReport {
	b := e.bindCmd(a, role, pub(1), netipZero)
	return engine.PunchReport{Handle: a.Handle, Role: role, Key: b.Key, Path: p, ConnectMillis: ms}
}

// apply runs one op in a batch and returns it; it fails on a batch error.
func (e *env) apply(op engine.Op) engine.Op {
	e.t.Helper()
	ops := []engine.Op{op}
	if err := e.s.ApplyBatch(e.ctx, ops); err != nil {
		e.t.Fatalf("ApplyBatch: %v", err)
	}
	e.check()
	return ops[0]
}

func bindOp(c engine.BindAttempt) engine.Op   { return engine.Op{Kind: engine.OpBindAttempt, Bind: c} }
func reportOp(r engine.PunchReport) engine.Op { return engine.Op{Kind: engine.OpOutcome, Report: r} }
func (e *env) relayOnlyCmd(v engine.ListingView, client engine.Subject) engine.CreateAttempt {
	c := e.attemptCmd(v, client)
	c.RelayOnly = true
	return c
}

// status asks for a's status as subject.
func (e *env) status(a engine.AttemptView, subject engine.Subject) (engine.AttemptStatus, engine.Result) {
	e.t.Helper()
	st, r, err := e.s.AttemptStatus(e.ctx, engine.GetAttempt{Tenant: a.Tenant, Subject: subject, Attempt: a.ID})
	if err != nil {
		e.t.Fatalf("AttemptStatus: unexpected error %v", err)
	}
	return st, r
}

// wantStatus requires a's status, as its client and as its listing's owner
// (the same answer), to be state and reason, and returns it.
func (e *env) wantStatus(a engine.AttemptView, owner engine.Subject, state engine.AttemptState, reason engine.AttemptReason) engine.AttemptStatus {
	e.t.Helper()
	st, r := e.status(a, a.Client)
	e.want("AttemptStatus (client)", r, nil, engine.Success)
	if st.State != state || st.Reason != reason {
		e.t.Fatalf("attempt state %v/%v, want %v/%v", st.State, st.Reason, state, reason)
	}
	if st.Attempt != a.ID || st.Listing != a.Listing || !st.ExpiresAt.Equal(a.ExpiresAt) {
		e.t.Fatalf("status names attempt %v listing %v expiring %v, want %v %v %v", st.Attempt, st.Listing, st.ExpiresAt, a.ID, a.Listing, a.ExpiresAt)
	}
	ost, r := e.status(a, owner)
	e.want("AttemptStatus (owner)", r, nil, engine.Success)
	if ost != st {
		e.t.Fatalf("the owner reads %+v, the client %+v", ost, st)
	}
	return st
}

func runRelayStates(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	st := e.wantStatus(a, "publisher-1", engine.AttemptCreated, engine.ReasonAwaitingOffer)
	if st.RelayOnly || st.HostBound || st.ClientBound || st.HostRelayed || st.ClientRelayed || st.HostOutcome.Reported() || st.ClientOutcome.Reported() {
		t.Fatalf("a new attempt's status has flags set: %+v", st)
	}
	r, err := e.s.MarkOffered(e.ctx, a.Handle)
	e.want("MarkOffered", r, err, engine.Success)
	if r.Replay {
		t.Fatalf("first MarkOffered reported Replay")
	}
	e.wantStatus(a, "publisher-1", engine.AttemptOffered, engine.ReasonAwaitingHostBind)
	e.unchanged("MarkOffered again", func() {
		r, err := e.s.MarkOffered(e.ctx, a.Handle)
		e.want("MarkOffered again", r, err, engine.Success)
		if !r.Replay {
			t.Fatalf("a repeated MarkOffered is not a Replay")
		}
	})
	e.unchanged("MarkOffered of an unknown handle", func() {
		r, err := e.s.MarkOffered(e.ctx, engine.Handle{UUID: engine.NewUUID()})
		e.want("MarkOffered unknown", r, err, engine.NotFound)
	})
	e.bind(e.bindCmd(a, engine.RoleClient, otherPub(20), netipZero))
	st = e.wantStatus(a, "publisher-1", engine.AttemptClientBound, engine.ReasonAwaitingHostBind)
	if !st.ClientBound || st.HostBound {
		t.Fatalf("client-bound flags: %+v", st)
	}
	op := e.apply(bindOp(e.bindCmd(a, engine.RoleHost, pub(10), netipZero)))
	if !op.Result.OK() || !op.FirstIntro || op.RelayReady {
		t.Fatalf("host bind completing the pair: %v first=%v relay=%v", op.Result, op.FirstIntro, op.RelayReady)
	}
	st = e.wantStatus(a, "publisher-1", engine.AttemptIntroduced, engine.ReasonIntroduced)
	if !st.ClientBound || !st.HostBound {
		t.Fatalf("introduced flags: %+v", st)
	}

	// The host first: host_bound; both bound outside a batch and not yet
	// consumed: client_bound, awaiting the introduction.
	b := e.attempt(v, "client-2")
	e.bind(e.bindCmd(b, engine.RoleHost, pub(11), netipZero))
	e.wantStatus(b, "publisher-1", engine.AttemptHostBound, engine.ReasonAwaitingClientBind)
	e.bind(e.bindCmd(b, engine.RoleClient, otherPub(21), netipZero))
	e.wantStatus(b, "publisher-1", engine.AttemptClientBound, engine.ReasonAwaitingIntroduction)
	_, r, err = e.s.ConsumeIntroduction(e.ctx, b.Handle)
	e.want("ConsumeIntroduction", r, err, engine.Success)
	e.wantStatus(b, "publisher-1", engine.AttemptIntroduced, engine.ReasonIntroduced)
	// MarkOffered after a bind changes the flag only, never the state back.
	r, err = e.s.MarkOffered(e.ctx, b.Handle)
	e.want("MarkOffered after binds", r, err, engine.Success)
	e.wantStatus(b, "publisher-1", engine.AttemptIntroduced, engine.ReasonIntroduced)
}

func runRelayStatusAuth(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	o := e.visibleIn(otherTenant, "publisher-1")
	e.attempt(o, "client-1")
	for _, q := range []engine.GetAttempt{
		{Tenant: tenant, Subject: "client-2", Attempt: a.ID},                                     // another client
		{Tenant: tenant, Subject: "publisher-2", Attempt: a.ID},                                  // another publisher
		{Tenant: otherTenant, Subject: "client-1", Attempt: a.ID},                                // its client, in another tenant
		{Tenant: otherTenant, Subject: "publisher-1", Attempt: a.ID},                             // its owner, in another tenant
		{Tenant: tenant, Subject: "client-1", Attempt: engine.AttemptID{UUID: engine.NewUUID()}}, // unknown
		{Tenant: tenant, Subject: "client-1", Attempt: engine.AttemptID{UUID: a.Handle.UUID}},    // a handle is not an ID
		{Tenant: tenant, Subject: "publisher-2", Handle: a.Handle},                               // by handle, another publisher
		{Tenant: otherTenant, Subject: "publisher-1", Handle: a.Handle},                          // by handle, another tenant
		{Tenant: tenant, Subject: "publisher-1", Handle: engine.Handle{UUID: a.ID.UUID}},         // an ID is not a handle
		{Tenant: tenant, Subject: "publisher-1"},                                                 // neither
	} {
		e.unchanged("status asked by a stranger", func() {
			_, r, err := e.s.AttemptStatus(e.ctx, q)
			e.want("AttemptStatus by "+string(q.Subject), r, err, engine.NotFound)
		})
	}
	st := e.wantStatus(a, "publisher-1", engine.AttemptCreated, engine.ReasonAwaitingOffer)
	// The host knows only the handle: by handle, the same answer, naming the ID.
	for _, s := range []engine.Subject{"publisher-1", "client-1"} {
		hst, r, err := e.s.AttemptStatus(e.ctx, engine.GetAttempt{Tenant: tenant, Subject: s, Handle: a.Handle})
		e.want("AttemptStatus by handle", r, err, engine.Success)
		if hst != st {
			t.Fatalf("by handle %+v, by ID %+v", hst, st)
		}
	}
}

func runRelayCandidates(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	host, client := e.bindCmd(a, engine.RoleHost, pub(10), netipZero), e.bindCmd(a, engine.RoleClient, otherPub(20), netipZero)
	e.apply(bindOp(client))
	if op := e.apply(bindOp(host)); !op.FirstIntro || op.RelayReady {
		t.Fatalf("direct introduction: first=%v relay=%v", op.FirstIntro, op.RelayReady)
	}
	// The direct punch failed: the client sends its relayed address with
	// the same endpoint. New, so not a Replay; the host's is missing.
	op := e.apply(bindOp(e.relayBind(a, engine.RoleClient, otherPub(20), relayed(5001))))
	if !op.Result.OK() || op.Result.Replay || op.RelayReady || op.FirstRelay {
		t.Fatalf("client relayed candidate: %v replay=%v ready=%v", op.Result, op.Result.Replay, op.RelayReady)
	}
	if op.Attempt.PeerRelayed != relayed(5001) || op.Attempt.HostRelayed.IsValid() {
		t.Fatalf("view's relayed addresses %v %v", op.Attempt.HostRelayed, op.Attempt.PeerRelayed)
	}
	st := e.wantStatus(a, "publisher-1", engine.AttemptIntroduced, engine.ReasonAwaitingRelayCandidates)
	if !st.ClientRelayed || st.HostRelayed {
		t.Fatalf("relayed flags %+v", st)
	}
	inFlight := e.s.Stats().InFlight
	op = e.apply(bindOp(e.relayBind(a, engine.RoleHost, pub(10), relayed(5002))))
	if !op.Result.OK() || !op.RelayReady || !op.FirstRelay {
		t.Fatalf("host relayed candidate completing the pair: %v ready=%v first=%v", op.Result, op.RelayReady, op.FirstRelay)
	}
	want := engine.RelayIntroduction{Attempt: a.ID, Handle: a.Handle, Host: relayed(5002), Client: relayed(5001)}
	if op.RelayIntro != want || !op.Attempt.RelayConsumed {
		t.Fatalf("relay introduction %+v, want %+v", op.RelayIntro, want)
	}
	if got := e.s.Stats().InFlight; got != inFlight {
		t.Fatalf("in flight %d after the relay introduction of an introduced attempt, was %d", got, inFlight)
	}
	e.wantStatus(a, "publisher-1", engine.AttemptRelayed, engine.ReasonRelayed)
	// Retransmissions read the relay introduction back.
	for _, c := range []engine.BindAttempt{e.relayBind(a, engine.RoleHost, pub(10), relayed(5002)), e.relayBind(a, engine.RoleClient, otherPub(20), relayed(5001))} {
		e.unchanged("identical relayed bind", func() {
			op := e.apply(bindOp(c))
			if !op.Result.OK() || !op.Result.Replay || !op.RelayReady || op.FirstRelay || op.RelayIntro != want {
				t.Fatalf("identical relayed bind: %v replay=%v ready=%v first=%v", op.Result, op.Result.Replay, op.RelayReady, op.FirstRelay)
			}
		})
	}
	// A bind without the relayed address says nothing about it: a Replay.
	e.unchanged("plain rebind", func() {
		if op := e.apply(bindOp(host)); !op.Result.OK() || !op.Result.Replay {
			t.Fatalf("plain rebind after the relayed one: %v", op.Result)
		}
	})
	// Another relayed address, or another endpoint, is rejected.
	for _, c := range []engine.BindAttempt{
		e.relayBind(a, engine.RoleHost, pub(10), relayed(5999)),
		e.relayBind(a, engine.RoleClient, otherPub(20), relayed(5002)),
		e.relayBind(a, engine.RoleHost, pub(11), relayed(5002)),
	} {
		e.unchanged("conflicting relayed bind", func() {
			if op := e.apply(bindOp(c)); op.Result.Outcome != engine.ReplayRejected || op.RelayReady {
				t.Fatalf("conflicting relayed bind = %v ready=%v", op.Result.Outcome, op.RelayReady)
			}
			e.wantBind(c, engine.ReplayRejected, "conflicting relayed BindAttemptEndpoint")
		})
	}

	// A side that binds with its relayed address at once; the other side's
	// first bind carries one too: the pair completes in one batch op with
	// both introductions.
	b := e.attempt(v, "client-2")
	vb, r := e.bind(e.relayBind(b, engine.RoleClient, otherPub(30), relayed(6001)))
	if !r.OK() || vb.PeerRelayed != relayed(6001) || vb.RelayConsumed {
		t.Fatalf("BindAttemptEndpoint with a relayed address: %v %+v", r, vb)
	}
	op = e.apply(bindOp(e.relayBind(b, engine.RoleHost, pub(31), relayed(6002))))
	if !op.FirstIntro || !op.FirstRelay || op.RelayIntro.Client != relayed(6001) || op.RelayIntro.Host != relayed(6002) {
		t.Fatalf("one bind completing both: intro=%v relay=%v %+v", op.FirstIntro, op.FirstRelay, op.RelayIntro)
	}
	e.wantStatus(b, "publisher-1", engine.AttemptRelayed, engine.ReasonRelayed)
}

func runRelayOnly(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attemptFrom(e.relayOnlyCmd(v, "client-1"))
	if !a.RelayOnly {
		t.Fatalf("relay-only attempt view without RelayOnly")
	}
	inFlight := e.s.Stats().InFlight
	op := e.apply(bindOp(e.bindCmd(a, engine.RoleClient, otherPub(20), netipZero)))
	if !op.Result.OK() || op.IntroReady {
		t.Fatalf("relay-only client bind: %v intro=%v", op.Result, op.IntroReady)
	}
	op = e.apply(bindOp(e.bindCmd(a, engine.RoleHost, pub(10), netipZero)))
	if !op.Result.OK() || op.IntroReady || op.FirstIntro || op.Intro != (engine.Introduction{}) || op.RelayReady {
		t.Fatalf("relay-only host bind gave an introduction: %v intro=%v %+v", op.Result, op.IntroReady, op.Intro)
	}
	st := e.wantStatus(a, "publisher-1", engine.AttemptClientBound, engine.ReasonAwaitingRelayCandidates)
	if !st.RelayOnly {
		t.Fatalf("status without relay_only")
	}
	e.unchanged("ConsumeIntroduction of a relay-only attempt", func() {
		_, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction (relay-only)", r, err, engine.Conflict)
		_, r, err = e.s.Introduction(e.ctx, a.Handle)
		e.want("Introduction (relay-only)", r, err, engine.Conflict)
	})
	op = e.apply(bindOp(e.relayBind(a, engine.RoleHost, pub(10), relayed(5002))))
	if op.RelayReady || op.Result.Replay {
		t.Fatalf("one relayed address made the relay introduction ready (or was a replay)")
	}
	op = e.apply(bindOp(e.relayBind(a, engine.RoleClient, otherPub(20), relayed(5001))))
	if !op.FirstRelay || op.IntroReady || op.RelayIntro.Host != relayed(5002) || op.RelayIntro.Client != relayed(5001) {
		t.Fatalf("relay-only pair: relay=%v intro=%v %+v", op.FirstRelay, op.IntroReady, op.RelayIntro)
	}
	if got := e.s.Stats().InFlight; got != inFlight-1 {
		t.Fatalf("in flight %d after the relay introduction, want %d", got, inFlight-1)
	}
	e.wantStatus(a, "publisher-1", engine.AttemptRelayed, engine.ReasonRelayed)

	// A listing that requires relay-only joins makes every attempt
	// relay-only; the flag is part of the spec's fingerprint.
	lc := e.listingCmd("publisher-1")
	lc.Spec.RelayOnlyJoins = true
	rl := e.create(lc)
	if rl.Spec == nil || !rl.Spec.RelayOnlyJoins {
		t.Fatalf("listing view lost relay_only_joins")
	}
	e.presence(rl, 1, pub(41000))
	b := e.attempt(rl, "client-2")
	if !b.RelayOnly {
		t.Fatalf("attempt of a relay-only listing is not relay-only")
	}
	e.apply(bindOp(e.bindCmd(b, engine.RoleClient, otherPub(30), netipZero)))
	if op := e.apply(bindOp(e.bindCmd(b, engine.RoleHost, pub(31), netipZero))); op.IntroReady {
		t.Fatalf("attempt of a relay-only listing got an introduction")
	}
	e.wantStatus(b, "publisher-1", engine.AttemptClientBound, engine.ReasonAwaitingRelayCandidates)
	same := lc
	same.Spec.RelayOnlyJoins = false
	e.unchanged("registration replay differing in relay_only_joins", func() {
		_, r, err := e.s.CreateListing(e.ctx, same)
		e.want("CreateListing replay without relay_only_joins", r, err, engine.Conflict)
	})
	ac := e.attemptCmd(v, "client-3")
	e.attemptFrom(ac)
	ac.RelayOnly = true
	e.unchanged("join replay differing in relay_only", func() {
		_, r, err := e.s.CreateJoinAttempt(e.ctx, ac)
		e.want("CreateJoinAttempt replay with relay_only", r, err, engine.Conflict)
	})
}

func runRelayOutcomes(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	e.apply(bindOp(e.bindCmd(a, engine.RoleClient, otherPub(20), netipZero)))
	before := e.wantStatus(a, "publisher-1", engine.AttemptClientBound, engine.ReasonAwaitingHostBind)
	op := e.apply(reportOp(e.reportCmd(a, engine.RoleClient, engine.PathRelayed, 1500)))
	if !op.Result.OK() || op.Duplicate || op.Tenant != tenant {
		t.Fatalf("first report: %v duplicate=%v tenant=%v", op.Result, op.Duplicate, op.Tenant)
	}
	if op.Attempt.ID != a.ID || op.Attempt.Handle != a.Handle || op.Attempt.TTL <= 0 || op.Attempt.TTL > e.l.AttemptTTL {
		t.Fatalf("report answer's attempt view: %v %v ttl %v", op.Attempt.ID, op.Attempt.Handle, op.Attempt.TTL)
	}
	st := e.wantStatus(a, "publisher-1", before.State, before.Reason)
	if st.ClientOutcome != (engine.PunchOutcome{Path: engine.PathRelayed, ConnectMillis: 1500}) || st.HostOutcome.Reported() {
		t.Fatalf("outcomes %+v %+v", st.HostOutcome, st.ClientOutcome)
	}
	e.unchanged("repeated report", func() {
		op := e.apply(reportOp(e.reportCmd(a, engine.RoleClient, engine.PathFailed, 9000)))
		if !op.Result.OK() || !op.Duplicate || op.Tenant != tenant {
			t.Fatalf("repeated report: %v duplicate=%v", op.Result, op.Duplicate)
		}
	})
	op = e.apply(reportOp(e.reportCmd(a, engine.RoleHost, engine.PathDirect, 0)))
	if !op.Result.OK() || op.Duplicate {
		t.Fatalf("host report: %v duplicate=%v", op.Result, op.Duplicate)
	}
	st = e.wantStatus(a, "publisher-1", before.State, before.Reason)
	if st.HostOutcome != (engine.PunchOutcome{Path: engine.PathDirect}) || st.ClientOutcome.ConnectMillis != 1500 {
		t.Fatalf("outcomes after both: %+v %+v", st.HostOutcome, st.ClientOutcome)
	}
	wrong := e.reportCmd(a, engine.RoleHost, engine.PathDirect, 1)
	wrong.Key = e.clientKey(a.Handle)
	unknown := e.reportCmd(a, engine.RoleClient, engine.PathDirect, 1)
	unknown.Handle = engine.Handle{UUID: engine.NewUUID()}
	for _, r := range []engine.PunchReport{wrong, unknown} {
		e.unchanged("report with a wrong key or handle", func() {
			if op := e.apply(reportOp(r)); op.Result.Outcome != engine.NotFound || op.Tenant != (engine.Tenant{}) {
				t.Fatalf("report with a wrong key or handle = %v", op.Result.Outcome)
			}
		})
	}
}

func runRelayInput(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	badRelayed := []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("192.0.2.50"), 0), netip.AddrPortFrom(netip.Addr{}, 5000)}
	for _, bad := range badRelayed {
		c := e.relayBind(a, engine.RoleClient, otherPub(20), bad)
		e.unchanged("bind with an invalid relayed address", func() {
			_, _, err := e.s.BindAttemptEndpoint(e.ctx, c)
			e.wantInput("BindAttemptEndpoint relayed", err, "relayed")
			op := e.apply(bindOp(c))
			e.wantInput("ApplyBatch bind relayed", op.Err, "relayed")
		})
	}
	for _, bad := range []engine.PunchReport{
		{Handle: a.Handle, Role: engine.RoleClient, Key: e.clientKey(a.Handle), Path: 0},
		{Handle: a.Handle, Role: engine.RoleClient, Key: e.clientKey(a.Handle), Path: 4},
		{Handle: a.Handle, Role: 0, Key: e.clientKey(a.Handle), Path: engine.PathDirect},
	} {
		e.unchanged("invalid report", func() {
			op := e.apply(reportOp(bad))
			e.wantInput("ApplyBatch outcome", op.Err, "path", "role")
		})
	}
	for _, q := range []engine.GetAttempt{
		{Tenant: engine.Tenant{Game: "Bad!", Env: "test"}, Subject: "client-1", Attempt: a.ID},
		{Tenant: tenant, Subject: "", Attempt: a.ID},
	} {
		e.unchanged("invalid status query", func() {
			_, _, err := e.s.AttemptStatus(e.ctx, q)
			e.wantInput("AttemptStatus", err, "game_id", "subject")
		})
	}
}
