package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// writeUsage prints --help: every flag with its environment variable,
// meaning and default.
func writeUsage(w io.Writer) {
	fs := newFlagSet(&config{})
	fmt.Fprint(w, `Usage: rendezvous [flags]

Rendezvous serves game-session listings over HTTP and introduces hosts and
clients over a STUN-framed UDP mediator. State is in memory by default: a
restart starts empty and invalidates every capability unless
--capability-key-file is set. With --store redis the state lives in Redis,
shared by every instance started with the same --redis-addr, --redis-name
and --capability-key-file.

Every flag can also be set by the environment variable shown next to it
(RDV_ + the flag name in upper case, '-' as '_'); the command line wins.
Durations are Go durations (30s, 2m). A bad value stops the start with an
error naming the setting.

Each pool (--max-*) is shared by every tenant; the quotas keep one tenant
or principal from taking all of it. A creation over a quota gets 429
quota_exceeded while other tenants keep their room; a full pool gets 503.
A quota not given follows its pool (half of it per tenant, a tenth of the
attempt pool per principal); one above its pool is a bad setting.

Relay fallback: with --turn-uri and --turn-secret-file (the secret a
coturn relay runs with, use-auth-secret), each join attempt's client and
host get TURN credentials valid for --turn-ttl, and join attempts may be
relay-only. Without them relay is off and relay-only requests get 409
relay_unavailable.

SIGTERM or SIGINT begins a drain: readiness turns 503 at once, new work is
refused, join attempts in flight may finish within --drain-window, then the
sockets close and the process exits 0 (at once if nothing is in flight).
A second signal exits at once with status 1. Status 2: a bad setting.
SIGHUP re-reads the --principals file; a bad file is logged and changes
nothing.

rendezvous --version prints the version, the Go version and the platform.

Flags:
`)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "   [%s]\n", envName(f.Name))
		fmt.Fprintf(w, "      %s", strings.ReplaceAll(usage, "\n", "\n      "))
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
