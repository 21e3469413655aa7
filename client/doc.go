// Package client is the Go SDK for Rendezvous hosts and peers.
//
// It speaks the v1 wire contract (docs/contracts, CONTRACT.md): the HTTP API
// for listings, leases and join attempts, and the STUN-framed UDP mediator for
// presence, binding and introduction. A host uses a Publisher, a peer uses a
// Joiner; both end with the other side's endpoints, which Punch turns into a
// working direct path.
//
// One UDP socket per role carries everything: mediator traffic, the hole punch
// and the application's datagrams after it. That way the NAT mapping the
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
// Capability values, which print as "[REDACTED]"; nothing in this package
// logs or formats them.
package client
