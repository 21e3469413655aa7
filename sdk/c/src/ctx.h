/* The context's layout: fixed tables only, laid out in the caller's memory. */
#ifndef RDV_CTX_H
#define RDV_CTX_H

#include "rendezvous.h"
#include "stun.h"
#include "platform.h"
#include "turn.h"

#define RDV_MAX_SESSIONS 8   /* attempts one context follows at once */
#define RDV_MAX_CANDS 6      /* introduced endpoints plus peer-reflexive ones */
#define RDV_QUEUE 16         /* datagram queue slots (app receive, transmit) */
#define RDV_EVENTS 32
#define RDV_PROBE_SIZE 32

typedef struct {
    uint16_t n;
    rdv_addr addr;
    uint8_t b[RDV_STUN_MAX_DATAGRAM];
} rdv_slot;

typedef struct {
    rdv_slot s[RDV_QUEUE];
    uint32_t head, count;
} rdv_queue;

/* One outstanding request: retransmitted until answered or given up. */
typedef struct {
    uint8_t active;
    uint8_t txid[12];
    uint32_t tries;
    uint64_t next_ms;
    uint32_t rto_ms;
} rdv_request;

/* S_FALLBACK: the direct punch failed; the game has until fallback_until_ms
 * to hand over the relay credential (rdv_relay_start). */
enum { S_FREE = 0, S_BINDING, S_PUNCHING, S_CONNECTED, S_FAILED, S_FALLBACK };

typedef struct {
    uint8_t state;
    uint8_t role; /* 'h' or 'c' */
    uint8_t introduced;
    uint8_t handle[16];
    uint8_t key[32];
    uint8_t nonce[8];
    uint64_t started_ms;
    uint64_t punch_deadline_ms, next_probe_ms, linger_until_ms;
    uint64_t bind_deadline_ms;
    rdv_addr cands[RDV_MAX_CANDS];
    int ncands;
    rdv_addr peer;
    rdv_request bind;
    rdv_request report;
    uint8_t path;
    uint32_t millis;
    /* the relay (rdv_relay_start) */
    uint8_t relaying, relay_announced;
    uint8_t no_local;          /* relay-only from the first bind: the LAN address is never sent */
    uint64_t fallback_until_ms; /* S_FALLBACK: the relay fallback's whole window ends here */
    rdv_addr relay_peer; /* the peer's relayed address, from RELAY-INTRODUCE */
    rdv_turn turn;
} rdv_session;

struct rdv_ctx {
    uint32_t magic;
    uint32_t punch_timeout_ms, punch_interval_ms;
    intptr_t sock; /* RDV_BAD_SOCKET: the game moves datagrams */
    rdv_addr local;
    rdv_addr mediator;
    uint8_t seed[32];
    uint64_t counter;
    uint64_t now_ms;

    /* host presence */
    uint8_t hosting;
    uint8_t presence_handle[16];
    uint8_t presence_key[32];
    uint64_t sequence;
    uint32_t interval_ms;
    uint64_t next_refresh_ms;
    rdv_request refresh;

    rdv_session sessions[RDV_MAX_SESSIONS];
    rdv_event events[RDV_EVENTS];
    uint32_t ev_head, ev_count;
    rdv_queue app, tx;
    rdv_stats stats;
    uint8_t scratch[RDV_STUN_MAX_DATAGRAM];
    uint8_t rx[RDV_STUN_MAX_DATAGRAM + 4];
};

#endif
