/* HMAC (RFC 2104) over SHA-256 and SHA-1, CRC-32 and constant-time
 * comparison. */
#include "crypto.h"
#include <string.h>

void rdv_hmac_sha256_2(const uint8_t *key, size_t klen, const void *a, size_t na,
                       const void *b, size_t nb, uint8_t out[32]) {
    uint8_t k[64], pad[64], inner[32];
    rdv_sha256_ctx c;
    size_t i;
    memset(k, 0, sizeof k);
    if (klen > 64) rdv_sha256(key, klen, k);
    else if (klen) memcpy(k, key, klen);
    for (i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
    rdv_sha256_init(&c);
    rdv_sha256_update(&c, pad, 64);
    rdv_sha256_update(&c, a, na);
    if (nb) rdv_sha256_update(&c, b, nb);
    rdv_sha256_final(&c, inner);
    for (i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
    rdv_sha256_init(&c);
    rdv_sha256_update(&c, pad, 64);
    rdv_sha256_update(&c, inner, 32);
    rdv_sha256_final(&c, out);
}

void rdv_hmac_sha256(const uint8_t *key, size_t klen, const void *msg, size_t n, uint8_t out[32]) {
    rdv_hmac_sha256_2(key, klen, msg, n, NULL, 0, out);
}

void rdv_hmac_sha1_2(const uint8_t *key, size_t klen, const void *a, size_t na,
                     const void *b, size_t nb, uint8_t out[20]) {
    uint8_t k[64], pad[64], inner[20];
    rdv_sha1_ctx c;
    size_t i;
    memset(k, 0, sizeof k);
    if (klen > 64) rdv_sha1(key, klen, k);
    else if (klen) memcpy(k, key, klen);
    for (i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
    rdv_sha1_init(&c);
    rdv_sha1_update(&c, pad, 64);
    rdv_sha1_update(&c, a, na);
    if (nb) rdv_sha1_update(&c, b, nb);
    rdv_sha1_final(&c, inner);
    for (i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
    rdv_sha1_init(&c);
    rdv_sha1_update(&c, pad, 64);
    rdv_sha1_update(&c, inner, 20);
    rdv_sha1_final(&c, out);
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
