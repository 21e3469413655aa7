/* Timing of the per-datagram work the library does, in the shapes the Go
 * SDK's benchmarks measure (client BenchmarkEncodePresence, netio/stun
 * BenchmarkParseVerify, client BenchmarkParseVerifyIntroduce), and the
 * bytes of state per context and per attempt. `make c-bench` prints it. */
#define _POSIX_C_SOURCE 200809L
#include "ctx.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile size_t sink;

int main(void) {
    static const uint8_t key[32] = {1};
    static const uint8_t handle[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x81, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
    uint8_t buf[RDV_STUN_MAX_DATAGRAM], tx[12] = {9};
    rdv_addr local, peer, plocal;
    rdv_stun_builder b;
    rdv_stun_msg m;
    size_t intro_len, req_len;
    uint8_t intro[RDV_STUN_MAX_DATAGRAM], req[RDV_STUN_MAX_DATAGRAM];
    const long n = 200000;
    long i;
    int round;
    double t, best;
    uint64_t seq = 0;

    rdv_addr_parse("192.168.1.2:4000", &local);
    /* Each figure is the fastest of 5 rounds: the machine is shared. */
    for (best = 1e18, round = 0; round < 5; round++) {
    t = now_ns();
    for (i = 0; i < n; i++) { /* presence refresh: encode and sign, as appendPresence */
        rdv_sb_init(&b, buf, sizeof buf, RDV_BINDING_REQUEST, tx);
        rdv_sb_username(&b, 'p', handle);
        rdv_sb_u64(&b, RDV_ATTR_SEQUENCE, ++seq);
        rdv_sb_xor_addr(&b, RDV_ATTR_LOCAL_ADDRESS, &local);
        rdv_sb_integrity_sha256(&b, key, 32);
        rdv_sb_fingerprint(&b);
        sink += b.len;
    }
    if ((now_ns() - t) / (double)n < best) best = (now_ns() - t) / (double)n;
    }
    printf("presence_encode_sign_ns_per_op %.0f\n", best);

    /* a presence request as netio/stun's BenchmarkParseVerify builds it */
    rdv_sb_init(&b, req, sizeof req, RDV_BINDING_REQUEST, tx);
    rdv_sb_username(&b, 'p', handle);
    rdv_sb_u64(&b, RDV_ATTR_SEQUENCE, 9);
    rdv_sb_integrity_sha256(&b, key, 32);
    rdv_sb_fingerprint(&b);
    req_len = b.len;
    for (best = 1e18, round = 0; round < 5; round++) {
    t = now_ns();
    for (i = 0; i < n; i++) {
        if (rdv_stun_parse(req, req_len, &m) != RDV_OK || rdv_stun_check_sha256(&m, key, 32) != RDV_OK) return 1;
        sink++;
    }
    if ((now_ns() - t) / (double)n < best) best = (now_ns() - t) / (double)n;
    }
    printf("presence_parse_verify_ns_per_op %.0f\n", best);

    /* INTRODUCE with both peer addresses, as the mediator sends it */
    rdv_addr_parse("198.51.100.7:40000", &peer);
    rdv_addr_parse("10.0.0.7:6000", &plocal);
    rdv_indication_txid('c', handle, 0, tx);
    rdv_sb_init(&b, intro, sizeof intro, RDV_INTRODUCE_INDICATION, tx);
    rdv_sb_username(&b, 'c', handle);
    rdv_sb_xor_addr(&b, RDV_ATTR_XOR_PEER_ADDRESS, &peer);
    rdv_sb_xor_addr(&b, RDV_ATTR_PEER_LOCAL_ADDRESS, &plocal);
    rdv_sb_integrity_sha256(&b, key, 32);
    rdv_sb_fingerprint(&b);
    intro_len = b.len;
    for (best = 1e18, round = 0; round < 5; round++) {
    t = now_ns();
    for (i = 0; i < n; i++) {
        rdv_addr a;
        char kind;
        uint8_t h[16];
        if (rdv_stun_parse(intro, intro_len, &m) != RDV_OK || rdv_stun_username(&m, &kind, h) != RDV_OK ||
            rdv_stun_check_sha256(&m, key, 32) != RDV_OK || rdv_stun_xor_addr(&m, RDV_ATTR_XOR_PEER_ADDRESS, &a) != RDV_OK)
            return 1;
        sink += a.port;
    }
    if ((now_ns() - t) / (double)n < best) best = (now_ns() - t) / (double)n;
    }
    printf("introduce_parse_verify_ns_per_op %.0f\n", best);
    printf("introduce_bytes %zu\n", intro_len);
    printf("context_bytes %zu\n", rdv_memory_size(NULL));
    printf("attempt_state_bytes %zu\n", sizeof(rdv_session));
    printf("attempt_turn_bytes %zu\n", sizeof(rdv_turn));
    printf("context_bytes_without_queues %zu\n", rdv_memory_size(NULL) - 2 * sizeof(rdv_queue));
    return 0;
}
