/* Embedded hashes and MACs: SHA-256, SHA-1, MD5, HMAC over the first two,
 * CRC-32. Internal to the library (not installed). No global state: every
 * context lives in the caller's memory and every table is const. */
#ifndef RDV_CRYPTO_H
#define RDV_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include "md_block.h"

typedef struct {
    uint32_t h[8];
    rdv_md_state s;
} rdv_sha256_ctx;

typedef struct {
    uint32_t h[5];
    rdv_md_state s;
} rdv_sha1_ctx;

typedef struct {
    uint32_t h[4];
    rdv_md_state s;
} rdv_md5_ctx;

/* The hashes' descriptors, for HMAC (hmac.c). */
extern const rdv_md_hash rdv_sha256_md;
extern const rdv_md_hash rdv_sha1_md;

void rdv_sha256_init(rdv_sha256_ctx *c);
void rdv_sha256_update(rdv_sha256_ctx *c, const void *data, size_t n);
void rdv_sha256_final(rdv_sha256_ctx *c, uint8_t out[32]);
void rdv_sha256(const void *data, size_t n, uint8_t out[32]);

void rdv_sha1_init(rdv_sha1_ctx *c);
void rdv_sha1_update(rdv_sha1_ctx *c, const void *data, size_t n);
void rdv_sha1_final(rdv_sha1_ctx *c, uint8_t out[20]);
void rdv_sha1(const void *data, size_t n, uint8_t out[20]);

void rdv_md5_init(rdv_md5_ctx *c);
void rdv_md5_update(rdv_md5_ctx *c, const void *data, size_t n);
void rdv_md5_final(rdv_md5_ctx *c, uint8_t out[16]);
void rdv_md5(const void *data, size_t n, uint8_t out[16]);

/* HMAC (RFC 2104). Keys longer than the 64-byte block are hashed first. */
void rdv_hmac_sha256(const uint8_t *key, size_t klen, const void *msg, size_t n, uint8_t out[32]);
/* Two-part message: HMAC over a || b, so a header can be patched without a copy. */
void rdv_hmac_sha256_2(const uint8_t *key, size_t klen, const void *a, size_t na,
                       const void *b, size_t nb, uint8_t out[32]);
void rdv_hmac_sha1(const uint8_t *key, size_t klen, const void *msg, size_t n, uint8_t out[20]);
void rdv_hmac_sha1_2(const uint8_t *key, size_t klen, const void *a, size_t na,
                     const void *b, size_t nb, uint8_t out[20]);

/* CRC-32 (IEEE 802.3, reflected, as zlib and RFC 8489's FINGERPRINT use). */
uint32_t rdv_crc32(uint32_t crc, const void *data, size_t n);

/* Constant-time equality: 1 when equal. */
int rdv_ct_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
