// Package stun is a zero-allocation encoder and decoder for the subset of
// STUN (RFC 8489) that the Rendezvous wire contract uses (docs/contracts/udp.md):
// the 20-byte header, USERNAME, XOR-MAPPED-ADDRESS, XOR-PEER-ADDRESS,
// ERROR-CODE, UNKNOWN-ATTRIBUTES, MESSAGE-INTEGRITY-SHA256, FINGERPRINT, the
// private RDV-* attributes and the private OFFER, INTRODUCE and
// RELAY-INTRODUCE methods.
//
// Parse decodes into a caller-owned Message that records attribute offsets
// into the datagram; accessors read values from those offsets. A Builder
// writes a message into a caller-owned buffer. Neither allocates, and both
// are used by the server (netio) and the client SDK (client).
//
// Concurrency: a Message or Builder is not safe for concurrent use; distinct
// values may be used from distinct goroutines freely. Package-level functions
// are safe for concurrent use.
package stun
