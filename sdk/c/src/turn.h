/* A TURN client (RFC 8656) over UDP for the relay: Allocate with the
 * long-term credential the server grants (401 then retry with REALM and
 * NONCE; 438 retried once with the new nonce), CreatePermission,
 * ChannelBind, timed Refresh of the allocation, permissions and channels,
 * and ChannelData (Send/Data indications before a channel is bound).
 * Caller memory only; one request outstanding at a time; datagrams to the
 * TURN server come out of rdv_turn_poll, the server's go into
 * rdv_turn_feed; rdv_ctx drives one per relaying attempt. */
#ifndef RDV_TURN_H
#define RDV_TURN_H

#include "stun.h"

#define RDV_TURN_PEERS 4
#define RDV_TURN_TEXT 128

enum { RDV_TURN_IDLE = 0, RDV_TURN_ALLOCATING, RDV_TURN_ALLOCATED, RDV_TURN_FAILED };

typedef struct {
    rdv_addr addr;
    uint16_t channel;        /* 0: no channel asked for */
    uint8_t permitted, bound;
    uint64_t perm_refresh_ms, chan_refresh_ms;
} rdv_turn_peer;

typedef struct {
    uint8_t state;
    rdv_error error;         /* why FAILED */
    int last_code;           /* the last ERROR-CODE the server answered */
    rdv_addr server, relayed, mapped;
    char username[RDV_TURN_TEXT], password[RDV_TURN_TEXT], realm[RDV_TURN_TEXT], nonce[RDV_TURN_TEXT];
    size_t username_len, password_len, realm_len, nonce_len;
    uint8_t key[16];         /* MD5(username:realm:password) */
    uint8_t have_key;
    uint32_t lifetime_s;
    uint64_t alloc_refresh_ms;
    /* the one outstanding request */
    uint16_t req_method;     /* 0: none */
    int req_peer;            /* index into peers, or -1 */
    uint8_t req_tx[12];
    uint32_t req_tries, req_stale_retried;
    uint64_t req_next_ms;
    uint8_t req_send_now;
    rdv_turn_peer peers[RDV_TURN_PEERS];
    uint64_t counter;
    uint8_t seed[32];
} rdv_turn;

/* server "ip:port", the relay credential (username, credential), a seed for
 * transaction IDs. Allocation starts on the next poll. */
rdv_error rdv_turn_init(rdv_turn *t, const char *server, const char *username, const char *password,
                        const uint8_t seed[32]);
/* Ask for a permission and a channel to peer (both refreshed on time). */
rdv_error rdv_turn_add_peer(rdv_turn *t, const rdv_addr *peer);
/* The next datagram for the TURN server (0: none now); *next_ms when to poll again. */
size_t rdv_turn_poll(rdv_turn *t, uint64_t now_ms, uint8_t *out, size_t cap, uint64_t *next_ms);
/* A datagram from the TURN server. When it carries a peer's data, *data,
 * *n and *peer describe it (pointing into the datagram) and 1 is returned. */
int rdv_turn_feed(rdv_turn *t, uint64_t now_ms, const uint8_t *b, size_t n, const uint8_t **data, size_t *dn,
                  rdv_addr *peer);
/* Wraps payload for peer: ChannelData once the channel is bound, a Send
 * indication before. Returns the datagram's length (0: no such peer or too big). */
size_t rdv_turn_wrap(rdv_turn *t, const rdv_addr *peer, const void *payload, size_t n, uint8_t *out, size_t cap);

#endif
