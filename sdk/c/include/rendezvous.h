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
    RDV_E_TIMEOUT = 22,           /* the mediator never answered (every retransmission lost) */
    RDV_E_PUNCH_FAILED = 23,      /* no probe of ours was acknowledged in time */
    RDV_E_BUSY = 24,              /* a fixed table (attempts, queues) is full */
    RDV_E_STATE = 25,             /* not possible now (e.g. a second rdv_host_start) */
    RDV_E_REJECTED = 26,          /* the mediator or the relay answered an error */
    RDV_E_COUNT_ = 27             /* number of values; not an error */
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
/* The canonical text of a handle (36 characters and a NUL), for the calls
 * that name an attempt an event carried (rdv_relay_start, rdv_relay_decline). */
RDV_API rdv_error rdv_handle_format(const uint8_t h[16], char out[37]);
/* A capability as the REST API gives it: 43 characters of base64url. */
RDV_API rdv_error rdv_capability_parse(const char *s, uint8_t out[32]);

/* ---- The session context: presence, binds, introductions, the punch. ----
 *
 * One rdv_ctx per UDP socket. The game gives it one block of memory of
 * rdv_memory_size() bytes (no allocation afterwards), calls rdv_update
 * every tick with its clock in milliseconds, and pulls events and its own
 * datagrams. Either the library owns a socket (rdv_open) or the game moves
 * datagrams itself: rdv_feed for each one it received, rdv_poll_transmit
 * for each one to send. Not thread-safe: one thread (the game loop) per
 * context; separate contexts share nothing. */

typedef struct rdv_ctx rdv_ctx;

/* Options. size must be sizeof(rdv_config): it versions the struct. */
typedef struct rdv_config {
    uint32_t size;
    uint32_t punch_timeout_ms;  /* 0: 5000 */
    uint32_t punch_interval_ms; /* 0: 100 */
    uint32_t reserved;
    uint8_t seed[32];           /* all zero: 32 bytes from the OS at init */
} rdv_config;

/* What rdv_next_event returns. */
enum {
    RDV_EV_NONE = 0,
    RDV_EV_PRESENCE = 1,     /* a refresh was accepted; addr: our public endpoint */
    RDV_EV_REJECTED = 2,     /* the mediator answered an error; code: 400-508; handle: whose */
    RDV_EV_ATTEMPT = 3,      /* host: a joiner's attempt (OFFER or presence answer); handle */
    RDV_EV_INTRODUCED = 4,   /* handle was introduced; addr: the peer's public endpoint */
    RDV_EV_CONNECTED = 5,    /* the punch confirmed addr; path 1 direct; millis since the attempt began */
    RDV_EV_FAILED = 6,       /* the attempt gave up; code: the rdv_error */
    RDV_EV_REPORTED = 7,     /* the mediator acknowledged the outcome report */
    RDV_EV_RELAY_ONLY = 8,   /* host: handle is relay-only; fetch its relay credential, call rdv_relay_start */
    RDV_EV_RELAY_FALLBACK = 9 /* the direct punch failed (code RDV_E_PUNCH_FAILED); fetch this side's relay
                               * credential and call rdv_relay_start, or rdv_relay_decline, within the punch timeout */
};

/* 56 bytes, no padding. */
typedef struct rdv_event {
    uint32_t type;
    int32_t code;
    uint8_t handle[16];
    rdv_addr addr;
    uint32_t path;
    uint32_t millis;
    uint32_t reserved;
} rdv_event;

/* Counters of what fixed tables could not hold. */
typedef struct rdv_stats {
    uint32_t app_dropped;      /* game datagrams dropped: the receive queue was full */
    uint32_t tx_dropped;       /* datagrams dropped: the transmit queue was full */
    uint32_t events_dropped;   /* events dropped: the event queue was full */
    uint32_t stun_dropped;     /* mediator datagrams that failed parsing or integrity */
} rdv_stats;

RDV_API size_t rdv_memory_size(const rdv_config *cfg);
/* Lays the context out in mem (aligned to 8, at least rdv_memory_size
 * bytes); *out points into mem. cfg NULL takes every default. */
RDV_API rdv_error rdv_init(void *mem, size_t size, const rdv_config *cfg, rdv_ctx **out);
/* Closes the socket the library owns, if any. mem is the caller's again. */
RDV_API void rdv_close(rdv_ctx *ctx);

/* The library opens and owns a non-blocking UDP socket on local ("0.0.0.0:0"). */
RDV_API rdv_error rdv_open(rdv_ctx *ctx, const char *local);
/* The socket's local endpoint, sent to the mediator as RDV-LOCAL-ADDRESS. */
RDV_API rdv_error rdv_local_addr(rdv_ctx *ctx, rdv_addr *out);
/* For a game-owned socket: the endpoint it is bound to (its LAN address). */
RDV_API rdv_error rdv_set_local_addr(rdv_ctx *ctx, const char *local);

/* Host: keep the listing's presence, from the create-listing answer's
 * presence fields (mediator "ip:port", handle, token, interval_s). now_ms is
 * the clock rdv_update gets; the first refresh goes out on the next update. */
RDV_API rdv_error rdv_host_start(rdv_ctx *ctx, uint64_t now_ms, const char *mediator, const char *presence_handle,
                                 const char *presence_token, uint32_t interval_s);
/* Joiner: bind an attempt from the join answer (mediator, handle, token);
 * the bind goes out on the next update. */
RDV_API rdv_error rdv_join_start(rdv_ctx *ctx, uint64_t now_ms, const char *mediator, const char *attempt_handle,
                                 const char *attempt_token);

/* Relay: allocate on the TURN server ("ip:port" of the credential's URI)
 * with the relay credential (username, credential) for attempt handle,
 * bind with the relayed address, and punch through the relay once
 * RELAY-INTRODUCE names the peer's. For a relay-only attempt (the join
 * answer's relay_only, or RDV_EV_RELAY_ONLY on the host) and for the
 * fallback after a failed direct punch (RDV_EV_RELAY_FALLBACK): then the
 * allocation, the relayed bind and RELAY-INTRODUCE must come within one
 * punch timeout of the event, as the Go SDK bounds them. */
RDV_API rdv_error rdv_relay_start(rdv_ctx *ctx, uint64_t now_ms, const char *attempt_handle, const char *turn_server,
                                  const char *username, const char *credential);
/* No relay for attempt handle (the server answered 409 relay_unavailable,
 * 404, or the game uses none): after RDV_EV_RELAY_FALLBACK the attempt fails
 * now with RDV_E_PUNCH_FAILED (reported as failed), after RDV_EV_RELAY_ONLY
 * with RDV_E_REJECTED. Without either call the fallback gives up by itself
 * one punch timeout after its event. */
RDV_API rdv_error rdv_relay_decline(rdv_ctx *ctx, uint64_t now_ms, const char *attempt_handle);

/* Runs timers and (owned socket) reads and sends. Returns the time (ms, the
 * caller's clock) by which it wants to be called again. */
RDV_API uint64_t rdv_update(rdv_ctx *ctx, uint64_t now_ms);
/* Game-owned socket: one received datagram. */
RDV_API rdv_error rdv_feed(rdv_ctx *ctx, uint64_t now_ms, const void *data, size_t n, const rdv_addr *from);
/* Game-owned socket: the next datagram to send; RDV_E_WOULD_BLOCK: none. */
RDV_API rdv_error rdv_poll_transmit(rdv_ctx *ctx, void *buf, size_t cap, size_t *n, rdv_addr *to);

/* RDV_E_WOULD_BLOCK when there is none. */
RDV_API rdv_error rdv_next_event(rdv_ctx *ctx, rdv_event *ev);
/* The game's own datagrams on the same socket (after the punch). */
RDV_API rdv_error rdv_send(rdv_ctx *ctx, const void *data, size_t n, const rdv_addr *to);
/* RDV_E_WOULD_BLOCK when none is queued; RDV_E_TOO_LARGE leaves it queued. */
RDV_API rdv_error rdv_recv(rdv_ctx *ctx, void *buf, size_t cap, size_t *n, rdv_addr *from);
RDV_API void rdv_get_stats(const rdv_ctx *ctx, rdv_stats *out);

#ifdef __cplusplus
}
#endif

#endif
