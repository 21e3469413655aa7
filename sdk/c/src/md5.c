/* MD5 (RFC 1321): only for TURN's long-term key, MD5(user:realm:password)
 * (RFC 8489 §9.2.2). */
#include "crypto.h"

static const uint32_t T[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const uint8_t S[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

static void block(uint32_t *st, const uint8_t *p) {
    uint32_t x[16], a = st[0], b = st[1], cc = st[2], d = st[3], f, t;
    int i, g;
    for (i = 0; i < 16; i++)
        x[i] = p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
    for (i = 0; i < 64; i++) {
        if (i < 16) { f = (b & cc) | (~b & d); g = i; }
        else if (i < 32) { f = (d & b) | (~d & cc); g = (5 * i + 1) & 15; }
        else if (i < 48) { f = b ^ cc ^ d; g = (3 * i + 5) & 15; }
        else { f = cc ^ (b | ~d); g = (7 * i) & 15; }
        t = a + f + T[i] + x[g];
        a = d; d = cc; cc = b;
        b = b + ((t << S[i]) | (t >> (32 - S[i])));
    }
    st[0] += a; st[1] += b; st[2] += cc; st[3] += d;
}

void rdv_md5_init(rdv_md5_ctx *c) {
    c->h[0] = 0x67452301; c->h[1] = 0xefcdab89; c->h[2] = 0x98badcfe; c->h[3] = 0x10325476;
    rdv_md_init(&c->s);
}

void rdv_md5_update(rdv_md5_ctx *c, const void *data, size_t n) {
    rdv_md_update(&c->s, c->h, block, data, n);
}

void rdv_md5_final(rdv_md5_ctx *c, uint8_t out[16]) {
    rdv_md_final(&c->s, c->h, block, 0, out, 4);
}

void rdv_md5(const void *data, size_t n, uint8_t out[16]) {
    rdv_md5_ctx c;
    rdv_md5_init(&c);
    rdv_md5_update(&c, data, n);
    rdv_md5_final(&c, out);
}
