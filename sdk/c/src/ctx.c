/* The session engine: presence, binds, introductions, the punch and the
 * outcome reports, driven by rdv_update and the datagrams fed in. Timers
 * are absolute times on the caller's clock; nothing here blocks. */
#include "ctx.h"
#include "crypto.h"
#include <string.h>

#define CTX_MAGIC 0x52445643u /* "RDVC" */
#define PRESENCE_RTO_MS 500
#define PRESENCE_TRIES 4
#define BIND_RTO_MS 250
#define BIND_RTO_MAX_MS 2000
#define BIND_GIVE_UP_MS 30000
#define REPORT_TRIES 5

static const uint8_t probe_magic[4] = {'R', 'D', 'V', 'P'};

size_t rdv_memory_size(const rdv_config *cfg) {
    (void)cfg;
    return sizeof(struct rdv_ctx);
}

rdv_error rdv_init(void *mem, size_t size, const rdv_config *cfg, rdv_ctx **out) {
    rdv_ctx *c = (rdv_ctx *)mem;
    static const uint8_t zero[32];
    if (!mem || !out || ((uintptr_t)mem & 7) != 0) return RDV_E_INVALID_ARGUMENT;
    if (size < sizeof *c) return RDV_E_BUFFER_FULL;
    if (cfg && cfg->size != sizeof(rdv_config)) return RDV_E_INVALID_ARGUMENT;
    memset(c, 0, sizeof *c);
    c->magic = CTX_MAGIC;
    c->sock = RDV_BAD_SOCKET;
    c->punch_timeout_ms = cfg && cfg->punch_timeout_ms ? cfg->punch_timeout_ms : 5000;
    c->punch_interval_ms = cfg && cfg->punch_interval_ms ? cfg->punch_interval_ms : 100;
    if (cfg && memcmp(cfg->seed, zero, 32) != 0) {
        memcpy(c->seed, cfg->seed, 32);
    } else {
        rdv_error e = rdv_plat_random(c->seed, sizeof c->seed);
        if (e != RDV_OK) return e;
    }
    *out = c;
    return RDV_OK;
}

void rdv_close(rdv_ctx *c) {
    if (!c || c->magic != CTX_MAGIC) return;
    rdv_plat_close(c->sock);
    c->sock = RDV_BAD_SOCKET;
    c->magic = 0;
}

/* random fills out from the seeded generator: HMAC-SHA256(seed, counter).
 * Unpredictable without the seed, and no system call after init. */
static void random_bytes(rdv_ctx *c, uint8_t *out, size_t n) {
    uint8_t block[32], ctr[8];
    int i;
    while (n) {
        size_t k = n < 32 ? n : 32;
        for (i = 0; i < 8; i++) ctr[i] = (uint8_t)(c->counter >> (56 - 8 * i));
        c->counter++;
        rdv_hmac_sha256(c->seed, 32, ctr, 8, block);
        memcpy(out, block, k);
        out += k;
        n -= k;
    }
}

static void push_event(rdv_ctx *c, uint32_t type, int32_t code, const uint8_t *handle, const rdv_addr *a) {
    rdv_event *ev;
    if (c->ev_count == RDV_EVENTS) { c->stats.events_dropped++; return; }
    ev = &c->events[(c->ev_head + c->ev_count) % RDV_EVENTS];
    memset(ev, 0, sizeof *ev);
    ev->type = type;
    ev->code = code;
    if (handle) memcpy(ev->handle, handle, 16);
    if (a) ev->addr = *a;
    c->ev_count++;
}

static int queue_push(rdv_queue *q, const void *b, size_t n, const rdv_addr *a) {
    rdv_slot *s;
    if (q->count == RDV_QUEUE || n > RDV_STUN_MAX_DATAGRAM) return 0;
    s = &q->s[(q->head + q->count) % RDV_QUEUE];
    s->n = (uint16_t)n;
    s->addr = *a;
    memcpy(s->b, b, n);
    q->count++;
    return 1;
}

static rdv_error queue_pop(rdv_queue *q, void *buf, size_t cap, size_t *n, rdv_addr *a) {
    rdv_slot *s;
    if (!q->count) return RDV_E_WOULD_BLOCK;
    s = &q->s[q->head];
    if (n) *n = s->n;
    if (a) *a = s->addr;
    if (cap < s->n) return RDV_E_TOO_LARGE;
    memcpy(buf, s->b, s->n);
    q->head = (q->head + 1) % RDV_QUEUE;
    q->count--;
    return RDV_OK;
}

/* transmit sends now on an owned socket, or queues for rdv_poll_transmit. */
static void transmit(rdv_ctx *c, const void *b, size_t n, const rdv_addr *to) {
    if (c->sock != RDV_BAD_SOCKET) {
        /* A lost send is a lost datagram: every request retransmits. */
        (void)rdv_plat_send(c->sock, b, n, to);
        return;
    }
    if (!queue_push(&c->tx, b, n, to)) c->stats.tx_dropped++;
}

static int addr_eq(const rdv_addr *a, const rdv_addr *b) {
    return a->family == b->family && a->port == b->port &&
           memcmp(a->ip, b->ip, a->family == RDV_AF_INET ? 4 : 16) == 0;
}

/* ---- requests to the mediator ---- */

static void send_refresh(rdv_ctx *c) {
    rdv_stun_builder b;
    rdv_sb_init(&b, c->scratch, sizeof c->scratch, RDV_BINDING_REQUEST, c->refresh.txid);
    rdv_sb_username(&b, 'p', c->presence_handle);
    rdv_sb_u64(&b, RDV_ATTR_SEQUENCE, c->sequence);
    if (c->local.family && !(c->local.family == RDV_AF_INET && !c->local.ip[0] && !c->local.ip[1] &&
                              !c->local.ip[2] && !c->local.ip[3]))
        rdv_sb_xor_addr(&b, RDV_ATTR_LOCAL_ADDRESS, &c->local);
    rdv_sb_integrity_sha256(&b, c->presence_key, 32);
    rdv_sb_fingerprint(&b);
    if (b.err == RDV_OK) transmit(c, c->scratch, b.len, &c->mediator);
}

static int local_usable(const rdv_addr *a) {
    static const uint8_t zero[16];
    return a->family && memcmp(a->ip, zero, a->family == RDV_AF_INET ? 4 : 16) != 0;
}

static void send_bind(rdv_ctx *c, rdv_session *s) {
    rdv_stun_builder b;
    rdv_sb_init(&b, c->scratch, sizeof c->scratch, RDV_BINDING_REQUEST, s->bind.txid);
    rdv_sb_username(&b, (char)s->role, s->handle);
    /* A fallback's bind repeats the LAN address: the mediator takes only the
     * identical endpoint again. */
    if (!s->no_local && local_usable(&c->local)) rdv_sb_xor_addr(&b, RDV_ATTR_LOCAL_ADDRESS, &c->local);
    if (s->relaying && s->turn.state == RDV_TURN_ALLOCATED) rdv_sb_xor_addr(&b, RDV_ATTR_RELAYED_ADDRESS, &s->turn.relayed);
    rdv_sb_integrity_sha256(&b, s->key, 32);
    rdv_sb_fingerprint(&b);
    if (b.err == RDV_OK) transmit(c, c->scratch, b.len, &c->mediator);
}

/* to_peer sends to a peer: through the session's relay when to is the
 * peer's relayed address, straight otherwise. */
static rdv_session *relay_session_for(rdv_ctx *c, const rdv_addr *to);
static void to_peer(rdv_ctx *c, const void *b, size_t n, const rdv_addr *to) {
    rdv_session *s = relay_session_for(c, to);
    if (s) {
        uint8_t out[RDV_STUN_MAX_DATAGRAM + 40];
        size_t k = rdv_turn_wrap(&s->turn, to, b, n, out, sizeof out);
        if (k) transmit(c, out, k, &s->turn.server);
        return;
    }
    transmit(c, b, n, to);
}

static void send_report(rdv_ctx *c, rdv_session *s) {
    rdv_stun_builder b;
    rdv_sb_init(&b, c->scratch, sizeof c->scratch, RDV_BINDING_REQUEST, s->report.txid);
    rdv_sb_username(&b, (char)s->role, s->handle);
    rdv_sb_outcome(&b, s->path, s->millis);
    rdv_sb_integrity_sha256(&b, s->key, 32);
    rdv_sb_fingerprint(&b);
    if (b.err == RDV_OK) transmit(c, c->scratch, b.len, &c->mediator);
}

static void start_request(rdv_ctx *c, rdv_request *r, uint32_t rto) {
    r->active = 1;
    r->tries = 1;
    r->rto_ms = rto;
    r->next_ms = c->now_ms + rto;
    random_bytes(c, r->txid, 12);
}

static void send_probe(rdv_ctx *c, rdv_session *s, uint8_t type, const uint8_t nonce[8], const rdv_addr *to) {
    uint8_t p[RDV_PROBE_SIZE];
    memcpy(p, probe_magic, 4);
    p[4] = type;
    p[5] = s->role;
    p[6] = p[7] = 0;
    memcpy(p + 8, s->handle, 16);
    memcpy(p + 24, nonce, 8);
    to_peer(c, p, sizeof p, to);
}

static int addr_eq(const rdv_addr *a, const rdv_addr *b);
static rdv_session *relay_session_for(rdv_ctx *c, const rdv_addr *to) {
    int i;
    for (i = 0; i < RDV_MAX_SESSIONS; i++) {
        rdv_session *s = &c->sessions[i];
        if (s->state != S_FREE && s->relaying && s->relay_peer.family && addr_eq(&s->relay_peer, to)) return s;
    }
    return NULL;
}

/* ---- sessions ---- */

static rdv_session *find_session(rdv_ctx *c, const uint8_t handle[16]) {
    int i;
    for (i = 0; i < RDV_MAX_SESSIONS; i++)
        if (c->sessions[i].state != S_FREE && memcmp(c->sessions[i].handle, handle, 16) == 0) return &c->sessions[i];
    return NULL;
}

/* reusable: an attempt that ended and needs its slot no more: failed, or
 * connected directly and done answering the peer's probes, with its outcome
 * report settled. A relayed one keeps its slot: its allocation carries the
 * game's datagrams. */
static int reusable(const rdv_ctx *c, const rdv_session *s) {
    if (s->report.active) return 0;
    return s->state == S_FREE || s->state == S_FAILED ||
           (s->state == S_CONNECTED && !s->relaying && c->now_ms > s->linger_until_ms);
}

static rdv_session *new_session(rdv_ctx *c, uint8_t role, const uint8_t handle[16], const uint8_t key[32]) {
    int i, pass;
    rdv_session *s = find_session(c, handle);
    if (s) return s;
    for (pass = 0; pass < 2; pass++) /* a free slot first, then one an ended attempt left */
    for (i = 0; i < RDV_MAX_SESSIONS; i++) {
        s = &c->sessions[i];
        if (pass == 0 ? s->state != S_FREE : !reusable(c, s)) continue;
        memset(s, 0, sizeof *s);
        s->state = S_BINDING;
        s->role = role;
        memcpy(s->handle, handle, 16);
        memcpy(s->key, key, 32);
        random_bytes(c, s->nonce, 8);
        s->started_ms = c->now_ms;
        s->bind_deadline_ms = c->now_ms + BIND_GIVE_UP_MS;
        start_request(c, &s->bind, BIND_RTO_MS / 2);
        s->bind.tries = 0;
        s->bind.next_ms = c->now_ms; /* the first bind goes out on this or the next update */
        return s;
    }
    return NULL;
}

static void finish(rdv_ctx *c, rdv_session *s, uint8_t path, rdv_error why) {
    s->path = path;
    s->millis = (uint32_t)(c->now_ms - s->started_ms);
    s->bind.active = 0;
    if (path == 3) {
        s->state = S_FAILED;
        push_event(c, RDV_EV_FAILED, why, s->handle, NULL);
    } else {
        s->state = S_CONNECTED;
        s->linger_until_ms = c->now_ms + 2 * (uint64_t)c->punch_timeout_ms;
        push_event(c, RDV_EV_CONNECTED, 0, s->handle, &s->peer);
        c->events[(c->ev_head + c->ev_count - 1) % RDV_EVENTS].path = path;
        c->events[(c->ev_head + c->ev_count - 1) % RDV_EVENTS].millis = s->millis;
    }
    /* Only a side that was introduced ran a punch worth reporting. */
    if (s->introduced) {
        start_request(c, &s->report, PRESENCE_RTO_MS);
        send_report(c, s);
    }
}

static void add_cand(rdv_session *s, const rdv_addr *a) {
    int i;
    for (i = 0; i < s->ncands; i++)
        if (addr_eq(&s->cands[i], a)) return;
    if (s->ncands < RDV_MAX_CANDS) s->cands[s->ncands++] = *a;
}

static void introduced(rdv_ctx *c, rdv_session *s, const rdv_stun_msg *m) {
    rdv_addr peer, local;
    if (rdv_stun_xor_addr(m, RDV_ATTR_XOR_PEER_ADDRESS, &peer) != RDV_OK) return;
    if (s->state != S_BINDING || s->relaying) return; /* a re-sent INTRODUCE: nothing new */
    s->introduced = 1;
    s->bind.active = 0;
    add_cand(s, &peer);
    if (rdv_stun_xor_addr(m, RDV_ATTR_PEER_LOCAL_ADDRESS, &local) == RDV_OK) add_cand(s, &local);
    push_event(c, RDV_EV_INTRODUCED, 0, s->handle, &peer);
    s->state = S_PUNCHING;
    s->punch_deadline_ms = c->now_ms + c->punch_timeout_ms;
    s->next_probe_ms = c->now_ms; /* probe on this update */
}

/* ---- receive ---- */

static void on_answer(rdv_ctx *c, const rdv_stun_msg *m) {
    int i, code = 0;
    const uint8_t *reason;
    size_t rn;
    int is_error = m->type == RDV_BINDING_ERROR;
    if (is_error && rdv_stun_error_code(m, &code, &reason, &rn) != RDV_OK) return;
    if (c->refresh.active && memcmp(m->txid, c->refresh.txid, 12) == 0) {
        /* Unsigned answers (401) cannot be verified; signed ones must be. */
        if (m->integrity && rdv_stun_check_sha256(m, c->presence_key, 32) != RDV_OK) { c->stats.stun_dropped++; return; }
        if (!m->integrity && !is_error) { c->stats.stun_dropped++; return; }
        c->refresh.active = 0;
        if (is_error) {
            push_event(c, RDV_EV_REJECTED, code, c->presence_handle, NULL);
        } else {
            rdv_addr mapped;
            uint32_t life;
            const uint8_t *att[4];
            int n = rdv_stun_attempts(m, att), k;
            memset(&mapped, 0, sizeof mapped);
            (void)rdv_stun_xor_addr(m, RDV_ATTR_XOR_MAPPED_ADDRESS, &mapped);
            if (rdv_stun_u32(m, RDV_ATTR_RDV_LIFETIME, &life) == RDV_OK && life) {
                /* refresh at min(interval, lifetime/3) * 0.9, as the Go SDK does */
                uint64_t third = (uint64_t)life * 1000 / 3;
                uint64_t every = c->interval_ms < third ? c->interval_ms : third;
                c->next_refresh_ms = c->now_ms + (every * 9 / 10 > 100 ? every * 9 / 10 : 100);
            }
            push_event(c, RDV_EV_PRESENCE, 0, c->presence_handle, &mapped);
            for (k = 0; k < n; k++) {
                uint8_t key[32];
                if (find_session(c, att[k])) continue;
                rdv_host_attempt_key(c->presence_key, att[k], key);
                if (new_session(c, 'h', att[k], key)) push_event(c, RDV_EV_ATTEMPT, 0, att[k], NULL);
            }
        }
        return;
    }
    for (i = 0; i < RDV_MAX_SESSIONS; i++) {
        rdv_session *s = &c->sessions[i];
        rdv_request *r = NULL;
        if (s->state == S_FREE) continue;
        if (s->bind.active && memcmp(m->txid, s->bind.txid, 12) == 0) r = &s->bind;
        else if (s->report.active && memcmp(m->txid, s->report.txid, 12) == 0) r = &s->report;
        if (!r) continue;
        if (m->integrity && rdv_stun_check_sha256(m, s->key, 32) != RDV_OK) { c->stats.stun_dropped++; return; }
        if (!m->integrity && !is_error) { c->stats.stun_dropped++; return; }
        if (r == &s->report) {
            r->active = 0;
            if (is_error) push_event(c, RDV_EV_REJECTED, code, s->handle, NULL);
            else push_event(c, RDV_EV_REPORTED, 0, s->handle, NULL);
        } else if (is_error) {
            r->active = 0;
            push_event(c, RDV_EV_REJECTED, code, s->handle, NULL);
            finish(c, s, 3, RDV_E_REJECTED);
        } else if (!s->relaying && !s->relay_announced && s->role == 'h' && rdv_stun_get(m, RDV_ATTR_RELAY_ONLY, &reason, &rn) == RDV_OK) {
            s->relay_announced = 1; /* no INTRODUCE will come: the game fetches the relay credential */
            push_event(c, RDV_EV_RELAY_ONLY, 0, s->handle, NULL);
        }
        /* A bind's success: keep retransmitting (the mediator re-sends
         * INTRODUCE to an identical bind) until INTRODUCE arrives. */
        return;
    }
}

static void on_stun(rdv_ctx *c, const uint8_t *b, size_t n) {
    rdv_stun_msg m;
    char kind;
    uint8_t h[16], tx[12];
    if (rdv_stun_parse(b, n, &m) != RDV_OK) { c->stats.stun_dropped++; return; }
    switch (m.type) {
    case RDV_BINDING_SUCCESS:
    case RDV_BINDING_ERROR:
        on_answer(c, &m);
        return;
    case RDV_OFFER_INDICATION: {
        const uint8_t *att[4];
        uint8_t key[32];
        if (!c->hosting || rdv_stun_username(&m, &kind, h) != RDV_OK || kind != 'p' ||
            memcmp(h, c->presence_handle, 16) != 0 || rdv_stun_check_sha256(&m, c->presence_key, 32) != RDV_OK ||
            rdv_stun_attempts(&m, att) != 1) {
            c->stats.stun_dropped++;
            return;
        }
        if (find_session(c, att[0])) return; /* a re-sent OFFER */
        rdv_host_attempt_key(c->presence_key, att[0], key);
        if (new_session(c, 'h', att[0], key)) push_event(c, RDV_EV_ATTEMPT, 0, att[0], NULL);
        return;
    }
    case RDV_INTRODUCE_INDICATION: {
        rdv_session *s;
        if (rdv_stun_username(&m, &kind, h) != RDV_OK || !(s = find_session(c, h)) || kind != (char)s->role ||
            rdv_stun_check_sha256(&m, s->key, 32) != RDV_OK) {
            c->stats.stun_dropped++;
            return;
        }
        rdv_indication_txid(kind, h, 0, tx);
        if (memcmp(tx, m.txid, 12) != 0) { c->stats.stun_dropped++; return; }
        introduced(c, s, &m);
        return;
    }
    case RDV_RELAY_INTRODUCE_INDICATION: {
        rdv_session *s;
        rdv_addr peer;
        if (rdv_stun_username(&m, &kind, h) != RDV_OK || !(s = find_session(c, h)) || kind != (char)s->role ||
            rdv_stun_check_sha256(&m, s->key, 32) != RDV_OK) {
            c->stats.stun_dropped++;
            return;
        }
        rdv_indication_txid(kind, h, 1, tx);
        if (memcmp(tx, m.txid, 12) != 0 || rdv_stun_xor_addr(&m, RDV_ATTR_XOR_PEER_ADDRESS, &peer) != RDV_OK) {
            c->stats.stun_dropped++;
            return;
        }
        if (!s->relaying || s->state != S_BINDING) return; /* a re-sent one, or no relay of ours */
        s->relay_peer = peer;
        if (rdv_turn_add_peer(&s->turn, &peer) != RDV_OK) return;
        s->introduced = 1;
        s->bind.active = 0;
        s->ncands = 0;
        add_cand(s, &peer);
        push_event(c, RDV_EV_INTRODUCED, 0, s->handle, &peer);
        s->state = S_PUNCHING;
        s->punch_deadline_ms = c->now_ms + c->punch_timeout_ms;
        s->next_probe_ms = c->now_ms;
        return;
    }
    default:
        return;
    }
}

static void on_probe(rdv_ctx *c, const uint8_t *b, const rdv_addr *from) {
    rdv_session *s = find_session(c, b + 8);
    if (!s || b[5] == s->role || (s->state != S_PUNCHING && s->state != S_CONNECTED)) return;
    if (s->state == S_CONNECTED && c->now_ms > s->linger_until_ms) return;
    if (b[4] == 1) {
        send_probe(c, s, 2, b + 24, from); /* ack, echoing the prober's nonce */
        if (s->state == S_PUNCHING && s->ncands < RDV_MAX_CANDS) {
            int before = s->ncands;
            add_cand(s, from); /* peer-reflexive: probe it right away */
            if (s->ncands != before) send_probe(c, s, 1, s->nonce, from);
        }
    } else if (b[4] == 2 && s->state == S_PUNCHING && rdv_ct_equal(b + 24, s->nonce, 8)) {
        s->peer = *from;
        finish(c, s, s->relaying ? 2 : 1, RDV_OK);
    }
}

rdv_error rdv_feed(rdv_ctx *c, uint64_t now_ms, const void *data, size_t n, const rdv_addr *from) {
    const uint8_t *b = (const uint8_t *)data;
    if (!c || c->magic != CTX_MAGIC || (!data && n) || !from) return RDV_E_INVALID_ARGUMENT;
    if (now_ms > c->now_ms) c->now_ms = now_ms;
    /* Demultiplex as the Go Socket does: punch probes, STUN from the
     * mediator, and everything else is the game's. */
    {
        int i;
        for (i = 0; i < RDV_MAX_SESSIONS; i++) {
            rdv_session *s = &c->sessions[i];
            const uint8_t *d;
            size_t dn;
            rdv_addr peer;
            uint8_t was;
            if (s->state == S_FREE || !s->relaying || !addr_eq(from, &s->turn.server)) continue;
            was = s->turn.state;
            if (rdv_turn_feed(&s->turn, c->now_ms, b, n, &d, &dn, &peer)) {
                /* the peer's datagram through the relay: a probe, or the game's */
                if (dn == RDV_PROBE_SIZE && memcmp(d, probe_magic, 4) == 0) on_probe(c, d, &peer);
                else if (!queue_push(&c->app, d, dn, &peer)) c->stats.app_dropped++;
            }
            if (was != RDV_TURN_ALLOCATED && s->turn.state == RDV_TURN_ALLOCATED && s->state == S_BINDING) {
                s->bind.next_ms = c->now_ms; /* bind on the next update, now with the relayed address */
                s->bind.rto_ms = BIND_RTO_MS / 2;
            }
            return RDV_OK;
        }
    }
    if (n == RDV_PROBE_SIZE && memcmp(b, probe_magic, 4) == 0) {
        on_probe(c, b, from);
    } else if (c->mediator.family && addr_eq(from, &c->mediator) && n >= RDV_STUN_HEADER && (b[0] & 0xC0) == 0) {
        on_stun(c, b, n);
    } else if (!queue_push(&c->app, b, n, from)) {
        c->stats.app_dropped++;
    }
    return RDV_OK;
}

/* ---- timers ---- */

static uint64_t earliest(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t run_timers(rdv_ctx *c) {
    uint64_t now = c->now_ms, next = now + 1000;
    int i;
    if (c->hosting) {
        if (c->refresh.active && now >= c->refresh.next_ms) {
            if (c->refresh.tries >= PRESENCE_TRIES) {
                c->refresh.active = 0;
                push_event(c, RDV_EV_FAILED, RDV_E_TIMEOUT, c->presence_handle, NULL);
                c->next_refresh_ms = now; /* a new round at once */
            } else {
                c->refresh.tries++;
                c->refresh.rto_ms *= 2;
                c->refresh.next_ms = now + c->refresh.rto_ms;
                send_refresh(c);
            }
        }
        if (!c->refresh.active && now >= c->next_refresh_ms) {
            c->sequence++;
            start_request(c, &c->refresh, PRESENCE_RTO_MS);
            c->next_refresh_ms = now + c->interval_ms;
            send_refresh(c);
        }
        next = earliest(next, c->refresh.active ? c->refresh.next_ms : c->next_refresh_ms);
    }
    for (i = 0; i < RDV_MAX_SESSIONS; i++) {
        rdv_session *s = &c->sessions[i];
        /* A failed attempt's allocation is left to expire: no more refreshes. */
        if (s->state != S_FREE && s->state != S_FAILED && s->relaying) {
            uint8_t out[RDV_STUN_MAX_DATAGRAM];
            uint64_t tnext;
            size_t k;
            while ((k = rdv_turn_poll(&s->turn, now, out, sizeof out, &tnext)) > 0) transmit(c, out, k, &s->turn.server);
            if (s->turn.state == RDV_TURN_FAILED && s->state == S_BINDING) finish(c, s, 3, s->turn.error);
            next = earliest(next, tnext);
        }
        if (s->state == S_BINDING) {
            /* A relaying side binds only with its relayed address: a bind
             * without one would only have INTRODUCE sent again. */
            int waiting = s->relaying && s->turn.state != RDV_TURN_ALLOCATED;
            if (now >= s->bind_deadline_ms) {
                finish(c, s, 3, s->relaying && s->introduced ? RDV_E_PUNCH_FAILED : RDV_E_TIMEOUT);
            } else if (!waiting && now >= s->bind.next_ms) {
                s->bind.tries++;
                s->bind.rto_ms = s->bind.rto_ms * 2 > BIND_RTO_MAX_MS ? BIND_RTO_MAX_MS : s->bind.rto_ms * 2;
                s->bind.next_ms = now + s->bind.rto_ms;
                send_bind(c, s);
            }
            if (s->state == S_BINDING)
                next = earliest(next, waiting ? s->bind_deadline_ms : earliest(s->bind.next_ms, s->bind_deadline_ms));
        }
        if (s->state == S_PUNCHING) {
            if (now >= s->punch_deadline_ms && !s->relaying) {
                /* As the Go SDK does: the relay next, within one more punch
                 * timeout. The game fetches this side's relay credential. */
                s->state = S_FALLBACK;
                s->fallback_until_ms = now + c->punch_timeout_ms;
                push_event(c, RDV_EV_RELAY_FALLBACK, RDV_E_PUNCH_FAILED, s->handle, NULL);
            } else if (now >= s->punch_deadline_ms) {
                finish(c, s, 3, RDV_E_PUNCH_FAILED);
            } else {
                if (now >= s->next_probe_ms) {
                    int k;
                    for (k = 0; k < s->ncands; k++) send_probe(c, s, 1, s->nonce, &s->cands[k]);
                    s->next_probe_ms = now + c->punch_interval_ms;
                }
                next = earliest(next, earliest(s->next_probe_ms, s->punch_deadline_ms));
            }
        }
        if (s->state == S_FALLBACK) {
            if (now >= s->fallback_until_ms) finish(c, s, 3, RDV_E_PUNCH_FAILED); /* no credential came */
            else next = earliest(next, s->fallback_until_ms);
        }
        if (s->report.active && now >= s->report.next_ms) {
            if (s->report.tries >= REPORT_TRIES) {
                s->report.active = 0;
            } else {
                s->report.tries++;
                s->report.rto_ms *= 2;
                s->report.next_ms = now + s->report.rto_ms;
                send_report(c, s);
            }
        }
        if (s->report.active) next = earliest(next, s->report.next_ms);
    }
    return next;
}

uint64_t rdv_update(rdv_ctx *c, uint64_t now_ms) {
    if (!c || c->magic != CTX_MAGIC) return now_ms + 1000;
    if (now_ms > c->now_ms) c->now_ms = now_ms;
    if (c->sock != RDV_BAD_SOCKET) {
        int k;
        for (k = 0; k < 256; k++) { /* bounded: a flood cannot hold the tick */
            size_t n;
            rdv_addr from;
            rdv_error e = rdv_plat_recv(c->sock, c->rx, sizeof c->rx, &n, &from);
            if (e == RDV_E_WOULD_BLOCK || e == RDV_E_SOCKET) break;
            if (e == RDV_E_TOO_LARGE) { c->stats.app_dropped++; continue; }
            (void)rdv_feed(c, now_ms, c->rx, n, &from);
        }
    }
    return run_timers(c);
}

/* ---- the public calls ---- */

rdv_error rdv_open(rdv_ctx *c, const char *local) {
    rdv_addr a;
    rdv_error e;
    if (!c || c->magic != CTX_MAGIC) return RDV_E_INVALID_ARGUMENT;
    if (c->sock != RDV_BAD_SOCKET) return RDV_E_STATE;
    e = rdv_addr_parse(local ? local : "0.0.0.0:0", &a);
    if (e != RDV_OK) return e;
    e = rdv_plat_open(&a, &c->sock);
    if (e != RDV_OK) return e;
    return rdv_plat_local(c->sock, &c->local);
}

rdv_error rdv_local_addr(rdv_ctx *c, rdv_addr *out) {
    if (!c || c->magic != CTX_MAGIC || !out) return RDV_E_INVALID_ARGUMENT;
    *out = c->local;
    return RDV_OK;
}

rdv_error rdv_set_local_addr(rdv_ctx *c, const char *local) {
    if (!c || c->magic != CTX_MAGIC) return RDV_E_INVALID_ARGUMENT;
    return rdv_addr_parse(local, &c->local);
}

static rdv_error set_mediator(rdv_ctx *c, const char *mediator) {
    rdv_addr m;
    rdv_error e = rdv_addr_parse(mediator, &m);
    if (e != RDV_OK) return e;
    if (c->mediator.family && !addr_eq(&c->mediator, &m)) return RDV_E_STATE; /* one mediator per socket */
    c->mediator = m;
    return RDV_OK;
}

rdv_error rdv_host_start(rdv_ctx *c, uint64_t now_ms, const char *mediator, const char *handle, const char *token,
                         uint32_t interval_s) {
    rdv_error e;
    uint8_t h[16], k[32];
    if (!c || c->magic != CTX_MAGIC || !interval_s) return RDV_E_INVALID_ARGUMENT;
    if (now_ms > c->now_ms) c->now_ms = now_ms;
    if (c->hosting) return RDV_E_STATE;
    if ((e = rdv_handle_parse(handle, h)) != RDV_OK || (e = rdv_capability_parse(token, k)) != RDV_OK ||
        (e = set_mediator(c, mediator)) != RDV_OK)
        return e;
    memcpy(c->presence_handle, h, 16);
    memcpy(c->presence_key, k, 32);
    c->interval_ms = interval_s * 1000;
    c->sequence = 0;
    c->next_refresh_ms = c->now_ms; /* the first refresh on the next update */
    c->hosting = 1;
    return RDV_OK;
}

rdv_error rdv_join_start(rdv_ctx *c, uint64_t now_ms, const char *mediator, const char *handle, const char *token) {
    rdv_error e;
    uint8_t h[16], k[32];
    if (!c || c->magic != CTX_MAGIC) return RDV_E_INVALID_ARGUMENT;
    if (now_ms > c->now_ms) c->now_ms = now_ms;
    if ((e = rdv_handle_parse(handle, h)) != RDV_OK || (e = rdv_capability_parse(token, k)) != RDV_OK ||
        (e = set_mediator(c, mediator)) != RDV_OK)
        return e;
    if (find_session(c, h)) return RDV_E_STATE;
    return new_session(c, 'c', h, k) ? RDV_OK : RDV_E_BUSY;
}

rdv_error rdv_relay_start(rdv_ctx *c, uint64_t now_ms, const char *handle, const char *server, const char *user,
                          const char *credential) {
    uint8_t h[16], seed[32];
    rdv_session *s;
    rdv_error e;
    if (!c || c->magic != CTX_MAGIC) return RDV_E_INVALID_ARGUMENT;
    if (now_ms > c->now_ms) c->now_ms = now_ms;
    if ((e = rdv_handle_parse(handle, h)) != RDV_OK) return e;
    if (!(s = find_session(c, h)) || (s->state != S_BINDING && s->state != S_FALLBACK) || s->relaying)
        return RDV_E_STATE;
    random_bytes(c, seed, sizeof seed);
    if ((e = rdv_turn_init(&s->turn, server, user, credential, seed)) != RDV_OK) return e;
    s->relaying = 1;
    if (s->state == S_FALLBACK) {
        /* Allocation, the relayed bind and RELAY-INTRODUCE within the
         * window the failed punch opened, as the Go SDK bounds them. */
        s->state = S_BINDING;
        s->bind_deadline_ms = s->fallback_until_ms;
        start_request(c, &s->bind, BIND_RTO_MS / 2);
        s->bind.tries = 0;
    } else {
        s->no_local = s->bind.tries == 0; /* relay-only before any bind: the LAN address stays unsent */
        s->bind_deadline_ms = c->now_ms + BIND_GIVE_UP_MS;
    }
    return RDV_OK;
}

rdv_error rdv_relay_decline(rdv_ctx *c, uint64_t now_ms, const char *handle) {
    uint8_t h[16];
    rdv_session *s;
    rdv_error e;
    if (!c || c->magic != CTX_MAGIC) return RDV_E_INVALID_ARGUMENT;
    if (now_ms > c->now_ms) c->now_ms = now_ms;
    if ((e = rdv_handle_parse(handle, h)) != RDV_OK) return e;
    if (!(s = find_session(c, h)) || s->relaying) return RDV_E_STATE;
    if (s->state == S_FALLBACK) finish(c, s, 3, RDV_E_PUNCH_FAILED);
    else if (s->state == S_BINDING && s->relay_announced) finish(c, s, 3, RDV_E_REJECTED);
    else return RDV_E_STATE;
    return RDV_OK;
}

rdv_error rdv_poll_transmit(rdv_ctx *c, void *buf, size_t cap, size_t *n, rdv_addr *to) {
    if (!c || c->magic != CTX_MAGIC || !buf || !n || !to) return RDV_E_INVALID_ARGUMENT;
    return queue_pop(&c->tx, buf, cap, n, to);
}

rdv_error rdv_next_event(rdv_ctx *c, rdv_event *ev) {
    if (!c || c->magic != CTX_MAGIC || !ev) return RDV_E_INVALID_ARGUMENT;
    if (!c->ev_count) return RDV_E_WOULD_BLOCK;
    *ev = c->events[c->ev_head];
    c->ev_head = (c->ev_head + 1) % RDV_EVENTS;
    c->ev_count--;
    return RDV_OK;
}

rdv_error rdv_send(rdv_ctx *c, const void *data, size_t n, const rdv_addr *to) {
    if (!c || c->magic != CTX_MAGIC || (!data && n) || !to) return RDV_E_INVALID_ARGUMENT;
    if (n > RDV_STUN_MAX_DATAGRAM) return RDV_E_TOO_LARGE;
    if (relay_session_for(c, to)) {
        to_peer(c, data, n, to);
        return RDV_OK;
    }
    if (c->sock != RDV_BAD_SOCKET) return rdv_plat_send(c->sock, data, n, to);
    return queue_push(&c->tx, data, n, to) ? RDV_OK : RDV_E_WOULD_BLOCK;
}

rdv_error rdv_recv(rdv_ctx *c, void *buf, size_t cap, size_t *n, rdv_addr *from) {
    if (!c || c->magic != CTX_MAGIC || !n || !from || (!buf && cap)) return RDV_E_INVALID_ARGUMENT;
    return queue_pop(&c->app, buf, cap, n, from);
}

void rdv_get_stats(const rdv_ctx *c, rdv_stats *out) {
    if (c && out) *out = c->stats;
}
