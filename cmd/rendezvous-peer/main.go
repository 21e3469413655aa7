// Command rendezvous-peer is a small host and joiner built on the client SDK:
// a host publishes a listing and waits for joiners; a joiner finds it, is
// introduced by the mediator, hole-punches a direct UDP path (or falls back
// to the TURN relay the server grants; --relay-only always relays, so
// neither side learns the other's address) and exchanges chat lines with the
// host over it. See docs/walkthrough.md.
//
//	rendezvous-peer host --server http://127.0.0.1:8080 --name "My game"
//	rendezvous-peer join --server http://127.0.0.1:8080 --first --say hello
//	rendezvous-peer join --first --not-full --attr mode=coop --order -current_players
//	rendezvous-peer join --quick --attr mode=coop
//
// --server (or RDV_SERVER) may list the instances of one deployment,
// separated by commas: requests go to the first that serves and move to the
// next when it does not answer or answers 503, and the listing stays the
// same. Each side prints the mediator (a server instance's UDP address) of
// its listing or attempt, every move of its presence to another mediator
// and every move of its requests to another instance.
//
// The bearer token comes from --token or RDV_TOKEN (prefer the variable: a
// flag is visible in the process list). Tokens are never printed.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/internal/version"
)

// Exit codes.
const (
	exitOK         = 0
	exitFailure    = 1
	exitUsage      = 2
	exitPunch      = 3 // no direct path (client.ErrPunchFailed)
	exitNoIntro    = 4 // the mediator never introduced the other side
	exitNoListings = 5 // --first or --quick found nothing to join
	exitRelay      = 6 // the relay refused the credentials or none was usable (client.ErrRelayRefused, ErrRelayUnavailable)
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "host":
		return runHost(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "join":
		return runJoin(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if version.Requested(args) {
		fmt.Fprint(stdout, version.Line("rendezvous-peer"))
		return exitOK
	}
	fmt.Fprintf(stderr, "rendezvous-peer: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

const usage = `usage:
  rendezvous-peer host --name NAME [flags]   publish a listing, punch to each joiner, chat
  rendezvous-peer join (--listing ID | --first | --quick) [filters] [flags]   join a listing, punch, chat

Run "rendezvous-peer host -h" or "rendezvous-peer join -h" for the flags,
"rendezvous-peer --version" for the version.
Every flag also reads RDV_<FLAG> (upper case, - as _); the flag wins.
--server takes one base URL or several instances of one deployment,
separated by commas (--server http://a:8080,http://b:8080): requests go to
the first that serves and move on when it fails.
`

// exitCode maps an SDK error to the command's exit status and prints it.
func exitCode(stderr io.Writer, what string, err error) int {
	fmt.Fprintf(stderr, "rendezvous-peer: %s: %v\n", what, err)
	switch {
	case errors.Is(err, client.ErrRelayRefused):
		return exitRelay
	case errors.Is(err, client.ErrPunchFailed):
		return exitPunch
	case errors.Is(err, client.ErrRelayUnavailable):
		return exitRelay
	case errors.Is(err, client.ErrIntroduceTimeout):
		return exitNoIntro
	}
	return exitFailure
}
