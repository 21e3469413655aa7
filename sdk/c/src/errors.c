/* The error strings: const tables indexed by rdv_error. */
#include "rendezvous.h"

static const char *const names[RDV_E_COUNT_] = {
    "OK", "INVALID_ARGUMENT", "WOULD_BLOCK", "TOO_LARGE", "BUFFER_FULL",
    "TOO_SHORT", "TOO_LONG", "NOT_STUN", "BAD_LENGTH", "ATTR_OVERRUN",
    "BAD_ATTR_VALUE", "DUPLICATE_ATTR", "BAD_FINGERPRINT", "ATTR_AFTER_FINGERPRINT",
    "TOO_MANY_ATTRS", "BAD_INTEGRITY", "ABSENT", "BAD_HANDLE", "BAD_CAPABILITY",
    "BAD_ADDRESS", "SOCKET", "RANDOM", "TIMEOUT", "PUNCH_FAILED", "BUSY", "STATE", "REJECTED",
};

static const char *const texts[RDV_E_COUNT_] = {
    "success",
    "invalid argument",
    "nothing to do now (would block)",
    "the buffer is smaller than the datagram",
    "the message does not fit its buffer",
    "datagram shorter than a STUN header",
    "datagram longer than 1200 bytes",
    "not a STUN message (type bits or magic cookie)",
    "STUN length field wrong",
    "attribute runs past the end of the message",
    "attribute value malformed",
    "duplicate USERNAME or integrity attribute",
    "FINGERPRINT does not match",
    "attribute after FINGERPRINT",
    "too many attributes",
    "message integrity missing or wrong",
    "attribute absent",
    "handle is not a lowercase canonical UUID",
    "capability is not 43 characters of base64url",
    "not a numeric IPv4 or IPv6 endpoint",
    "socket call failed",
    "no randomness from the operating system",
    "the mediator did not answer",
    "hole punch failed: no probe was acknowledged in time",
    "a fixed table is full",
    "not possible in the current state",
    "the mediator or the relay answered an error",
};

typedef char rdv_names_complete[(sizeof names / sizeof names[0] == RDV_E_COUNT_) ? 1 : -1];

const char *rdv_strerror(rdv_error e) {
    if ((unsigned)e >= RDV_E_COUNT_) return "unknown error";
    return texts[e];
}

const char *rdv_error_name(rdv_error e) {
    if ((unsigned)e >= RDV_E_COUNT_) return "UNKNOWN";
    return names[e];
}

uint32_t rdv_version(void) {
    return (uint32_t)RDV_VERSION_MAJOR << 16 | RDV_VERSION_MINOR << 8 | RDV_VERSION_PATCH;
}
