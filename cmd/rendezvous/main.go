// Command rendezvous is the Rendezvous server: the in-memory store, the
// HTTP API and the UDP mediator in one process. See docs/operations.md and
// `rendezvous --help`.
package main

import "os"

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
