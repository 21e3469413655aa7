/* The TURN client: see turn.h. */
#include "turn.h"
#include "crypto.h"
#include <string.h>

#define M_ALLOCATE 0x003
#define M_REFRESH 0x004
#define M_SEND 0x006
#define M_DATA 0x007
#define M_PERMISSION 0x008
#define M_CHANNEL 0x009
#define TURN_RTO_MS 500
#define TURN_TRIES 5
#define PERM_REFRESH_MS 240000 /* permissions live 300 s */
#define CHAN_REFRESH_MS 540000 /* channels live 600 s */

static uint16_t msg_type(uint16_t method, uint16_t cls) {
    return (uint16_t)((method & 0x000F) | (method & 0x0070) << 1 | (method & 0x0F80) << 2 | cls);
}
static uint16_t type_method(uint16_t t) { return (uint16_t)((t & 0x000F) | (t & 0x00E0) >> 1 | (t & 0x3E00) >> 2); }

static rdv_error copy_text(char *dst, size_t *len, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (!src || n >= RDV_TURN_TEXT) return RDV_E_INVALID_ARGUMENT;
    memcpy(dst, src, n + 1);
    *len = n;
    return RDV_OK;
}

rdv_error rdv_turn_init(rdv_turn *t, const char *server, const char *username, const char *password,
                        const uint8_t seed[32]) {
    rdv_error e;
    if (!t || !seed) return RDV_E_INVALID_ARGUMENT;
    memset(t, 0, sizeof *t);
    if ((e = rdv_addr_parse(server, &t->server)) != RDV_OK) return e;
    if ((e = copy_text(t->username, &t->username_len, username)) != RDV_OK ||
        (e = copy_text(t->password, &t->password_len, password)) != RDV_OK)
        return e;
    memcpy(t->seed, seed, 32);
    t->state = RDV_TURN_ALLOCATING;
    t->req_method = M_ALLOCATE;
    t->req_peer = -1;
    t->req_send_now = 1;
    return RDV_OK;
}

rdv_error rdv_turn_add_peer(rdv_turn *t, const rdv_addr *peer) {
    int i;
    for (i = 0; i < RDV_TURN_PEERS; i++)
        if (t->peers[i].channel && memcmp(&t->peers[i].addr, peer, sizeof *peer) == 0) return RDV_OK;
    for (i = 0; i < RDV_TURN_PEERS; i++) {
        if (t->peers[i].channel) continue;
        memset(&t->peers[i], 0, sizeof t->peers[i]);
        t->peers[i].addr = *peer;
        t->peers[i].channel = (uint16_t)(0x4000 + i);
        return RDV_OK;
    }
    return RDV_E_BUSY;
}

/* new_tx draws a transaction ID. A Send indication draws its own, so the
 * outstanding request's ID stays the one its answer must carry. */
static void new_tx(rdv_turn *t, uint8_t tx[12]) {
    uint8_t ctr[8], block[32];
    int i;
    for (i = 0; i < 8; i++) ctr[i] = (uint8_t)(t->counter >> (56 - 8 * i));
    t->counter++;
    rdv_hmac_sha256(t->seed, 32, ctr, 8, block);
    memcpy(tx, block, 12);
}

/* start a request: a new transaction, sent on this poll */
static void start(rdv_turn *t, uint16_t method, int peer) {
    t->req_method = method;
    t->req_peer = peer;
    t->req_tries = 0;
    t->req_stale_retried = 0;
    t->req_send_now = 1;
}

static size_t encode(rdv_turn *t, uint8_t *out, size_t cap) {
    rdv_stun_builder b;
    uint8_t v[4];
    rdv_sb_init(&b, out, cap, msg_type(t->req_method, 0), t->req_tx);
    switch (t->req_method) {
    case M_ALLOCATE:
        v[0] = 17; v[1] = v[2] = v[3] = 0; /* UDP */
        rdv_sb_bytes(&b, RDV_ATTR_REQUESTED_TRANSPORT, v, 4);
        break;
    case M_REFRESH:
        rdv_sb_u32(&b, RDV_ATTR_LIFETIME, 600);
        break;
    case M_PERMISSION:
        rdv_sb_xor_addr(&b, RDV_ATTR_XOR_PEER_ADDRESS, &t->peers[t->req_peer].addr);
        break;
    case M_CHANNEL:
        v[0] = (uint8_t)(t->peers[t->req_peer].channel >> 8);
        v[1] = (uint8_t)t->peers[t->req_peer].channel;
        v[2] = v[3] = 0;
        rdv_sb_bytes(&b, RDV_ATTR_CHANNEL_NUMBER, v, 4);
        rdv_sb_xor_addr(&b, RDV_ATTR_XOR_PEER_ADDRESS, &t->peers[t->req_peer].addr);
        break;
    }
    if (t->have_key) {
        rdv_sb_bytes(&b, RDV_ATTR_USERNAME, t->username, t->username_len);
        rdv_sb_bytes(&b, RDV_ATTR_REALM, t->realm, t->realm_len);
        rdv_sb_bytes(&b, RDV_ATTR_NONCE, t->nonce, t->nonce_len);
        rdv_sb_integrity_sha1(&b, t->key, 16);
    }
    rdv_sb_fingerprint(&b);
    return b.err == RDV_OK ? b.len : 0;
}

/* pick the next request due: allocation refresh, then permissions, then channels */
static void schedule(rdv_turn *t, uint64_t now) {
    int i;
    if (t->req_method || t->state != RDV_TURN_ALLOCATED) return;
    if (now >= t->alloc_refresh_ms) { start(t, M_REFRESH, -1); return; }
    for (i = 0; i < RDV_TURN_PEERS; i++) {
        rdv_turn_peer *p = &t->peers[i];
        if (!p->channel) continue;
        if (!p->permitted || now >= p->perm_refresh_ms) { start(t, M_PERMISSION, i); return; }
        if (!p->bound || now >= p->chan_refresh_ms) { start(t, M_CHANNEL, i); return; }
    }
}

size_t rdv_turn_poll(rdv_turn *t, uint64_t now, uint8_t *out, size_t cap, uint64_t *next_ms) {
    size_t n = 0;
    int i;
    schedule(t, now);
    if (t->req_method && (t->req_send_now || now >= t->req_next_ms)) {
        if (t->req_send_now) new_tx(t, t->req_tx);
        if (!t->req_send_now && t->req_tries >= TURN_TRIES) {
            t->state = RDV_TURN_FAILED;
            t->error = RDV_E_TIMEOUT;
            t->req_method = 0;
        } else {
            t->req_send_now = 0;
            t->req_tries++;
            t->req_next_ms = now + ((uint64_t)TURN_RTO_MS << (t->req_tries - 1));
            n = encode(t, out, cap);
        }
    }
    if (next_ms) {
        uint64_t next = now + 1000;
        if (t->req_method && t->req_next_ms < next) next = t->req_next_ms;
        if (t->state == RDV_TURN_ALLOCATED && t->alloc_refresh_ms < next) next = t->alloc_refresh_ms;
        for (i = 0; i < RDV_TURN_PEERS; i++) {
            if (!t->peers[i].channel) continue;
            if (t->peers[i].permitted && t->peers[i].perm_refresh_ms < next) next = t->peers[i].perm_refresh_ms;
            if (t->peers[i].bound && t->peers[i].chan_refresh_ms < next) next = t->peers[i].chan_refresh_ms;
        }
        *next_ms = next;
    }
    return n;
}

static void set_text(const rdv_stun_msg *m, uint16_t type, char *dst, size_t *len) {
    const uint8_t *v;
    size_t n;
    if (rdv_stun_get(m, type, &v, &n) == RDV_OK && n < RDV_TURN_TEXT) {
        memcpy(dst, v, n);
        dst[n] = 0;
        *len = n;
    }
}

static void derive_key(rdv_turn *t) {
    rdv_md5_ctx c;
    rdv_md5_init(&c);
    rdv_md5_update(&c, t->username, t->username_len);
    rdv_md5_update(&c, ":", 1);
    rdv_md5_update(&c, t->realm, t->realm_len);
    rdv_md5_update(&c, ":", 1);
    rdv_md5_update(&c, t->password, t->password_len);
    rdv_md5_final(&c, t->key);
    t->have_key = 1;
}

static void on_response(rdv_turn *t, uint64_t now, const rdv_stun_msg *m) {
    uint16_t cls = m->type & 0x0110;
    int code = 0;
    const uint8_t *reason;
    size_t rn;
    if (!t->req_method || memcmp(m->txid, t->req_tx, 12) != 0 || type_method(m->type) != t->req_method) return;
    if (cls == 0x0110 && rdv_stun_error_code(m, &code, &reason, &rn) != RDV_OK) return;
    /* Answers after we have the key must carry a valid MESSAGE-INTEGRITY,
     * except the 401/438 that hand out a new nonce. */
    if (t->have_key && code != 401 && code != 438 && rdv_stun_check_sha1(m, t->key, 16) != RDV_OK) return;
    if (code == 401 || code == 438) {
        int first = !t->have_key;
        set_text(m, RDV_ATTR_REALM, t->realm, &t->realm_len);
        set_text(m, RDV_ATTR_NONCE, t->nonce, &t->nonce_len);
        if (!t->realm_len || !t->nonce_len || (!first && t->req_stale_retried)) {
            t->state = RDV_TURN_FAILED; /* credentials refused */
            t->error = RDV_E_REJECTED;
            t->last_code = code;
            t->req_method = 0;
            return;
        }
        if (!first) t->req_stale_retried = 1; /* one retry with a new nonce, never a loop */
        derive_key(t);
        t->req_send_now = 1;
        t->req_tries = 0;
        return;
    }
    if (code) {
        t->last_code = code;
        if (t->req_method == M_ALLOCATE) { t->state = RDV_TURN_FAILED; t->error = RDV_E_REJECTED; }
        else if (t->req_peer >= 0) t->peers[t->req_peer].channel = 0; /* drop that peer */
        t->req_method = 0;
        return;
    }
    switch (t->req_method) {
    case M_ALLOCATE:
        if (rdv_stun_xor_addr(m, RDV_ATTR_XOR_RELAYED_ADDRESS, &t->relayed) != RDV_OK) return;
        (void)rdv_stun_xor_addr(m, RDV_ATTR_XOR_MAPPED_ADDRESS, &t->mapped);
        /* fall through */
    case M_REFRESH: /* both answers carry LIFETIME */
        if (rdv_stun_u32(m, RDV_ATTR_LIFETIME, &t->lifetime_s) != RDV_OK || t->lifetime_s < 60) t->lifetime_s = 60;
        t->alloc_refresh_ms = now + (uint64_t)t->lifetime_s * 1000 / 2;
        t->state = RDV_TURN_ALLOCATED;
        break;
    case M_PERMISSION:
        t->peers[t->req_peer].permitted = 1;
        t->peers[t->req_peer].perm_refresh_ms = now + PERM_REFRESH_MS;
        break;
    case M_CHANNEL:
        t->peers[t->req_peer].bound = 1;
        t->peers[t->req_peer].chan_refresh_ms = now + CHAN_REFRESH_MS;
        /* a channel binding installs (and refreshes) the permission too */
        t->peers[t->req_peer].perm_refresh_ms = now + PERM_REFRESH_MS;
        break;
    }
    t->req_method = 0;
}

int rdv_turn_feed(rdv_turn *t, uint64_t now, const uint8_t *b, size_t n, const uint8_t **data, size_t *dn,
                  rdv_addr *peer) {
    rdv_stun_msg m;
    int i;
    if (n >= 4 && (b[0] & 0xF0) == 0x40) { /* ChannelData */
        uint16_t ch = (uint16_t)(b[0] << 8 | b[1]);
        size_t len = (size_t)(b[2] << 8 | b[3]);
        if (len > n - 4) return 0;
        for (i = 0; i < RDV_TURN_PEERS; i++) {
            if (t->peers[i].channel == ch && t->peers[i].bound) {
                *data = b + 4;
                *dn = len;
                *peer = t->peers[i].addr;
                return 1;
            }
        }
        return 0;
    }
    if (rdv_stun_parse(b, n, &m) != RDV_OK) return 0;
    if (m.type == msg_type(M_DATA, 0x0010)) {
        if (rdv_stun_xor_addr(&m, RDV_ATTR_XOR_PEER_ADDRESS, peer) != RDV_OK ||
            rdv_stun_get(&m, RDV_ATTR_DATA, data, dn) != RDV_OK)
            return 0;
        return 1;
    }
    if ((m.type & 0x0110) == 0x0100 || (m.type & 0x0110) == 0x0110) on_response(t, now, &m);
    return 0;
}

size_t rdv_turn_wrap(rdv_turn *t, const rdv_addr *peer, const void *payload, size_t n, uint8_t *out, size_t cap) {
    int i;
    for (i = 0; i < RDV_TURN_PEERS; i++) {
        rdv_turn_peer *p = &t->peers[i];
        rdv_stun_builder b;
        uint8_t tx[12];
        if (!p->channel || memcmp(&p->addr, peer, sizeof *peer) != 0) continue;
        if (p->bound) {
            if (n > 0xFFFF || cap < 4 + n) return 0;
            out[0] = (uint8_t)(p->channel >> 8);
            out[1] = (uint8_t)p->channel;
            out[2] = (uint8_t)(n >> 8);
            out[3] = (uint8_t)n;
            memcpy(out + 4, payload, n);
            return 4 + n;
        }
        if (!p->permitted) return 0;
        new_tx(t, tx);
        rdv_sb_init(&b, out, cap, msg_type(M_SEND, 0x0010), tx);
        rdv_sb_xor_addr(&b, RDV_ATTR_XOR_PEER_ADDRESS, peer);
        rdv_sb_bytes(&b, RDV_ATTR_DATA, payload, n);
        return b.err == RDV_OK ? b.len : 0;
    }
    return 0;
}
