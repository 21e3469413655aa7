/* The relay fallback after a failed direct punch, on a virtual clock with
 * the game moving datagrams and this test playing the mediator, the TURN
 * server and the peer. Three joins are introduced and their punches fail:
 * one is declined (fails at once, reported failed), one is left alone
 * (fails one punch timeout later), one gets its relay credential: no bind
 * goes out until the allocation (401, then a signed Allocate), the bind
 * repeats the LAN address with the relayed one, RELAY-INTRODUCE opens the
 * permission, the probes go as Send indications and the peer's ack in a
 * Data indication connects on path 2, reported relayed. Then the ended
 * attempts' slots serve new attempts. */
#include "check.h"
#include "crypto.h"
#include "stun.h"

static const char *mediator = "192.0.2.1:3478";
static const char *turn_server = "192.0.2.50:3478";
static const char *token = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";
static const char *handles[3] = {"0123abcd-4567-49ef-8123-456789abcde0", "0123abcd-4567-49ef-8123-456789abcde1",
                                 "0123abcd-4567-49ef-8123-456789abcde2"};
static const char *realm = "rendezvous.test", *nonce = "abcdef0123456789";

static union { uint64_t a; uint8_t b[1 << 17]; } arena;
static uint8_t pkt[1200], buf[1200];
static rdv_addr med, turn, relayed, peer_relayed;
static uint8_t key[32], h[3][16], turn_key[16], probe_nonce[8];

/* The datagrams the context wants sent, sorted by where they go. */
typedef struct {
    int binds[3], reports[3], report_path[3], probes, allocates, signed_allocates, permissions, sends;
    int bind_has_relayed, bind_has_local;
} sent;

static int which(const rdv_stun_msg *m) {
    char kind;
    uint8_t hh[16];
    int i;
    if (rdv_stun_username(m, &kind, hh) != RDV_OK) return -1;
    for (i = 0; i < 3; i++)
        if (memcmp(hh, h[i], 16) == 0) return i;
    return -1;
}

/* answer_turn plays coturn: 401 with a nonce to an unsigned Allocate,
 * signed successes to everything else. */
static void answer_turn(rdv_ctx *c, uint64_t now, const rdv_stun_msg *m) {
    rdv_stun_builder b;
    uint16_t method = m->type & 0x3EEF;
    if (method == 0x0003 && !m->integrity_sha1) {
        rdv_sb_init(&b, buf, sizeof buf, 0x0113, m->txid);
        rdv_sb_error_code(&b, 401, "Unauthorized");
        rdv_sb_bytes(&b, RDV_ATTR_REALM, realm, strlen(realm));
        rdv_sb_bytes(&b, RDV_ATTR_NONCE, nonce, strlen(nonce));
        rdv_sb_fingerprint(&b);
    } else {
        CHECK(rdv_stun_check_sha1(m, turn_key, 16) == RDV_OK, "TURN request 0x%04x signed with the long-term key", m->type);
        rdv_sb_init(&b, buf, sizeof buf, (uint16_t)(method | 0x0100), m->txid);
        if (method == 0x0003) rdv_sb_xor_addr(&b, RDV_ATTR_XOR_RELAYED_ADDRESS, &relayed);
        if (method == 0x0003 || method == 0x0004) rdv_sb_u32(&b, RDV_ATTR_LIFETIME, 600);
        rdv_sb_integrity_sha1(&b, turn_key, 16);
        rdv_sb_fingerprint(&b);
    }
    rdv_feed(c, now, buf, b.len, &turn);
}

/* pump runs three updates at now, handling every datagram each sends (a
 * TURN request and its answer take one round). */
static void pump(rdv_ctx *c, uint64_t now, sent *s) {
    size_t n;
    rdv_addr to;
    rdv_stun_msg m;
    int round;
    for (round = 0; round < 3; round++) {
    rdv_update(c, now);
    while (rdv_poll_transmit(c, pkt, sizeof pkt, &n, &to) == RDV_OK) {
        if (n == 32 && memcmp(pkt, "RDVP", 4) == 0) { s->probes++; continue; }
        if (memcmp(&to, &turn, sizeof to) == 0 && (pkt[0] & 0xF0) == 0x40) { /* ChannelData: a probe once bound */
            CHECK(n == 36 && memcmp(pkt + 4, "RDVP", 4) == 0, "a probe on the channel");
            if (n == 36) memcpy(probe_nonce, pkt + 4 + 24, 8);
            s->sends++;
            continue;
        }
        CHECK(rdv_stun_parse(pkt, n, &m) == RDV_OK, "a STUN datagram");
        if (memcmp(&to, &turn, sizeof to) == 0) {
            if (m.type == 0x0016) { /* Send indication: a probe through the relay */
                const uint8_t *d;
                size_t dn;
                rdv_addr p;
                s->sends++;
                CHECK(rdv_stun_xor_addr(&m, RDV_ATTR_XOR_PEER_ADDRESS, &p) == RDV_OK &&
                          memcmp(&p, &peer_relayed, sizeof p) == 0 && rdv_stun_get(&m, RDV_ATTR_DATA, &d, &dn) == RDV_OK &&
                          dn == 32 && memcmp(d, "RDVP", 4) == 0,
                      "a probe to the peer's relayed address");
                if (dn == 32) memcpy(probe_nonce, d + 24, 8);
                continue;
            }
            if ((m.type & 0x3EEF) == 0x0003) { s->allocates++; s->signed_allocates += m.integrity_sha1 != 0; }
            if ((m.type & 0x3EEF) == 0x0008) s->permissions++;
            answer_turn(c, now, &m);
            continue;
        }
        CHECK(memcmp(&to, &med, sizeof to) == 0, "a datagram to the mediator");
        {
            int i = which(&m);
            uint8_t path;
            uint32_t ms;
            rdv_addr a;
            CHECK(i >= 0 && rdv_stun_check_sha256(&m, key, 32) == RDV_OK, "a signed request of ours");
            if (i < 0) continue;
            if (rdv_stun_outcome(&m, &path, &ms) == RDV_OK) {
                s->reports[i]++;
                s->report_path[i] = path;
            } else {
                s->binds[i]++;
                s->bind_has_relayed = rdv_stun_xor_addr(&m, RDV_ATTR_RELAYED_ADDRESS, &a) == RDV_OK &&
                                      memcmp(&a, &relayed, sizeof a) == 0;
                s->bind_has_local = rdv_stun_xor_addr(&m, RDV_ATTR_LOCAL_ADDRESS, &a) == RDV_OK && a.port == 5000;
            }
        }
    }
    }
}

static int event_for(rdv_ctx *c, uint32_t type, int i, rdv_event *ev) {
    while (rdv_next_event(c, ev) == RDV_OK)
        if (ev->type == type && memcmp(ev->handle, h[i], 16) == 0) return 1;
    return 0;
}

static void indicate(rdv_ctx *c, uint64_t now, int i, int relay, const rdv_addr *peer) {
    rdv_stun_builder b;
    uint8_t tx[12];
    rdv_indication_txid('c', h[i], relay, tx);
    rdv_sb_init(&b, buf, sizeof buf, relay ? RDV_RELAY_INTRODUCE_INDICATION : RDV_INTRODUCE_INDICATION, tx);
    rdv_sb_username(&b, 'c', h[i]);
    rdv_sb_xor_addr(&b, RDV_ATTR_XOR_PEER_ADDRESS, peer);
    rdv_sb_integrity_sha256(&b, key, 32);
    rdv_sb_fingerprint(&b);
    rdv_feed(c, now, buf, b.len, &med);
}

int main(void) {
    rdv_ctx *c;
    rdv_config cfg;
    rdv_addr peer_pub;
    rdv_event ev;
    sent s;
    uint64_t now = 5000000;
    int i;
    char text[200];

    memset(&cfg, 0, sizeof cfg);
    cfg.size = sizeof cfg;
    cfg.punch_timeout_ms = 1000;
    cfg.seed[0] = 7;
    CHECK(rdv_init(arena.b, sizeof arena.b, &cfg, &c) == RDV_OK, "init");
    rdv_set_local_addr(c, "10.0.0.2:5000");
    rdv_addr_parse(mediator, &med);
    rdv_addr_parse(turn_server, &turn);
    rdv_addr_parse("192.0.2.50:50000", &relayed);
    rdv_addr_parse("192.0.2.50:50001", &peer_relayed);
    rdv_addr_parse("198.51.100.20:6000", &peer_pub);
    rdv_capability_parse(token, key);
    snprintf(text, sizeof text, "user-b:%s:credential-b", realm);
    rdv_md5(text, strlen(text), turn_key);

    for (i = 0; i < 3; i++) {
        rdv_handle_parse(handles[i], h[i]);
        CHECK(rdv_join_start(c, now, mediator, handles[i], token) == RDV_OK, "join %d", i);
    }
    memset(&s, 0, sizeof s);
    pump(c, now, &s);
    CHECK(s.binds[0] == 1 && s.binds[1] == 1 && s.binds[2] == 1 && s.bind_has_local, "three binds with the LAN address");
    for (i = 0; i < 3; i++) {
        indicate(c, now, i, 0, &peer_pub);
        CHECK(event_for(c, RDV_EV_INTRODUCED, i, &ev), "introduced %d", i);
    }
    CHECK(rdv_relay_decline(c, now, handles[0]) == RDV_E_STATE, "no decline while punching");
    pump(c, now, &s);
    CHECK(s.probes >= 3, "direct probes %d", s.probes);

    /* The punch timeout: the fallback, with nothing reported yet. */
    memset(&s, 0, sizeof s);
    now += 1000;
    pump(c, now, &s);
    for (i = 0; i < 3; i++) {
        CHECK(rdv_next_event(c, &ev) == RDV_OK && ev.type == RDV_EV_RELAY_FALLBACK && ev.code == RDV_E_PUNCH_FAILED &&
                  memcmp(ev.handle, h[i], 16) == 0,
              "fallback event %d", i);
        CHECK(s.reports[i] == 0, "no outcome report for %d before the fallback ends", i);
    }
    CHECK(rdv_next_event(c, &ev) == RDV_E_WOULD_BLOCK, "three events only");

    /* 0 is declined: failed at once, reported failed. */
    CHECK(rdv_relay_decline(c, now, handles[0]) == RDV_OK, "decline");
    CHECK(event_for(c, RDV_EV_FAILED, 0, &ev) && ev.code == RDV_E_PUNCH_FAILED, "declined: failed");
    CHECK(rdv_relay_decline(c, now, handles[0]) == RDV_E_STATE, "declined twice");

    /* 1 gets its credential: the allocation first, no bind meanwhile. */
    CHECK(rdv_relay_start(c, now, handles[1], turn_server, "user-b", "credential-b") == RDV_OK, "relay start");
    CHECK(rdv_relay_start(c, now, handles[1], turn_server, "user-b", "credential-b") == RDV_E_STATE, "relay start twice");
    CHECK(rdv_relay_decline(c, now, handles[1]) == RDV_E_STATE, "no decline once relaying");
    now += 10;
    pump(c, now, &s); /* Allocate, 401, signed Allocate, success: answered within the pump */
    CHECK(s.reports[0] == 1 && s.report_path[0] == 3, "the declined attempt reported failed");
    /* the one bind since the fallback carries the relayed address: none went out before the allocation */
    CHECK(s.allocates == 2 && s.signed_allocates == 1, "allocated (%d, %d)", s.allocates, s.signed_allocates);
    CHECK(s.binds[1] == 1 && s.bind_has_relayed && s.bind_has_local, "the relayed bind repeats the LAN address");
    indicate(c, now, 1, 0, &peer_pub); /* a re-sent INTRODUCE starts no second direct punch */
    indicate(c, now, 1, 1, &peer_relayed);
    CHECK(event_for(c, RDV_EV_INTRODUCED, 1, &ev) && memcmp(&ev.addr, &peer_relayed, sizeof ev.addr) == 0,
          "relay-introduced to the peer's relayed address");
    memset(&s, 0, sizeof s);
    now += 10;
    pump(c, now, &s); /* CreatePermission, answered */
    now += 100;
    pump(c, now, &s);
    CHECK(s.permissions >= 1 && s.sends >= 1 && s.probes == 0, "probes through the relay only (%d permissions, %d sends, %d direct)",
          s.permissions, s.sends, s.probes);
    {
        rdv_stun_builder b;
        uint8_t ack[32], tx[12] = {1, 2, 3};
        memcpy(ack, "RDVP", 4);
        ack[4] = 2; ack[5] = 'h'; ack[6] = ack[7] = 0;
        memcpy(ack + 8, h[1], 16);
        memcpy(ack + 24, probe_nonce, 8);
        rdv_sb_init(&b, pkt, sizeof pkt, 0x0017, tx);
        rdv_sb_xor_addr(&b, RDV_ATTR_XOR_PEER_ADDRESS, &peer_relayed);
        rdv_sb_bytes(&b, RDV_ATTR_DATA, ack, 32);
        rdv_sb_fingerprint(&b);
        rdv_feed(c, now, pkt, b.len, &turn);
    }
    CHECK(event_for(c, RDV_EV_CONNECTED, 1, &ev) && ev.path == 2 && memcmp(&ev.addr, &peer_relayed, sizeof ev.addr) == 0,
          "connected through the relay");
    memset(&s, 0, sizeof s);
    pump(c, now, &s);
    CHECK(s.reports[1] == 1 && s.report_path[1] == 2, "reported relayed");

    /* 2 was left alone: it fails one punch timeout after its event. */
    CHECK(s.reports[2] == 0, "2 still waits");
    now = 5000000 + 2000;
    pump(c, now, &s);
    CHECK(event_for(c, RDV_EV_FAILED, 2, &ev) && ev.code == RDV_E_PUNCH_FAILED, "2 failed after the window");
    CHECK(s.reports[2] == 1 && s.report_path[2] == 3, "2 reported failed");

    /* The table: once their reports are settled (retransmissions given up
     * here), the failed attempts' slots serve new ones; the relayed one
     * keeps its slot. 5 free slots, 2 reusable, then none. */
    for (i = 0; i < 6; i++) pump(c, now += 4000, &s);
    for (i = 0; i < 8; i++) {
        char more[40];
        snprintf(more, sizeof more, "0123abcd-4567-49ef-8123-4567890000%02d", i);
        CHECK(rdv_join_start(c, now, mediator, more, token) == (i < 7 ? RDV_OK : RDV_E_BUSY), "join %d of 8 more", i);
    }

    rdv_close(c);
    if (check_failures) { fprintf(stderr, "test_fallback: %d failures\n", check_failures); return 1; }
    printf("test_fallback: ok\n");
    return 0;
}
