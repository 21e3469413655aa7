/* SHA-1 (FIPS 180-4): only for TURN's MESSAGE-INTEGRITY (RFC 8489 §14.5),
 * which coturn's long-term credentials still use. */
#include "crypto.h"
#include <string.h>

#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void block(rdv_sha1_ctx *c, const uint8_t *p) {
    uint32_t w[80], a, b, cc, d, e, f, k, t;
    int i;
    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (i = 16; i < 80; i++) w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    a = c->h[0]; b = c->h[1]; cc = c->h[2]; d = c->h[3]; e = c->h[4];
    for (i = 0; i < 80; i++) {
        if (i < 20) { f = (b & cc) | (~b & d); k = 0x5a827999; }
        else if (i < 40) { f = b ^ cc ^ d; k = 0x6ed9eba1; }
        else if (i < 60) { f = (b & cc) | (b & d) | (cc & d); k = 0x8f1bbcdc; }
        else { f = b ^ cc ^ d; k = 0xca62c1d6; }
        t = ROL(a, 5) + f + e + k + w[i];
        e = d; d = cc; cc = ROL(b, 30); b = a; a = t;
    }
    c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d; c->h[4] += e;
}

void rdv_sha1_init(rdv_sha1_ctx *c) {
    c->h[0] = 0x67452301; c->h[1] = 0xefcdab89; c->h[2] = 0x98badcfe;
    c->h[3] = 0x10325476; c->h[4] = 0xc3d2e1f0;
    c->len = 0;
    c->nbuf = 0;
}

void rdv_sha1_update(rdv_sha1_ctx *c, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    c->len += n;
    if (c->nbuf) {
        size_t k = 64 - c->nbuf;
        if (k > n) k = n;
        memcpy(c->buf + c->nbuf, p, k);
        c->nbuf += k; p += k; n -= k;
        if (c->nbuf < 64) return;
        block(c, c->buf);
        c->nbuf = 0;
    }
    for (; n >= 64; p += 64, n -= 64) block(c, p);
    if (n) { memcpy(c->buf, p, n); c->nbuf = n; }
}

void rdv_sha1_final(rdv_sha1_ctx *c, uint8_t out[20]) {
    uint64_t bits = c->len * 8;
    uint8_t pad[72];
    size_t padn = (c->nbuf < 56 ? 56 : 120) - c->nbuf;
    int i;
    memset(pad, 0, sizeof pad);
    pad[0] = 0x80;
    for (i = 0; i < 8; i++) pad[padn + i] = (uint8_t)(bits >> (56 - 8 * i));
    rdv_sha1_update(c, pad, padn + 8);
    for (i = 0; i < 5; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24); out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8); out[4 * i + 3] = (uint8_t)c->h[i];
    }
}

void rdv_sha1(const void *data, size_t n, uint8_t out[20]) {
    rdv_sha1_ctx c;
    rdv_sha1_init(&c);
    rdv_sha1_update(&c, data, n);
    rdv_sha1_final(&c, out);
}
