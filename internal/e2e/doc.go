// Package e2e is the system tests' harness, shared by every package that
// runs the real binaries (cmd/rendezvous, client, cmd/rendezvous-load):
// it builds the module's commands once, starts a server and captures its
// output, writes principals files, and holds the small concurrency-safe
// pieces those tests need. Redis servers come from
// engine/redisstore/redistest; network namespaces from internal/netnslab.
package e2e
