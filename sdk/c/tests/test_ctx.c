/* The session context on a virtual clock, with the game moving datagrams
 * (rdv_feed / rdv_poll_transmit) and this test playing the mediator and
 * the peer: presence refresh and its retransmission, an OFFER, the host's
 * bind, INTRODUCE (a forged one is dropped), the punch, the outcome report,
 * the game's own datagrams, the fixed tables' limits, and a relay-only
 * OFFER the host declines. */
#include "check.h"
#include "stun.h"

static const char *mediator = "192.0.2.1:3478";
static const char *pres_handle = "0123abcd-4567-89ef-0123-456789abcdef";
static const char *pres_token = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";
static const uint8_t attempt[16] = {0xaa, 1, 2, 3, 4, 5, 0x46, 7, 0x88, 9, 10, 11, 12, 13, 14, 15};

static union { uint64_t a; uint8_t b[1 << 17]; } arena;
static uint8_t pkt[1200];

/* next_out pops one datagram the context wants sent. */
static size_t next_out(rdv_ctx *c, rdv_addr *to) {
    size_t n = 0;
    if (rdv_poll_transmit(c, pkt, sizeof pkt, &n, to) != RDV_OK) return 0;
    return n;
}

static int next_event(rdv_ctx *c, uint32_t type, rdv_event *ev) {
    while (rdv_next_event(c, ev) == RDV_OK)
        if (ev->type == type) return 1;
    return 0;
}

int main(void) {
    rdv_ctx *c;
    rdv_config cfg;
    rdv_addr med, to, peer_pub, mapped;
    rdv_stun_msg m;
    rdv_stun_builder b;
    rdv_event ev;
    rdv_stats st;
    uint8_t pcap[32], hkey[32], ph[16], req_tx[12], tx[12], buf[1200], nonce[8];
    uint64_t now = 1000000, seq1, seq2;
    size_t n;
    int i;

    memset(&cfg, 0, sizeof cfg);
    cfg.size = sizeof cfg;
    cfg.seed[0] = 42; /* deterministic: no system call */
    CHECK(rdv_memory_size(&cfg) <= sizeof arena.b, "memory size %zu", rdv_memory_size(&cfg));
    CHECK(rdv_init(arena.b + 1, sizeof arena.b - 1, &cfg, &c) == RDV_E_INVALID_ARGUMENT, "misaligned memory");
    CHECK(rdv_init(arena.b, 100, &cfg, &c) == RDV_E_BUFFER_FULL, "too little memory");
    cfg.size = 4;
    CHECK(rdv_init(arena.b, sizeof arena.b, &cfg, &c) == RDV_E_INVALID_ARGUMENT, "wrong struct size");
    cfg.size = sizeof cfg;
    CHECK(rdv_init(arena.b, sizeof arena.b, &cfg, &c) == RDV_OK, "init");
    rdv_addr_parse(mediator, &med);
    rdv_capability_parse(pres_token, pcap);
    rdv_handle_parse(pres_handle, ph);
    rdv_host_attempt_key(pcap, attempt, hkey);
    CHECK(rdv_set_local_addr(c, "10.0.0.2:5000") == RDV_OK, "local");
    CHECK(rdv_host_start(c, now, mediator, pres_handle, "bad", 5) == RDV_E_BAD_CAPABILITY, "bad token");
    CHECK(rdv_host_start(c, now, mediator, pres_handle, pres_token, 5) == RDV_OK, "host start");
    CHECK(rdv_host_start(c, now, mediator, pres_handle, pres_token, 5) == RDV_E_STATE, "second start");

    /* The first refresh, then its retransmission with the same sequence. */
    rdv_update(c, now);
    n = next_out(c, &to);
    CHECK(n > 0 && rdv_stun_parse(pkt, n, &m) == RDV_OK && rdv_stun_check_sha256(&m, pcap, 32) == RDV_OK,
          "signed refresh");
    CHECK(rdv_stun_u64(&m, RDV_ATTR_SEQUENCE, &seq1) == RDV_OK && seq1 == 1, "sequence 1");
    memcpy(req_tx, m.txid, 12);
    CHECK(next_out(c, &to) == 0, "one datagram");
    rdv_update(c, now + 499);
    CHECK(next_out(c, &to) == 0, "no retransmission before the RTO");
    now += 500;
    rdv_update(c, now);
    n = next_out(c, &to);
    CHECK(n > 0 && rdv_stun_parse(pkt, n, &m) == RDV_OK && memcmp(m.txid, req_tx, 12) == 0 &&
              rdv_stun_u64(&m, RDV_ATTR_SEQUENCE, &seq2) == RDV_OK && seq2 == 1,
          "retransmission: same transaction and sequence");

    /* The mediator's answer names the pending attempt. */
    rdv_addr_parse("203.0.113.5:40000", &mapped);
    rdv_sb_init(&b, buf, sizeof buf, RDV_BINDING_SUCCESS, req_tx);
    rdv_sb_xor_addr(&b, RDV_ATTR_XOR_MAPPED_ADDRESS, &mapped);
    rdv_sb_u32(&b, RDV_ATTR_RDV_LIFETIME, 20);
    rdv_sb_bytes(&b, RDV_ATTR_ATTEMPT, attempt, 16);
    rdv_sb_integrity_sha256(&b, pcap, 32);
    rdv_sb_fingerprint(&b);
    /* an answer from anywhere but the mediator is the game's datagram */
    rdv_addr_parse("192.0.2.99:3478", &to);
    rdv_feed(c, now, buf, b.len, &to);
    CHECK(rdv_recv(c, pkt, sizeof pkt, &n, &to) == RDV_OK && n == b.len, "non-mediator STUN is the game's");
    rdv_feed(c, now, buf, b.len, &med);
    CHECK(next_event(c, RDV_EV_PRESENCE, &ev) && memcmp(&ev.addr, &mapped, sizeof mapped) == 0, "presence event");
    rdv_update(c, now);
    n = next_out(c, &to);
    CHECK(n > 0 && rdv_stun_parse(pkt, n, &m) == RDV_OK && rdv_stun_check_sha256(&m, hkey, 32) == RDV_OK,
          "host bind signed with the derived key");
    {
        char kind;
        uint8_t h[16];
        rdv_addr local;
        CHECK(rdv_stun_username(&m, &kind, h) == RDV_OK && kind == 'h' && memcmp(h, attempt, 16) == 0, "h: user");
        CHECK(rdv_stun_xor_addr(&m, RDV_ATTR_LOCAL_ADDRESS, &local) == RDV_OK && local.port == 5000, "local addr");
    }
    /* The next refresh comes at min(5 s, 20 s / 3) * 0.9 = 4.5 s. */
    for (i = 0; i < 2; i++) {
        int refreshes = 0;
        rdv_update(c, now + (i ? 4500 : 4499));
        while ((n = next_out(c, &to)) > 0) {
            char kind;
            uint8_t h[16];
            if (rdv_stun_parse(pkt, n, &m) == RDV_OK && rdv_stun_username(&m, &kind, h) == RDV_OK && kind == 'p') {
                refreshes++;
                CHECK(rdv_stun_u64(&m, RDV_ATTR_SEQUENCE, &seq2) == RDV_OK && seq2 == 2, "next sequence");
            }
        }
        CHECK(refreshes == i, "%d refreshes at %s 4.5 s", refreshes, i ? "" : "just before");
    }

    /* A forged INTRODUCE (wrong key) is dropped; the real one starts the punch. */
    rdv_addr_parse("198.51.100.20:6000", &peer_pub);
    rdv_indication_txid('h', attempt, 0, tx);
    for (i = 0; i < 2; i++) {
        uint8_t key[32];
        memcpy(key, hkey, 32);
        if (i == 0) key[0] ^= 1;
        rdv_sb_init(&b, buf, sizeof buf, RDV_INTRODUCE_INDICATION, tx);
        rdv_sb_username(&b, 'h', attempt);
        rdv_sb_xor_addr(&b, RDV_ATTR_XOR_PEER_ADDRESS, &peer_pub);
        rdv_sb_integrity_sha256(&b, key, 32);
        rdv_sb_fingerprint(&b);
        rdv_feed(c, now, buf, b.len, &med);
        CHECK(next_event(c, RDV_EV_INTRODUCED, &ev) == i, "introduce %d", i);
    }
    rdv_get_stats(c, &st);
    CHECK(st.stun_dropped == 1, "the forged INTRODUCE counted");
    rdv_update(c, now);
    while ((n = next_out(c, &to)) > 0 && n != 32) {}
    CHECK(n == 32 && memcmp(pkt, "RDVP", 4) == 0 && pkt[4] == 1 && pkt[5] == 'h' && to.port == 6000, "probe");
    memcpy(nonce, pkt + 24, 8);
    /* The peer's probe is acknowledged; the peer's ack confirms the path. */
    memcpy(buf, "RDVP", 4);
    buf[4] = 1; buf[5] = 'c'; buf[6] = buf[7] = 0;
    memcpy(buf + 8, attempt, 16);
    memset(buf + 24, 7, 8);
    rdv_feed(c, now, buf, 32, &peer_pub);
    n = next_out(c, &to);
    CHECK(n == 32 && pkt[4] == 2 && pkt[5] == 'h' && pkt[24] == 7, "ack echoes the peer's nonce");
    buf[4] = 2;
    rdv_feed(c, now + 30, buf, 32, &peer_pub); /* an ack with the wrong nonce */
    CHECK(!next_event(c, RDV_EV_CONNECTED, &ev), "wrong nonce does not connect");
    memcpy(buf + 24, nonce, 8);
    rdv_feed(c, now + 40, buf, 32, &peer_pub);
    CHECK(next_event(c, RDV_EV_CONNECTED, &ev) && ev.path == 1 && memcmp(&ev.addr, &peer_pub, sizeof peer_pub) == 0,
          "connected");
    /* The outcome report: direct, signed with the host key. */
    n = 0;
    while ((n = next_out(c, &to)) > 0) {
        uint8_t path;
        uint32_t ms;
        if (rdv_stun_parse(pkt, n, &m) == RDV_OK && rdv_stun_outcome(&m, &path, &ms) == RDV_OK) {
            CHECK(path == 1 && rdv_stun_check_sha256(&m, hkey, 32) == RDV_OK, "outcome report");
            break;
        }
    }
    CHECK(n > 0, "an outcome report was sent");

    /* The game's datagrams: in order, TOO_LARGE keeps them, a full queue counts drops. */
    for (i = 0; i < 20; i++) {
        buf[0] = (uint8_t)(0x80 + i);
        rdv_feed(c, now, buf, 10, &peer_pub);
    }
    CHECK(rdv_recv(c, pkt, 5, &n, &to) == RDV_E_TOO_LARGE && n == 10, "too large");
    for (i = 0; i < 16; i++) CHECK(rdv_recv(c, pkt, sizeof pkt, &n, &to) == RDV_OK && pkt[0] == 0x80 + i, "order %d", i);
    CHECK(rdv_recv(c, pkt, sizeof pkt, &n, &to) == RDV_E_WOULD_BLOCK, "empty");
    rdv_get_stats(c, &st);
    CHECK(st.app_dropped == 4, "app drops %u", st.app_dropped);
    CHECK(rdv_send(c, "x", 1, &peer_pub) == RDV_OK && next_out(c, &to) == 1, "game send");

    /* An OFFER for a relay-only attempt: the bind's answer says so
     * (RDV_EV_RELAY_ONLY); a host with no relay declines and it fails. */
    {
        static const uint8_t att2[16] = {0xbb, 1, 2, 3, 4, 5, 0x46, 7, 0x88, 9, 10, 11, 12, 13, 14, 15};
        static const char *att2_text = "bb010203-0405-4607-8809-0a0b0c0d0e0f";
        uint8_t key2[32], bind_tx[12];
        rdv_host_attempt_key(pcap, att2, key2);
        memset(tx, 9, sizeof tx);
        rdv_sb_init(&b, buf, sizeof buf, RDV_OFFER_INDICATION, tx);
        rdv_sb_username(&b, 'p', ph);
        rdv_sb_bytes(&b, RDV_ATTR_ATTEMPT, att2, 16);
        rdv_sb_integrity_sha256(&b, pcap, 32);
        rdv_sb_fingerprint(&b);
        rdv_feed(c, now, buf, b.len, &med);
        CHECK(next_event(c, RDV_EV_ATTEMPT, &ev) && memcmp(ev.handle, att2, 16) == 0, "offered");
        CHECK(rdv_relay_decline(c, now, att2_text) == RDV_E_STATE, "no decline before the mediator says relay-only");
        rdv_update(c, now);
        memset(bind_tx, 0, sizeof bind_tx);
        while ((n = next_out(c, &to)) > 0)
            if (rdv_stun_parse(pkt, n, &m) == RDV_OK && rdv_stun_check_sha256(&m, key2, 32) == RDV_OK) memcpy(bind_tx, m.txid, 12);
        rdv_sb_init(&b, buf, sizeof buf, RDV_BINDING_SUCCESS, bind_tx);
        rdv_sb_xor_addr(&b, RDV_ATTR_XOR_MAPPED_ADDRESS, &mapped);
        rdv_sb_bytes(&b, RDV_ATTR_RELAY_ONLY, "", 0);
        rdv_sb_integrity_sha256(&b, key2, 32);
        rdv_sb_fingerprint(&b);
        rdv_feed(c, now, buf, b.len, &med);
        CHECK(next_event(c, RDV_EV_RELAY_ONLY, &ev) && memcmp(ev.handle, att2, 16) == 0, "relay-only");
        CHECK(rdv_relay_decline(c, now, att2_text) == RDV_OK, "declined");
        CHECK(next_event(c, RDV_EV_FAILED, &ev) && ev.code == RDV_E_REJECTED && memcmp(ev.handle, att2, 16) == 0,
              "a declined relay-only attempt fails");
        rdv_update(c, now + 1);
        while ((n = next_out(c, &to)) > 0) {
            uint8_t path;
            uint32_t ms;
            CHECK(!(rdv_stun_parse(pkt, n, &m) == RDV_OK && rdv_stun_outcome(&m, &path, &ms) == RDV_OK &&
                    rdv_stun_check_sha256(&m, key2, 32) == RDV_OK),
                  "no outcome report: nothing was punched");
        }
    }

    rdv_close(c);
    if (check_failures) { fprintf(stderr, "test_ctx: %d failures\n", check_failures); return 1; }
    printf("test_ctx: ok\n");
    return 0;
}
