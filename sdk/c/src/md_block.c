/* Merkle–Damgård block buffering and padding (md_block.h). */
#include "md_block.h"
#include <string.h>

void rdv_md_init(rdv_md_state *s) {
    s->len = 0;
    s->nbuf = 0;
}

void rdv_md_update(rdv_md_state *s, uint32_t *h, rdv_md_block_fn block, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    s->len += n;
    if (s->nbuf) {
        size_t k = 64 - s->nbuf;
        if (k > n) k = n;
        memcpy(s->buf + s->nbuf, p, k);
        s->nbuf += k; p += k; n -= k;
        if (s->nbuf < 64) return;
        block(h, s->buf);
        s->nbuf = 0;
    }
    for (; n >= 64; p += 64, n -= 64) block(h, p);
    if (n) { memcpy(s->buf, p, n); s->nbuf = n; }
}

void rdv_md_final(rdv_md_state *s, uint32_t *h, rdv_md_block_fn block, int big_endian,
                  uint8_t *out, size_t words) {
    uint64_t bits = s->len * 8;
    uint8_t pad[72];
    size_t padn = (s->nbuf < 56 ? 56 : 120) - s->nbuf;
    size_t i;
    int j;
    memset(pad, 0, sizeof pad);
    pad[0] = 0x80;
    for (i = 0; i < 8; i++) pad[padn + i] = (uint8_t)(bits >> (big_endian ? 56 - 8 * i : 8 * i));
    rdv_md_update(s, h, block, pad, padn + 8);
    for (i = 0; i < words; i++)
        for (j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(h[i] >> (big_endian ? 24 - 8 * j : 8 * j));
}
