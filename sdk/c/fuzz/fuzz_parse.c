/* libFuzzer target for the parser, the TURN client's receive path and every accessor a received datagram
 * reaches: whatever the bytes, no read outside them (ASan), no undefined
 * behaviour (UBSan), and a message the parser accepts re-verifies the same
 * way twice. `make c-fuzz` runs it, seeded with the golden vectors. */
#include "stun.h"
#include "turn.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const uint8_t key[32] = {1};
    rdv_stun_msg m;
    rdv_addr a;
    uint64_t u64;
    uint32_t u32, ms;
    uint8_t path, h[16];
    const uint8_t *att[4], *v;
    size_t n;
    int code;
    char kind;
    {
        /* the TURN client's receive path: ChannelData, Data indications, answers */
        static const uint8_t seed[32] = {3};
        rdv_turn t;
        rdv_addr peer;
        const uint8_t *d;
        size_t dn;
        if (rdv_turn_init(&t, "127.0.0.1:3478", "user", "pass", seed) == RDV_OK) {
            uint8_t out[RDV_STUN_MAX_DATAGRAM];
            uint64_t next;
            (void)rdv_turn_poll(&t, 0, out, sizeof out, &next);
            if (size >= 32) memcpy(t.req_tx, data + 8, 12); /* let the input answer the request */
            (void)rdv_turn_feed(&t, 1, data, size, &d, &dn, &peer);
            (void)rdv_turn_poll(&t, 2, out, sizeof out, &next);
        }
    }
    if (rdv_stun_parse(data, size, &m) != RDV_OK) return 0;
    (void)rdv_stun_username(&m, &kind, h);
    (void)rdv_stun_u64(&m, RDV_ATTR_SEQUENCE, &u64);
    (void)rdv_stun_u32(&m, RDV_ATTR_RDV_LIFETIME, &u32);
    (void)rdv_stun_u32(&m, RDV_ATTR_LIFETIME, &u32);
    (void)rdv_stun_xor_addr(&m, RDV_ATTR_XOR_MAPPED_ADDRESS, &a);
    (void)rdv_stun_xor_addr(&m, RDV_ATTR_XOR_PEER_ADDRESS, &a);
    (void)rdv_stun_xor_addr(&m, RDV_ATTR_PEER_LOCAL_ADDRESS, &a);
    (void)rdv_stun_xor_addr(&m, RDV_ATTR_XOR_RELAYED_ADDRESS, &a);
    (void)rdv_stun_outcome(&m, &path, &ms);
    (void)rdv_stun_error_code(&m, &code, &v, &n);
    (void)rdv_stun_get(&m, RDV_ATTR_NONCE, &v, &n);
    (void)rdv_stun_attempts(&m, att);
    if (rdv_stun_check_sha256(&m, key, 32) != rdv_stun_check_sha256(&m, key, 32)) __builtin_trap();
    (void)rdv_stun_check_sha1(&m, key, 32);
    return 0;
}
