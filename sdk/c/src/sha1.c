/* SHA-1 (FIPS 180-4): only for TURN's MESSAGE-INTEGRITY (RFC 8489 §14.5),
 * which coturn's long-term credentials still use. */
#include "crypto.h"
#include <string.h>

#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void block(uint32_t *st, const uint8_t *p) {
    uint32_t w[80], a, b, cc, d, e, f, k, t;
    int i;
    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (i = 16; i < 80; i++) w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    a = st[0]; b = st[1]; cc = st[2]; d = st[3]; e = st[4];
    for (i = 0; i < 80; i++) {
        if (i < 20) { f = (b & cc) | (~b & d); k = 0x5a827999; }
        else if (i < 40) { f = b ^ cc ^ d; k = 0x6ed9eba1; }
        else if (i < 60) { f = (b & cc) | (b & d) | (cc & d); k = 0x8f1bbcdc; }
        else { f = b ^ cc ^ d; k = 0xca62c1d6; }
        t = ROL(a, 5) + f + e + k + w[i];
        e = d; d = cc; cc = ROL(b, 30); b = a; a = t;
    }
    st[0] += a; st[1] += b; st[2] += cc; st[3] += d; st[4] += e;
}

static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};

const rdv_md_hash rdv_sha1_md = {iv, 5, block, 1};

void rdv_sha1_init(rdv_sha1_ctx *c) {
    memcpy(c->h, iv, sizeof iv);
    rdv_md_init(&c->s);
}

void rdv_sha1_update(rdv_sha1_ctx *c, const void *data, size_t n) {
    rdv_md_update(&c->s, c->h, block, data, n);
}

void rdv_sha1_final(rdv_sha1_ctx *c, uint8_t out[20]) {
    rdv_md_final(&c->s, c->h, block, 1, out, 5);
}

void rdv_sha1(const void *data, size_t n, uint8_t out[20]) {
    rdv_sha1_ctx c;
    rdv_sha1_init(&c);
    rdv_sha1_update(&c, data, n);
    rdv_sha1_final(&c, out);
}
