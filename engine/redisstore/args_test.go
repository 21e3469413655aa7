package redisstore

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestArgumentPositionsAgree: every function's argument positions in
// ARG (scripts/prelude/15_arguments.lua) run from ARGV[3] without a gap
// or a repeat, and where the Go side names them (args.go) it names the
// same argument at the same position.
func TestArgumentPositionsAgree(t *testing.T) {
	src, err := scriptFS.ReadFile("scripts/prelude/15_arguments.lua")
	if err != nil {
		t.Fatal(err)
	}
	lua := luaArgumentNames(t, string(src))
	goSide := map[string][]string{
		"create_listing": ordered(t, clArgs, map[int]string{clTenant: "tenant", clOwner: "owner", clIdem: "idem",
			clRequest: "request", clListing: "listing", clLease: "lease", clPresence: "presence", clLeaseKey: "lease_key",
			clPresenceField: "presence_field", clSpec: "spec", clDoc: "doc", clPlayers: "players",
			clMaxPlayers: "max_players", clProtocol: "protocol", clPublic: "public", clRegion: "region", clAttrs: "attrs"}),
		"renew_lease": ordered(t, rnArgs, map[int]string{rnTenant: "tenant", rnOwner: "owner", rnListing: "listing",
			rnLease: "lease", rnLeaseKey: "lease_key", rnVersion: "version", rnPlayers: "players",
			rnSetAttrs: "set_attrs", rnAttrs: "attrs"}),
		"delete_listing": ordered(t, dlArgs, map[int]string{dlTenant: "tenant", dlOwner: "owner", dlListing: "listing",
			dlLease: "lease", dlLeaseKey: "lease_key"}),
		"browse": ordered(t, brArgs, map[int]string{brTenant: "tenant", brProtocol: "protocol", brRegion: "region",
			brAfter: "after", brLimit: "limit", brIDs: "ids"}),
		"create_attempt": ordered(t, caArgs, map[int]string{caTenant: "tenant", caClient: "client", caIdem: "idem",
			caRequest: "request", caListing: "listing", caProtocol: "protocol", caAttempt: "attempt", caHandle: "handle",
			caPresence: "presence", caHostKey: "host_key", caClientKey: "client_key", caRelayOnly: "relay_only"}),
		"quick_join": ordered(t, qjArgs, map[int]string{qjTenant: "tenant", qjClient: "client", qjIdem: "idem",
			qjRequest: "request", qjProtocol: "protocol", qjAttempt: "attempt", qjHandle: "handle",
			qjClientKey: "client_key", qjRelayOnly: "relay_only", qjCount: "count"}),
		"bind_attempt": ordered(t, baArgs, map[int]string{baHandle: "handle", baRole: "role", baKey: "key",
			baBinding: "binding", baInstance: "instance", baRelayed: "relayed"}),
		"attempt_status": ordered(t, asArgs, map[int]string{asTenant: "tenant", asSubject: "subject",
			asAttempt: "attempt", asHandle: "handle", asRevocation: "revocation"}),
		"bind_presence": ordered(t, bpArgs, map[int]string{bpInstance: "instance", bpRef: "ref", bpField: "field",
			bpSeq: "seq", bpValue: "value"}),
		"apply_batch": ordered(t, abArgs, map[int]string{abInstance: "instance", abRef: "ref", abCount: "count",
			abKinds: "kinds"}),
		"instance_register": ordered(t, irArgs, map[int]string{irInstance: "instance", irAddr: "addr",
			irLease: "lease", irDrain: "drain"}),
	}
	for fn, names := range goSide {
		if !slices.Equal(lua[fn], names) {
			t.Errorf("%s: Lua's ARG names %q, Go's %q", fn, lua[fn], names)
		}
	}
	if len(lua) < len(goSide)+5 {
		t.Errorf("ARG names %d functions: the parse lost some", len(lua))
	}
}

// luaArgumentNames reads ARG's entries ('fn = {name = position, ...}') as
// each function's argument names in position order, from ARGV[3].
func luaArgumentNames(t *testing.T, src string) map[string][]string {
	src = regexp.MustCompile(`--[^\n]*`).ReplaceAllString(src, "")
	entry := regexp.MustCompile(`([a-z_]+) = \{([^{}]*)\}`)
	field := regexp.MustCompile(`([a-z_]+) = ([0-9]+)`)
	out := map[string][]string{}
	for _, e := range entry.FindAllStringSubmatch(src, -1) {
		fn, fields := e[1], field.FindAllStringSubmatch(e[2], -1)
		names := make([]string, len(fields))
		for _, f := range fields {
			at, _ := strconv.Atoi(f[2])
			if at < 3 || at-3 >= len(names) || names[at-3] != "" {
				t.Fatalf("ARG.%s.%s = %d: positions must run from 3 without a gap or a repeat", fn, f[1], at)
			}
			names[at-3] = f[1]
		}
		out[fn] = names
	}
	return out
}

// ordered lists names by position; every position below n must be named.
func ordered(t *testing.T, n int, names map[int]string) []string {
	out := make([]string, n)
	for i := range out {
		if out[i] = names[i]; out[i] == "" {
			t.Fatalf("position %d of %d has no name", i, n)
		}
	}
	return out
}
