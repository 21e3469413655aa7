/* Block buffering and padding shared by the Merkle–Damgård hashes (SHA-256,
 * SHA-1, MD5): all three take 64-byte blocks and end with 0x80, zeros and
 * the 64-bit bit length; they differ only in the compression function and
 * in byte order. Internal to the library. */
#ifndef RDV_MD_BLOCK_H
#define RDV_MD_BLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Compresses one 64-byte block into the chaining state h. */
typedef void (*rdv_md_block_fn)(uint32_t *h, const uint8_t *block);

/* The bytes hashed so far and the partial block not yet compressed. */
typedef struct {
    uint64_t len;
    uint8_t buf[64];
    size_t nbuf;
} rdv_md_state;

/* A Merkle–Damgård hash as its users outside the hash need it (HMAC):
 * the initial state of words 32-bit words, the compression function and
 * the byte order. The digest is 4 * words bytes. */
typedef struct {
    const uint32_t *iv;
    size_t words;
    rdv_md_block_fn block;
    int big_endian;
} rdv_md_hash;

void rdv_md_init(rdv_md_state *s);
void rdv_md_update(rdv_md_state *s, uint32_t *h, rdv_md_block_fn block, const void *data, size_t n);
/* Pads, compresses the rest and writes the words of h to out, the length
 * and the words big-endian (SHA) or little-endian (MD5). */
void rdv_md_final(rdv_md_state *s, uint32_t *h, rdv_md_block_fn block, int big_endian,
                  uint8_t *out, size_t words);

#endif
