/* librendezvous: the UDP side of the Rendezvous service for game engines
 * (C99). Every function is non-blocking, nothing here starts a thread or
 * keeps global state, and every failure is an rdv_error with a string.
 *
 * ABI rules (for P/Invoke and other foreign bindings): public structs use
 * fixed-width fields only (no bool, no bitfields, no pointers), their sizes
 * are checked by static asserts here and in the bindings. */
#ifndef RENDEZVOUS_H
#define RENDEZVOUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(RDV_SHARED_BUILD)
#define RDV_API __declspec(dllexport)
#elif defined(_WIN32) && defined(RDV_SHARED)
#define RDV_API __declspec(dllimport)
#elif defined(__GNUC__)
#define RDV_API __attribute__((visibility("default")))
#else
#define RDV_API
#endif

#define RDV_VERSION_MAJOR 0
#define RDV_VERSION_MINOR 1
#define RDV_VERSION_PATCH 0

/* Every outcome of a library call. Values are stable: bindings mirror them.
 * RDV_E_WOULD_BLOCK and RDV_E_TOO_LARGE are answers, not failures: nothing
 * to read now, or the caller's buffer cannot hold what there is. */
typedef enum rdv_error {
    RDV_OK = 0,
    RDV_E_INVALID_ARGUMENT = 1,   /* a NULL pointer, a size or value out of range */
    RDV_E_WOULD_BLOCK = 2,        /* nothing to read or send right now */
    RDV_E_TOO_LARGE = 3,          /* the caller's buffer is smaller than the datagram */
    RDV_E_BUFFER_FULL = 4,        /* an encoded message does not fit its buffer */
    RDV_E_TOO_SHORT = 5,          /* datagram shorter than a STUN header */
    RDV_E_TOO_LONG = 6,           /* datagram over 1,200 bytes */
    RDV_E_NOT_STUN = 7,           /* top type bits or magic cookie wrong */
    RDV_E_BAD_LENGTH = 8,         /* header length not a multiple of 4 or not the datagram's */
    RDV_E_ATTR_OVERRUN = 9,       /* an attribute runs past the message */
    RDV_E_BAD_ATTR_VALUE = 10,    /* an attribute's value has the wrong size or content */
    RDV_E_DUPLICATE_ATTR = 11,    /* a second USERNAME or integrity attribute */
    RDV_E_BAD_FINGERPRINT = 12,   /* FINGERPRINT does not match */
    RDV_E_ATTR_AFTER_FINGERPRINT = 13,
    RDV_E_TOO_MANY_ATTRS = 14,    /* more than 24 recognised attributes */
    RDV_E_BAD_INTEGRITY = 15,     /* MESSAGE-INTEGRITY(-SHA256) missing or wrong */
    RDV_E_ABSENT = 16,            /* the asked-for attribute is not in the message */
    RDV_E_BAD_HANDLE = 17,        /* not a lowercase canonical UUID */
    RDV_E_BAD_CAPABILITY = 18,    /* not 43 characters of unpadded base64url for 32 bytes */
    RDV_E_BAD_ADDRESS = 19,       /* not a numeric IPv4/IPv6 endpoint */
    RDV_E_SOCKET = 20,            /* the operating system refused a socket call */
    RDV_E_RANDOM = 21,            /* no randomness from the operating system */
    RDV_E_COUNT_ = 22             /* number of values; not an error */
} rdv_error;

/* A short English sentence for e; never NULL (unknown values get one too). */
RDV_API const char *rdv_strerror(rdv_error e);
/* The enum constant's name without the prefix, e.g. "WOULD_BLOCK". */
RDV_API const char *rdv_error_name(rdv_error e);

/* Packed version: major << 16 | minor << 8 | patch. */
RDV_API uint32_t rdv_version(void);

/* An IPv4 or IPv6 endpoint. family is RDV_AF_INET or RDV_AF_INET6; ip holds
 * 4 bytes (IPv4, the rest zero) or 16 bytes, network order. 20 bytes, no
 * padding: a C# struct with the same fields in the same order matches it. */
enum { RDV_AF_NONE = 0, RDV_AF_INET = 1, RDV_AF_INET6 = 2 };
typedef struct rdv_addr {
    uint8_t family;
    uint8_t reserved;
    uint16_t port;
    uint8_t ip[16];
} rdv_addr;

/* Parses "1.2.3.4:5" or "[::1]:5" (numeric only: no DNS inside). An
 * IPv4-mapped IPv6 address becomes IPv4, as the wire sends it. */
RDV_API rdv_error rdv_addr_parse(const char *s, rdv_addr *out);
/* Formats a into buf (at least 48 bytes for any endpoint). */
RDV_API rdv_error rdv_addr_format(const rdv_addr *a, char *buf, size_t cap);

/* A handle (presence, attempt): the 16 bytes of a lowercase canonical UUID. */
RDV_API rdv_error rdv_handle_parse(const char *s, uint8_t out[16]);
/* A capability as the REST API gives it: 43 characters of base64url. */
RDV_API rdv_error rdv_capability_parse(const char *s, uint8_t out[32]);

#ifdef __cplusplus
}
#endif

#endif
