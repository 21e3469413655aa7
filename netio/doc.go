// Package netio is the UDP side of Rendezvous: the mediator that answers
// plain STUN Binding requests, presence refreshes, attempt binds and
// outcome reports on the rendezvous port, and sends the OFFER, INTRODUCE
// and RELAY-INTRODUCE indications nobody asked for. The wire format is
// docs/contracts/udp.md; the STUN codec is package netio/stun.
//
// A [Mediator] is made by [NewMediator] from a [Config], an [engine.Store]
// and an [engine.Keyring], started by [Mediator.Start] and stopped by
// [Mediator.Close]. Below, each step a datagram takes names the function
// and file that take it. Steady state allocates nothing per datagram: every
// buffer is allocated once per socket (newPackets, newProcessor), and
// TestProcessorZeroAllocs and TestRawPathZeroAllocs hold that.
//
// # Sockets
//
// NewMediator (mediator.go) checks the Config (Config.normalize,
// config.go) and, for each listen address, binds Config.Sockets sockets
// that share it with SO_REUSEPORT; a reuseport program spreads datagrams
// over them by a hash of the source, and over no socket another process
// adds to the group later (listen, socket.go; steer_linux.go). Before
// bind, controlSocket (sockopt_linux.go) sets SO_REUSEPORT, the buffer
// sizes (SO_RCVBUFFORCE, falling back to SO_RCVBUF capped at rmem_max;
// the same for sending) and, on a wildcard address, IP_PKTINFO or
// IPV6_RECVPKTINFO, so that every answer leaves from the address its
// request reached. Each socket is a
// batchConn (batch.go): on Linux a rawConn (batch_linux.go), which calls
// recvmmsg and sendmmsg through RawSyscall6 on arrays of mmsghdr, iovec,
// sockaddr and control messages allocated once; elsewhere, or with
// Config.Portable, a portableConn (batch_portable.go) on x/net's
// ReadBatch and WriteBatch.
//
// # The path of a datagram
//
// Start runs one reader goroutine per socket, readLoop (mediator.go), or
// overlapLoop (overlap.go) with Config.Overlap. A datagram then goes
// through these steps:
//
//  1. Read. ReadBatch (rawConn.read on Linux) waits for datagrams and
//     takes up to batchSize (64) of them with one recvmmsg, each into its
//     own packet slot of readSlot (1280) bytes: the datagram, its source,
//     the local address it reached (from PKTINFO) and whether it was
//     truncated.
//     processor.run (processor.go) then handles the batch in two halves,
//     prepare (steps 2 to 5, outside the store's commit lock) and apply
//     (steps 6 and 7).
//  2. Parse. processor.handle drops, without an answer, a truncated
//     datagram or one over stun.MaxDatagram (1200 bytes), one that
//     stun.Parse rejects, and anything but a Binding request. A request
//     without USERNAME never reaches the store: plainBinding (answers.go)
//     answers it with XOR-MAPPED-ADDRESS and FINGERPRINT, or unsignedError
//     with a 420 when it carries unknown comprehension-required attributes.
//  3. Authenticate. processor.authenticate (auth.go) reads the kind (p:
//     presence, h: host attempt, c: client attempt) and handle from the
//     USERNAME (stun.ParseUsername) and derives the capability
//     (deriveCapability): p: and c: from the handle alone through the
//     [engine.Keyring]; h: from the attempt's presence handle, which
//     [engine.Store.AttemptHost] (or [engine.HostResolver] on a store that
//     can fail to answer) reads, the only store call before the commit. It
//     computes the capability's HMAC pad states once (engine.HMAC.SetKey)
//     and checks MESSAGE-INTEGRITY-SHA256 with them in place
//     (stun.Message.CheckIntegrityWith). The same pad states sign every
//     answer to this datagram and are cleared when the batch ends. An h:
//     request whose lookup the store did not answer gets no answer at
//     all, so that the host retransmits instead of taking its attempt for
//     gone.
//  4. Rate limit unsigned answers. A request that fails authentication (bad
//     USERNAME, no or wrong integrity, a key that derives from nothing)
//     gets an unsigned 401 from unsignedError and unsignedAnswer
//     (answers.go), but only while rateLimiter.Allow (ratelimit.go) finds
//     a token in its source's bucket (an IPv4 address or an IPv6 /64;
//     Config.ErrorRate and Config.ErrorBurst); otherwise it is dropped.
//     The 420 of step 2 takes the same path. The limiter's memory is
//     fixed, and verified requests never consult it. Every unsigned answer
//     is also held to the request's length plus stun.MaxUnsignedGrowth
//     (processor.commit), so a spoofed source gains no amplification.
//  5. Build the store operation. For a verified request, processor.handle
//     answers unknown attributes with a signed 420 and an undecodable
//     address or a missing RDV-SEQUENCE with a signed 400; otherwise it
//     appends an [engine.Op]: OpPresence (RDV-SEQUENCE, the public source and
//     RDV-LOCAL-ADDRESS), OpBindAttempt (with RDV-RELAYED-ADDRESS when
//     present) or OpOutcome (an RDV-OUTCOME report). The op carries the
//     capability's fingerprint (engine.FingerprintOf), never the
//     capability itself.
//  6. Commit. processor.apply commits every op of the batch with one
//     [engine.Store.ApplyBatch] call (the in-memory store takes its commit
//     lock once, the Redis store makes one call). Ops run in order, and
//     each gets its own result.
//  7. Build the answers. processor.answer turns each result into the
//     answer, signed with the request's pad states
//     (stun.Builder.AddIntegrityWith) and held to stun.MaxSignedAnswer:
//     an error maps to its STUN code (errorFor, answers.go), except that a
//     host bind whose attempt went between step 3 and the commit gets the
//     unsigned 401 a request arriving after it gets (hostKeyGone). A
//     presence refresh gets presenceSuccess (presence.go: mapped address,
//     RDV-LIFETIME and up to four pending attempts). A bind gets
//     bindSuccess (bind.go) and, once both sides are bound, the INTRODUCE
//     to each side (processor.introduce, introduce.go) and, once both
//     relayed addresses are known, the RELAY-INTRODUCE to each side
//     (processor.relayIntroduce, relay_introduce.go), each signed with its
//     recipient's capability. An outcome report gets reportSuccess, which
//     also counts the tenant's punch outcome (punch_metrics.go). Answers
//     go into write slots of writeSlot (576) bytes, answersPerRequest
//     (5) per request, allocated once.
//  8. Send. Mediator.write (mediator.go) first sends one by one, from a
//     socket of the right address family, the answers this socket cannot
//     carry (divert: an INTRODUCE to a peer whose bind reached a socket of
//     the other family), then the rest with WriteBatch: sendmmsg, a
//     datagram the kernel refuses skipped and counted. On a wildcard
//     socket each answer carries a PKTINFO control message (fillWrite) so
//     that it leaves from the local address its request reached.
//     batchStats.flush
//     (metrics.go) updates the metrics once per batch, never per datagram.
//
// With Config.Overlap, meant for a store whose commit is a network round
// trip (Redis), overlapLoop keeps two batches in flight: a committer
// goroutine runs steps 6 to 8 for batch N while the reader runs steps 1 to
// 5 for batch N+1, which it tops up with non-blocking reads of what queued
// during N's commit (topUp, TryReadBatch, processor.prepareMore), up to
// overlapBatch (128) datagrams. Batches are committed and answered in the
// order they were read. With Config.CommitLinger, a batch of fewer than
// lingerBelow (16) datagrams waits, before its top-up, until that long
// after the previous hand-over (linger): at moderate rates a commit then
// carries what arrived meanwhile, not one datagram.
//
// # Datagrams nobody asked for
//
// When the HTTP API creates a join attempt (not on an idempotent replay)
// it calls [Mediator.Offer] (offer.go), which queues a push; pushLoop
// encodes the OFFER (encodePush, encodeOffer; push.go, offer.go), signed
// with the host's presence capability, and sends it with WriteTo from a
// socket of the host's address family (sendPush, connFor). The queue is
// bounded: a full queue drops the OFFER and counts it, and the host's next
// presence refresh names the attempt anyway.
//
// An attempt named by an OFFER or a presence answer is marked offered in
// the store by markLoop (offered.go), off the read path: queueMark never
// blocks.
//
// # Forwarding between instances
//
// With a [Forwarder] (the Redis store; Config.Forwarder), several instances
// share one store, and a datagram sent unasked must leave from the
// instance the recipient's NAT mapping points at: the one its presence
// refresh or bind reached. An OFFER, or an INTRODUCE or RELAY-INTRODUCE
// for the side that did not send the completing bind, whose recipient is
// mapped to another instance is queued for that instance instead of sent
// (Mediator.Offer, processor.forwarded in introduce.go,
// relayIntroduceSide). forwardLoop (forward.go) publishes it as a payload
// of handles and addresses (push.appendPayload, push.go) with
// [Forwarder.Forward]; the receiving instance's receiveForwards and
// deliverForward parse it and queue it for its own pushLoop, which derives
// the recipient's capability again from the shared keyring and sends it.
// No capability crosses the bus. Delivery is at most once: a lost OFFER is
// recovered by the next presence refresh, a lost INTRODUCE by the peer's
// bind retransmission.
package netio
