/* The STUN codec (RFC 8489) with the mediator's private attributes, as
 * docs/contracts/udp.md lays them out, plus the TURN attributes (RFC 8656)
 * the relay client needs. It mirrors the server's Go codec (netio/stun):
 * the same acceptance rules, the same bytes; testdata/golden.txt, written
 * from the Go codec, proves it. Caller memory only, no allocation. */
#ifndef RDV_STUN_H
#define RDV_STUN_H

#include "rendezvous.h"

#define RDV_STUN_COOKIE 0x2112A442u
#define RDV_STUN_HEADER 20
#define RDV_STUN_MAX_DATAGRAM 1200
#define RDV_STUN_MAX_ATTRS 24
#define RDV_STUN_MAX_UNKNOWN 8

/* Message types (method and class interleaved). */
enum {
    RDV_BINDING_REQUEST = 0x0001,
    RDV_BINDING_SUCCESS = 0x0101,
    RDV_BINDING_ERROR = 0x0111,
    RDV_OFFER_INDICATION = 0x02F1,
    RDV_INTRODUCE_INDICATION = 0x02F2,
    RDV_RELAY_INTRODUCE_INDICATION = 0x02F3,
};

enum {
    RDV_ATTR_MAPPED_ADDRESS = 0x0001,
    RDV_ATTR_USERNAME = 0x0006,
    RDV_ATTR_MESSAGE_INTEGRITY = 0x0008,
    RDV_ATTR_ERROR_CODE = 0x0009,
    RDV_ATTR_UNKNOWN_ATTRIBUTES = 0x000A,
    RDV_ATTR_CHANNEL_NUMBER = 0x000C,
    RDV_ATTR_LIFETIME = 0x000D,
    RDV_ATTR_XOR_PEER_ADDRESS = 0x0012,
    RDV_ATTR_DATA = 0x0013,
    RDV_ATTR_REALM = 0x0014,
    RDV_ATTR_NONCE = 0x0015,
    RDV_ATTR_XOR_RELAYED_ADDRESS = 0x0016,
    RDV_ATTR_REQUESTED_TRANSPORT = 0x0019,
    RDV_ATTR_INTEGRITY_SHA256 = 0x001C,
    RDV_ATTR_XOR_MAPPED_ADDRESS = 0x0020,
    RDV_ATTR_SOFTWARE = 0x8022,
    RDV_ATTR_FINGERPRINT = 0x8028,
    RDV_ATTR_SEQUENCE = 0xC001,
    RDV_ATTR_LOCAL_ADDRESS = 0xC002,
    RDV_ATTR_ATTEMPT = 0xC003,
    RDV_ATTR_RDV_LIFETIME = 0xC004,
    RDV_ATTR_PEER_LOCAL_ADDRESS = 0xC005,
    RDV_ATTR_RELAYED_ADDRESS = 0xC006,
    RDV_ATTR_OUTCOME = 0xC007,
    RDV_ATTR_RELAY_ONLY = 0xC008,
};

enum { RDV_KIND_PRESENCE = 'p', RDV_KIND_HOST = 'h', RDV_KIND_CLIENT = 'c' };
#define RDV_USERNAME_LEN 38

/* Builder: writes into buf; the first failure sticks in err and every later
 * add is a no-op. Attributes go in wire order; integrity, then FINGERPRINT,
 * last. */
typedef struct {
    uint8_t *buf;
    size_t cap, len;
    rdv_error err;
} rdv_stun_builder;

void rdv_sb_init(rdv_stun_builder *b, uint8_t *buf, size_t cap, uint16_t type, const uint8_t txid[12]);
void rdv_sb_bytes(rdv_stun_builder *b, uint16_t t, const void *v, size_t n);
void rdv_sb_username(rdv_stun_builder *b, char kind, const uint8_t handle[16]);
void rdv_sb_u64(rdv_stun_builder *b, uint16_t t, uint64_t v);
void rdv_sb_u32(rdv_stun_builder *b, uint16_t t, uint32_t v);
void rdv_sb_xor_addr(rdv_stun_builder *b, uint16_t t, const rdv_addr *a);
void rdv_sb_outcome(rdv_stun_builder *b, uint8_t path, uint32_t millis);
void rdv_sb_error_code(rdv_stun_builder *b, int code, const char *reason);
void rdv_sb_unknown(rdv_stun_builder *b, const uint16_t *types, size_t n);
void rdv_sb_integrity_sha256(rdv_stun_builder *b, const uint8_t *key, size_t klen);
void rdv_sb_integrity_sha1(rdv_stun_builder *b, const uint8_t *key, size_t klen);
void rdv_sb_fingerprint(rdv_stun_builder *b);

typedef struct {
    uint16_t type, off, len;
} rdv_stun_attr;

/* A parsed message; it points into the datagram, which must outlive it. */
typedef struct {
    const uint8_t *raw;
    size_t len;
    uint16_t type;
    uint8_t txid[12];
    rdv_stun_attr attrs[RDV_STUN_MAX_ATTRS];
    int nattrs;
    size_t integrity;      /* offset of MESSAGE-INTEGRITY-SHA256's header, 0: absent */
    size_t integrity_sha1; /* offset of MESSAGE-INTEGRITY's header, 0: absent */
    size_t fingerprint;    /* offset of FINGERPRINT's header, 0: absent */
    uint16_t unknown[RDV_STUN_MAX_UNKNOWN];
    int nunknown;
} rdv_stun_msg;

/* Parses with the server's rules (docs/contracts/udp.md, Acceptance). */
rdv_error rdv_stun_parse(const uint8_t *b, size_t n, rdv_stun_msg *m);
/* RDV_E_ABSENT when the attribute is not there. */
rdv_error rdv_stun_get(const rdv_stun_msg *m, uint16_t t, const uint8_t **v, size_t *n);
rdv_error rdv_stun_u64(const rdv_stun_msg *m, uint16_t t, uint64_t *v);
rdv_error rdv_stun_u32(const rdv_stun_msg *m, uint16_t t, uint32_t *v);
rdv_error rdv_stun_xor_addr(const rdv_stun_msg *m, uint16_t t, rdv_addr *a);
rdv_error rdv_stun_outcome(const rdv_stun_msg *m, uint8_t *path, uint32_t *millis);
rdv_error rdv_stun_error_code(const rdv_stun_msg *m, int *code, const uint8_t **reason, size_t *n);
/* The i-th RDV-ATTEMPT (presence answers name up to 4). */
int rdv_stun_attempts(const rdv_stun_msg *m, const uint8_t *out[4]);
/* Username "<kind>:<uuid>": kind and handle; RDV_E_BAD_HANDLE otherwise. */
rdv_error rdv_stun_username(const rdv_stun_msg *m, char *kind, uint8_t handle[16]);
/* Integrity, constant-time; RDV_E_BAD_INTEGRITY when absent or wrong. */
rdv_error rdv_stun_check_sha256(const rdv_stun_msg *m, const uint8_t *key, size_t klen);
rdv_error rdv_stun_check_sha1(const rdv_stun_msg *m, const uint8_t *key, size_t klen);

/* The transaction ID the mediator gives an indication (udp.md, INTRODUCE):
 * handle bytes 4-15, first byte XOR the kind, XOR 0x80 for RELAY-INTRODUCE. */
void rdv_indication_txid(char kind, const uint8_t handle[16], int relay, uint8_t out[12]);
/* The host's attempt capability: HMAC-SHA256(presence_cap, "rdv-attempt-host" || handle). */
void rdv_host_attempt_key(const uint8_t presence_cap[32], const uint8_t handle[16], uint8_t out[32]);

#endif
