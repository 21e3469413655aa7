package stun

// Header and size constants.
const (
	// MagicCookie is the fixed value of header bytes 4..7.
	MagicCookie uint32 = 0x2112A442
	// HeaderSize is the size of the STUN header.
	HeaderSize = 20
	// MaxDatagram is the largest datagram the service serves (docs/contracts/udp.md#acceptance).
	MaxDatagram = 1200
	// MaxSignedAnswer bounds every signed answer (docs/contracts/udp.md#answers-and-their-sizes).
	MaxSignedAnswer = 548
	// MaxUnsignedGrowth is how much larger than its request an answer to an
	// unverified request may be (docs/contracts/udp.md#answers-and-their-sizes).
	MaxUnsignedGrowth = 32
	// IntegritySize is the value size of MESSAGE-INTEGRITY-SHA256.
	IntegritySize = 32
	// fingerprintXOR is XORed into the CRC-32 of FINGERPRINT (RFC 8489 §14.7).
	fingerprintXOR uint32 = 0x5354554e
)

// Methods (12 bits).
const (
	MethodBinding   uint16 = 0x001
	MethodOffer     uint16 = 0x0F1 // private: mediator → host indication
	MethodIntroduce uint16 = 0x0F2 // private: mediator → peer indication
	// MethodRelayIntroduce is private: the mediator tells each side of an
	// attempt the other side's relayed address on its TURN server.
	MethodRelayIntroduce uint16 = 0x0F3
)

// Classes, as the bits they occupy in the message type.
const (
	ClassRequest    uint16 = 0x0000
	ClassIndication uint16 = 0x0010
	ClassSuccess    uint16 = 0x0100
	ClassError      uint16 = 0x0110
	classMask       uint16 = 0x0110
)

// MessageType combines a method and a class into the 14-bit message type.
func MessageType(method, class uint16) uint16 {
	return method&0x000F | (method&0x0070)<<1 | (method&0x0F80)<<2 | class&classMask
}

// Method extracts the method of a message type.
func Method(t uint16) uint16 { return t&0x000F | (t&0x00E0)>>1 | (t&0x3E00)>>2 }

// Class extracts the class bits of a message type.
func Class(t uint16) uint16 { return t & classMask }

// Message types used by the contract.
var (
	BindingRequest      = MessageType(MethodBinding, ClassRequest)
	BindingSuccess      = MessageType(MethodBinding, ClassSuccess)
	BindingError        = MessageType(MethodBinding, ClassError)
	OfferIndication     = MessageType(MethodOffer, ClassIndication)
	IntroduceIndication = MessageType(MethodIntroduce, ClassIndication)
	// RelayIntroduceIndication is 0x02F3.
	RelayIntroduceIndication = MessageType(MethodRelayIntroduce, ClassIndication)
)

// Attribute types.
const (
	AttrUsername          uint16 = 0x0006
	AttrMessageIntegrity  uint16 = 0x0008 // SHA-1 form: recognised, never verified
	AttrErrorCode         uint16 = 0x0009
	AttrUnknownAttributes uint16 = 0x000A
	AttrXORPeerAddress    uint16 = 0x0012
	AttrIntegritySHA256   uint16 = 0x001C
	AttrXORMappedAddress  uint16 = 0x0020
	AttrFingerprint       uint16 = 0x8028

	// Private, comprehension-optional (docs/contracts/udp.md#framing).
	AttrSequence         uint16 = 0xC001 // u64
	AttrLocalAddress     uint16 = 0xC002 // XOR-encoded endpoint
	AttrAttempt          uint16 = 0xC003 // 16 raw handle bytes
	AttrLifetime         uint16 = 0xC004 // u32 seconds
	AttrPeerLocalAddress uint16 = 0xC005 // XOR-encoded endpoint
	AttrRelayedAddress   uint16 = 0xC006 // XOR-encoded endpoint: the sender's address on its TURN relay
	AttrOutcome          uint16 = 0xC007 // 8 bytes: path, 3 zero bytes, u32 milliseconds
	AttrRelayOnly        uint16 = 0xC008 // empty: the attempt is relay-only (in a bind's success answer)
)

// Paths an RDV-OUTCOME reports: how a side's connection to its peer ended.
const (
	PathDirect  byte = 1 // connected straight to the peer
	PathRelayed byte = 2 // connected through a TURN relay
	PathFailed  byte = 3 // gave up
)

// OutcomeSize is the value size of RDV-OUTCOME.
const OutcomeSize = 8

// ComprehensionRequired reports whether an attribute type is in the
// comprehension-required range 0x0000-0x7FFF.
func ComprehensionRequired(t uint16) bool { return t < 0x8000 }

// Error codes used on the wire (docs/contracts/semantics.md#outcomes,
// docs/contracts/udp.md#answers-and-their-sizes).
const (
	CodeBadRequest       = 400
	CodeUnauthorized     = 401
	CodeForbidden        = 403
	CodeNotFound         = 404
	CodeConflict         = 409
	CodeUnknownAttribute = 420
	// CodePeerRefused: an RDV-RELAYED-ADDRESS the mediator will not
	// introduce (not a public unicast address, or its own).
	CodePeerRefused        = 449
	CodeServerError        = 500
	CodeServiceUnavailable = 503
	CodeInsufficientCap    = 508
)

// Username kinds (docs/contracts/udp.md#authentication).
const (
	KindPresence      byte = 'p'
	KindAttemptHost   byte = 'h'
	KindAttemptClient byte = 'c'
)
