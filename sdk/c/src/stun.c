/* The STUN codec: see stun.h. */
#include "stun.h"
#include "crypto.h"
#include <string.h>

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void rdv_sb_init(rdv_stun_builder *b, uint8_t *buf, size_t cap, uint16_t type, const uint8_t txid[12]) {
    b->buf = buf;
    b->cap = cap;
    b->len = 0;
    b->err = RDV_OK;
    if (!buf || cap < RDV_STUN_HEADER) {
        b->err = RDV_E_BUFFER_FULL;
        return;
    }
    put16(buf, type & 0x3FFF);
    put16(buf + 2, 0);
    put32(buf + 4, RDV_STUN_COOKIE);
    memcpy(buf + 8, txid, 12);
    b->len = RDV_STUN_HEADER;
}

/* add appends an attribute header, zeroes the padding and returns the value
 * to fill (NULL after an error); the header length follows. */
static uint8_t *add(rdv_stun_builder *b, uint16_t t, size_t n) {
    size_t padded = (n + 3) & ~(size_t)3;
    uint8_t *p;
    if (b->err != RDV_OK) return NULL;
    if (n > 0xFFFF) { b->err = RDV_E_INVALID_ARGUMENT; return NULL; }
    if (b->cap - b->len < 4 + padded) { b->err = RDV_E_BUFFER_FULL; return NULL; }
    p = b->buf + b->len;
    put16(p, t);
    put16(p + 2, (uint16_t)n);
    memset(p + 4 + n, 0, padded - n);
    b->len += 4 + padded;
    put16(b->buf + 2, (uint16_t)(b->len - RDV_STUN_HEADER));
    return p + 4;
}

static void fail(rdv_stun_builder *b, rdv_error e) {
    if (b->err == RDV_OK) b->err = e;
}

void rdv_sb_bytes(rdv_stun_builder *b, uint16_t t, const void *v, size_t n) {
    uint8_t *d = add(b, t, n);
    if (d && n) memcpy(d, v, n);
}

void rdv_sb_username(rdv_stun_builder *b, char kind, const uint8_t h[16]) {
    static const char hex[] = "0123456789abcdef";
    char u[RDV_USERNAME_LEN];
    int i, j = 2;
    u[0] = kind;
    u[1] = ':';
    for (i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) u[j++] = '-';
        u[j++] = hex[h[i] >> 4];
        u[j++] = hex[h[i] & 15];
    }
    rdv_sb_bytes(b, RDV_ATTR_USERNAME, u, sizeof u);
}

void rdv_sb_u64(rdv_stun_builder *b, uint16_t t, uint64_t v) {
    uint8_t *d = add(b, t, 8);
    if (d) { put32(d, (uint32_t)(v >> 32)); put32(d + 4, (uint32_t)v); }
}

void rdv_sb_u32(rdv_stun_builder *b, uint16_t t, uint32_t v) {
    uint8_t *d = add(b, t, 4);
    if (d) put32(d, v);
}

static void xor_key(const uint8_t txid[12], uint8_t k[16]) {
    put32(k, RDV_STUN_COOKIE);
    memcpy(k + 4, txid, 12);
}

void rdv_sb_xor_addr(rdv_stun_builder *b, uint16_t t, const rdv_addr *a) {
    uint8_t *d, k[16];
    int i;
    if (!a || (a->family != RDV_AF_INET && a->family != RDV_AF_INET6)) {
        fail(b, RDV_E_BAD_ADDRESS);
        return;
    }
    d = add(b, t, a->family == RDV_AF_INET ? 8 : 20);
    if (!d) return;
    d[0] = 0;
    d[1] = a->family;
    put16(d + 2, (uint16_t)(a->port ^ (RDV_STUN_COOKIE >> 16)));
    if (a->family == RDV_AF_INET) {
        put32(d + 4, get32(a->ip) ^ RDV_STUN_COOKIE);
        return;
    }
    xor_key(b->buf + 8, k);
    for (i = 0; i < 16; i++) d[4 + i] = a->ip[i] ^ k[i];
}

void rdv_sb_outcome(rdv_stun_builder *b, uint8_t path, uint32_t millis) {
    uint8_t *d;
    if (path < 1 || path > 3) { fail(b, RDV_E_INVALID_ARGUMENT); return; }
    d = add(b, RDV_ATTR_OUTCOME, 8);
    if (d) { d[0] = path; d[1] = d[2] = d[3] = 0; put32(d + 4, millis); }
}

void rdv_sb_error_code(rdv_stun_builder *b, int code, const char *reason) {
    size_t n = reason ? strlen(reason) : 0;
    uint8_t *d;
    if (code < 300 || code > 699 || n > 128) { fail(b, RDV_E_INVALID_ARGUMENT); return; }
    d = add(b, RDV_ATTR_ERROR_CODE, 4 + n);
    if (!d) return;
    d[0] = d[1] = 0;
    d[2] = (uint8_t)(code / 100);
    d[3] = (uint8_t)(code % 100);
    if (n) memcpy(d + 4, reason, n);
}

void rdv_sb_unknown(rdv_stun_builder *b, const uint16_t *types, size_t n) {
    uint8_t *d = add(b, RDV_ATTR_UNKNOWN_ATTRIBUTES, 2 * n);
    size_t i;
    if (d) for (i = 0; i < n; i++) put16(d + 2 * i, types[i]);
}

/* RFC 8489 §14.5-14.6: the MAC covers the message up to the attribute, with
 * the header length already counting the attribute (add sets it so). */
void rdv_sb_integrity_sha256(rdv_stun_builder *b, const uint8_t *key, size_t klen) {
    size_t off = b->len;
    uint8_t *d;
    if (b->err == RDV_OK && off > RDV_STUN_MAX_DATAGRAM) { fail(b, RDV_E_BUFFER_FULL); return; }
    d = add(b, RDV_ATTR_INTEGRITY_SHA256, 32);
    if (d) rdv_hmac_sha256(key, klen, b->buf, off, d);
}

void rdv_sb_integrity_sha1(rdv_stun_builder *b, const uint8_t *key, size_t klen) {
    size_t off = b->len;
    uint8_t *d = add(b, RDV_ATTR_MESSAGE_INTEGRITY, 20);
    if (d) rdv_hmac_sha1(key, klen, b->buf, off, d);
}

void rdv_sb_fingerprint(rdv_stun_builder *b) {
    size_t off = b->len;
    uint8_t *d = add(b, RDV_ATTR_FINGERPRINT, 4);
    if (d) put32(d, rdv_crc32(0, b->buf, off) ^ 0x5354554Eu);
}

/* The attributes the parser records (the Go codec's set plus TURN's). */
static int recognised(uint16_t t) {
    switch (t) {
    case RDV_ATTR_USERNAME: case RDV_ATTR_ERROR_CODE: case RDV_ATTR_UNKNOWN_ATTRIBUTES:
    case RDV_ATTR_XOR_PEER_ADDRESS: case RDV_ATTR_XOR_MAPPED_ADDRESS: case RDV_ATTR_SEQUENCE:
    case RDV_ATTR_LOCAL_ADDRESS: case RDV_ATTR_ATTEMPT: case RDV_ATTR_RDV_LIFETIME:
    case RDV_ATTR_PEER_LOCAL_ADDRESS: case RDV_ATTR_RELAYED_ADDRESS: case RDV_ATTR_OUTCOME:
    case RDV_ATTR_RELAY_ONLY:
    /* TURN (RFC 8656) */
    case RDV_ATTR_CHANNEL_NUMBER: case RDV_ATTR_LIFETIME: case RDV_ATTR_DATA: case RDV_ATTR_REALM:
    case RDV_ATTR_NONCE: case RDV_ATTR_XOR_RELAYED_ADDRESS:
        return 1;
    }
    return 0;
}

rdv_error rdv_stun_parse(const uint8_t *b, size_t n, rdv_stun_msg *m) {
    size_t off, hl;
    int saw_username = 0, username = 0;
    if (!b || !m) return RDV_E_INVALID_ARGUMENT;
    m->raw = NULL;
    m->len = 0;
    m->nattrs = m->nunknown = 0;
    m->integrity = m->integrity_sha1 = m->fingerprint = 0;
    if (n < RDV_STUN_HEADER) return RDV_E_TOO_SHORT;
    if (n > RDV_STUN_MAX_DATAGRAM) return RDV_E_TOO_LONG;
    if ((b[0] & 0xC0) != 0 || get32(b + 4) != RDV_STUN_COOKIE) return RDV_E_NOT_STUN;
    hl = get16(b + 2);
    if (hl % 4 != 0 || hl != n - RDV_STUN_HEADER) return RDV_E_BAD_LENGTH;
    m->type = get16(b);
    memcpy(m->txid, b + 8, 12);
    for (off = RDV_STUN_HEADER; off < n;) {
        uint16_t t, l;
        size_t padded, v;
        if (m->fingerprint) return RDV_E_ATTR_AFTER_FINGERPRINT;
        if (n - off < 4) return RDV_E_ATTR_OVERRUN;
        t = get16(b + off);
        l = get16(b + off + 2);
        padded = ((size_t)l + 3) & ~(size_t)3;
        if (padded > n - off - 4) return RDV_E_ATTR_OVERRUN;
        v = off + 4;
        if (t == RDV_ATTR_FINGERPRINT) {
            if (l != 4) return RDV_E_BAD_ATTR_VALUE;
            m->fingerprint = off;
        } else if (t == RDV_ATTR_INTEGRITY_SHA256) {
            if (m->integrity) return RDV_E_DUPLICATE_ATTR;
            if (l != 32) return RDV_E_BAD_ATTR_VALUE;
            m->integrity = off;
        } else if (t == RDV_ATTR_MESSAGE_INTEGRITY) {
            if (m->integrity_sha1) return RDV_E_DUPLICATE_ATTR;
            /* The server only recognises it; the TURN client verifies it, so
             * its size is checked here (the server's Go codec does not). */
            m->integrity_sha1 = off;
        } else if (t == RDV_ATTR_USERNAME && (username || saw_username)) {
            return RDV_E_DUPLICATE_ATTR;
        } else if (m->integrity || m->integrity_sha1) {
            /* Ignored after an integrity attribute (RFC 8489 §14.5, §14.6). */
            if (t == RDV_ATTR_USERNAME) saw_username = 1;
        } else if (recognised(t)) {
            if (m->nattrs == RDV_STUN_MAX_ATTRS) return RDV_E_TOO_MANY_ATTRS;
            if (t == RDV_ATTR_USERNAME) { username = 1; saw_username = 1; }
            m->attrs[m->nattrs].type = t;
            m->attrs[m->nattrs].off = (uint16_t)v;
            m->attrs[m->nattrs].len = l;
            m->nattrs++;
        } else if (t < 0x8000) {
            if (m->nunknown < RDV_STUN_MAX_UNKNOWN) m->unknown[m->nunknown++] = t;
        }
        off = v + padded;
    }
    if (m->fingerprint) {
        uint32_t want = get32(b + m->fingerprint + 4);
        if ((rdv_crc32(0, b, m->fingerprint) ^ 0x5354554Eu) != want) return RDV_E_BAD_FINGERPRINT;
    }
    m->raw = b;
    m->len = n;
    return RDV_OK;
}

rdv_error rdv_stun_get(const rdv_stun_msg *m, uint16_t t, const uint8_t **v, size_t *n) {
    int i;
    for (i = 0; i < m->nattrs; i++) {
        if (m->attrs[i].type == t) {
            *v = m->raw + m->attrs[i].off;
            *n = m->attrs[i].len;
            return RDV_OK;
        }
    }
    return RDV_E_ABSENT;
}

/* get_sized finds attribute t, whose value must be exactly want bytes. */
static rdv_error get_sized(const rdv_stun_msg *m, uint16_t t, size_t want, const uint8_t **v) {
    size_t n;
    rdv_error e = rdv_stun_get(m, t, v, &n);
    if (e != RDV_OK) return e;
    return n == want ? RDV_OK : RDV_E_BAD_ATTR_VALUE;
}

rdv_error rdv_stun_u64(const rdv_stun_msg *m, uint16_t t, uint64_t *out) {
    const uint8_t *v;
    rdv_error e = get_sized(m, t, 8, &v);
    if (e != RDV_OK) return e;
    *out = (uint64_t)get32(v) << 32 | get32(v + 4);
    return RDV_OK;
}

rdv_error rdv_stun_u32(const rdv_stun_msg *m, uint16_t t, uint32_t *out) {
    const uint8_t *v;
    rdv_error e = get_sized(m, t, 4, &v);
    if (e != RDV_OK) return e;
    *out = get32(v);
    return RDV_OK;
}

rdv_error rdv_stun_xor_addr(const rdv_stun_msg *m, uint16_t t, rdv_addr *a) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const uint8_t *v;
    uint8_t k[16];
    size_t n;
    int i;
    rdv_error e = rdv_stun_get(m, t, &v, &n);
    if (e != RDV_OK) return e;
    if (n < 4 || v[0] != 0) return RDV_E_BAD_ATTR_VALUE;
    memset(a, 0, sizeof *a);
    a->port = (uint16_t)(get16(v + 2) ^ (RDV_STUN_COOKIE >> 16));
    if (v[1] == 1 && n == 8) {
        a->family = RDV_AF_INET;
        put32(a->ip, get32(v + 4) ^ RDV_STUN_COOKIE);
        return RDV_OK;
    }
    if (v[1] == 2 && n == 20) {
        xor_key(m->txid, k);
        for (i = 0; i < 16; i++) a->ip[i] = v[4 + i] ^ k[i];
        a->family = RDV_AF_INET6;
        if (memcmp(a->ip, mapped, 12) == 0) { /* returned unmapped, as the Go codec does */
            memmove(a->ip, a->ip + 12, 4);
            memset(a->ip + 4, 0, 12);
            a->family = RDV_AF_INET;
        }
        return RDV_OK;
    }
    return RDV_E_BAD_ATTR_VALUE;
}

rdv_error rdv_stun_outcome(const rdv_stun_msg *m, uint8_t *path, uint32_t *millis) {
    const uint8_t *v;
    rdv_error e = get_sized(m, RDV_ATTR_OUTCOME, 8, &v);
    if (e != RDV_OK) return e;
    if (v[1] || v[2] || v[3] || v[0] < 1 || v[0] > 3) return RDV_E_BAD_ATTR_VALUE;
    *path = v[0];
    *millis = get32(v + 4);
    return RDV_OK;
}

rdv_error rdv_stun_error_code(const rdv_stun_msg *m, int *code, const uint8_t **reason, size_t *rn) {
    const uint8_t *v;
    size_t n;
    rdv_error e = rdv_stun_get(m, RDV_ATTR_ERROR_CODE, &v, &n);
    if (e != RDV_OK) return e;
    if (n < 4 || v[2] < 3 || v[2] > 6 || v[3] > 99) return RDV_E_BAD_ATTR_VALUE;
    *code = v[2] * 100 + v[3];
    *reason = v + 4;
    *rn = n - 4;
    return RDV_OK;
}

int rdv_stun_attempts(const rdv_stun_msg *m, const uint8_t *out[4]) {
    int i, k = 0;
    for (i = 0; i < m->nattrs && k < 4; i++)
        if (m->attrs[i].type == RDV_ATTR_ATTEMPT && m->attrs[i].len == 16) out[k++] = m->raw + m->attrs[i].off;
    return k;
}

rdv_error rdv_stun_username(const rdv_stun_msg *m, char *kind, uint8_t handle[16]) {
    const uint8_t *v;
    size_t n;
    char s[37];
    rdv_error e = rdv_stun_get(m, RDV_ATTR_USERNAME, &v, &n);
    if (e != RDV_OK) return e;
    if (n != RDV_USERNAME_LEN || v[1] != ':' || (v[0] != 'p' && v[0] != 'h' && v[0] != 'c'))
        return RDV_E_BAD_HANDLE;
    memcpy(s, v + 2, 36);
    s[36] = 0;
    e = rdv_handle_parse(s, handle);
    if (e != RDV_OK) return e;
    *kind = (char)v[0];
    return RDV_OK;
}

/* check_mac recomputes the MAC over the header with its length adjusted to
 * end after the attribute, then the body up to the attribute: the datagram
 * is never written to. */
static rdv_error check_mac(const rdv_stun_msg *m, size_t at, size_t maclen, const uint8_t *key, size_t klen) {
    uint8_t hdr[RDV_STUN_HEADER], want[32];
    if (!m->raw || !at || m->raw[at + 2] != 0 || m->raw[at + 3] != maclen) return RDV_E_BAD_INTEGRITY;
    memcpy(hdr, m->raw, RDV_STUN_HEADER);
    put16(hdr + 2, (uint16_t)(at - RDV_STUN_HEADER + 4 + maclen));
    if (maclen == 32)
        rdv_hmac_sha256_2(key, klen, hdr, sizeof hdr, m->raw + RDV_STUN_HEADER, at - RDV_STUN_HEADER, want);
    else
        rdv_hmac_sha1_2(key, klen, hdr, sizeof hdr, m->raw + RDV_STUN_HEADER, at - RDV_STUN_HEADER, want);
    return rdv_ct_equal(want, m->raw + at + 4, maclen) ? RDV_OK : RDV_E_BAD_INTEGRITY;
}

rdv_error rdv_stun_check_sha256(const rdv_stun_msg *m, const uint8_t *key, size_t klen) {
    return check_mac(m, m->integrity, 32, key, klen);
}

rdv_error rdv_stun_check_sha1(const rdv_stun_msg *m, const uint8_t *key, size_t klen) {
    return check_mac(m, m->integrity_sha1, 20, key, klen);
}

void rdv_indication_txid(char kind, const uint8_t handle[16], int relay, uint8_t out[12]) {
    memcpy(out, handle + 4, 12);
    out[0] ^= (uint8_t)kind;
    if (relay) out[0] ^= 0x80;
}

void rdv_host_attempt_key(const uint8_t presence_cap[32], const uint8_t handle[16], uint8_t out[32]) {
    uint8_t msg[32];
    memcpy(msg, "rdv-attempt-host", 16);
    memcpy(msg + 16, handle, 16);
    rdv_hmac_sha256(presence_cap, 32, msg, sizeof msg, out);
}
