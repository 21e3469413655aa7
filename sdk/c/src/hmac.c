/* HMAC (RFC 2104) over SHA-256 and SHA-1, CRC-32 and constant-time
 * comparison. */
#include "crypto.h"
#include <string.h>

/* start puts h and s where hash md begins. */
static void start(const rdv_md_hash *md, uint32_t *h, rdv_md_state *s) {
    memcpy(h, md->iv, 4 * md->words);
    rdv_md_init(s);
}

/* hmac over hash md (digest at most 32 bytes): HMAC(k, a || b). The
 * hash's state lives on this stack frame, as each hash's context would. */
static void hmac(const rdv_md_hash *md, const uint8_t *key, size_t klen, const void *a, size_t na,
                 const void *b, size_t nb, uint8_t *out) {
    uint8_t k[64], pad[64], inner[32];
    uint32_t h[8];
    rdv_md_state s;
    size_t i, dlen = 4 * md->words;
    memset(k, 0, sizeof k);
    if (klen > 64) {
        start(md, h, &s);
        rdv_md_update(&s, h, md->block, key, klen);
        rdv_md_final(&s, h, md->block, md->big_endian, k, md->words);
    } else if (klen) memcpy(k, key, klen);
    for (i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
    start(md, h, &s);
    rdv_md_update(&s, h, md->block, pad, 64);
    rdv_md_update(&s, h, md->block, a, na);
    if (nb) rdv_md_update(&s, h, md->block, b, nb);
    rdv_md_final(&s, h, md->block, md->big_endian, inner, md->words);
    for (i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
    start(md, h, &s);
    rdv_md_update(&s, h, md->block, pad, 64);
    rdv_md_update(&s, h, md->block, inner, dlen);
    rdv_md_final(&s, h, md->block, md->big_endian, out, md->words);
}

void rdv_hmac_sha256_2(const uint8_t *key, size_t klen, const void *a, size_t na,
                       const void *b, size_t nb, uint8_t out[32]) {
    hmac(&rdv_sha256_md, key, klen, a, na, b, nb, out);
}

void rdv_hmac_sha256(const uint8_t *key, size_t klen, const void *msg, size_t n, uint8_t out[32]) {
    rdv_hmac_sha256_2(key, klen, msg, n, NULL, 0, out);
}

void rdv_hmac_sha1_2(const uint8_t *key, size_t klen, const void *a, size_t na,
                     const void *b, size_t nb, uint8_t out[20]) {
    hmac(&rdv_sha1_md, key, klen, a, na, b, nb, out);
}

void rdv_hmac_sha1(const uint8_t *key, size_t klen, const void *msg, size_t n, uint8_t out[20]) {
    rdv_hmac_sha1_2(key, klen, msg, n, NULL, 0, out);
}

int rdv_ct_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    uint8_t d = 0;
    size_t i;
    for (i = 0; i < n; i++) d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}
