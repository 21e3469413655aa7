// Package client is the Go SDK for Rendezvous hosts and peers.
//
// It speaks the v1 wire contract (docs/contracts/http.md, docs/contracts/udp.md
// and docs/contracts/semantics.md): the HTTP API for listings, leases and join
// attempts, and the STUN-framed UDP mediator for presence, binding and
// introduction. A host uses a Publisher, a peer uses a
// Joiner; both end with the other side's endpoints, which Punch turns into a
// working direct path, or, when none can be punched (or the attempt is
// relay-only, revealing no address), a path through the TURN relay the server
// granted (RFC 8656, with github.com/pion/turn).
//
// One UDP socket per role carries everything: mediator traffic, the hole punch
// and the application's datagrams after it (a relayed path adds the TURN
// allocation's own socket, which Socket.WriteTo and ReadFrom use for that
// peer). That way the NAT mapping the
// mediator observed is the very mapping the other peer is told to use. The
// Socket type owns that socket and demultiplexes what arrives on it.
//
// The SDK's API stands alone: identifiers (ListingID, AttemptID, LeaseID,
// Handle), secrets (Capability) and errors are its own types, so a program
// imports this package only. Internally it uses the server's STUN codec
// (netio/stun) and the engine's UUID, validation and capability-derivation
// helpers (the codec's own types come from there); it has no server code in
// it.
//
// Secrets (lease tokens, presence and attempt capabilities) are held as
// Capability values, relay passwords as RelayCredential values; both print
// as "[REDACTED]", and nothing in this package logs or formats them.
package client
