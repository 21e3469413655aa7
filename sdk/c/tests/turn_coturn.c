/* Two TURN clients of the library against a real coturn (started by
 * client/clib_turn_test.go): each allocates with the long-term credential,
 * permits and binds a channel to the other's relayed address, and a
 * datagram goes each way as ChannelData; then a forced Refresh of the
 * allocation succeeds. Prints "relay ok" and exits 0, or says what failed.
 *   turn_coturn SERVER USERNAME PASSWORD */
#define _POSIX_C_SOURCE 200809L
#include "turn.h"
#include "platform.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

typedef struct {
    rdv_turn t;
    intptr_t s;
    char got[64];
} side;

/* pump sends what the client wants sent and feeds what arrived. */
static void pump(side *x) {
    uint8_t buf[1500];
    size_t n;
    rdv_addr from, peer;
    uint64_t next;
    const uint8_t *data;
    size_t dn;
    while ((n = rdv_turn_poll(&x->t, now_ms(), buf, sizeof buf, &next)) > 0) rdv_plat_send(x->s, buf, n, &x->t.server);
    while (rdv_plat_recv(x->s, buf, sizeof buf, &n, &from) == RDV_OK) {
        if (rdv_turn_feed(&x->t, now_ms(), buf, n, &data, &dn, &peer) && dn < sizeof x->got) {
            memcpy(x->got, data, dn);
            x->got[dn] = 0;
        }
    }
}

static int wait_for(side *a, side *b, int (*done)(side *, side *), const char *what) {
    uint64_t end = now_ms() + 10000;
    struct timespec ts = {0, 5 * 1000000L};
    while (now_ms() < end) {
        pump(a);
        pump(b);
        if (a->t.state == RDV_TURN_FAILED || b->t.state == RDV_TURN_FAILED) {
            rdv_turn *f = a->t.state == RDV_TURN_FAILED ? &a->t : &b->t;
            fprintf(stderr, "%s: TURN failed: %s (code %d)\n", what, rdv_strerror(f->error), f->last_code);
            return 0;
        }
        if (done(a, b)) return 1;
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "%s: timed out\n", what);
    return 0;
}

static int allocated(side *a, side *b) { return a->t.state == RDV_TURN_ALLOCATED && b->t.state == RDV_TURN_ALLOCATED; }
static int bound(side *a, side *b) { return a->t.peers[0].bound && b->t.peers[0].bound; }
static int b_got(side *a, side *b) { (void)a; return strcmp(b->got, "hello via relay") == 0; }
static int a_got(side *a, side *b) { (void)b; return strcmp(a->got, "and back") == 0; }
/* forced_ms is when the test made the allocation's Refresh due; an answered
 * Refresh moves the next one past it (half the new lifetime later). The
 * request and its answer can both pass in one pump on loopback, so the
 * test waits for that move rather than looking for the request in flight. */
static uint64_t forced_ms;
static int refreshed(side *a, side *b) { (void)b; return a->t.req_method == 0 && a->t.alloc_refresh_ms > forced_ms; }

int main(int argc, char **argv) {
    static side a, b;
    uint8_t seed[32] = {1}, out[1500];
    rdv_addr local;
    size_t n;
    uint32_t before;
    if (argc != 4) return 2;
    rdv_addr_parse("127.0.0.1:0", &local);
    if (rdv_turn_init(&a.t, argv[1], argv[2], argv[3], seed) != RDV_OK) return 1;
    seed[0] = 2;
    if (rdv_turn_init(&b.t, argv[1], argv[2], argv[3], seed) != RDV_OK) return 1;
    if (rdv_plat_open(&local, &a.s) != RDV_OK || rdv_plat_open(&local, &b.s) != RDV_OK) return 1;
    if (!wait_for(&a, &b, allocated, "allocate")) return 1;
    if (a.t.relayed.port == 0 || a.t.relayed.port == b.t.relayed.port) { fprintf(stderr, "relayed addresses\n"); return 1; }
    rdv_turn_add_peer(&a.t, &b.t.relayed);
    rdv_turn_add_peer(&b.t, &a.t.relayed);
    if (!wait_for(&a, &b, bound, "permission and channel")) return 1;
    n = rdv_turn_wrap(&a.t, &b.t.relayed, "hello via relay", 15, out, sizeof out);
    if (n != 4 + 15 || (out[0] & 0xF0) != 0x40) { fprintf(stderr, "not ChannelData\n"); return 1; }
    rdv_plat_send(a.s, out, n, &a.t.server);
    if (!wait_for(&a, &b, b_got, "data a to b")) return 1;
    n = rdv_turn_wrap(&b.t, &a.t.relayed, "and back", 8, out, sizeof out);
    rdv_plat_send(b.s, out, n, &b.t.server);
    if (!wait_for(&a, &b, a_got, "data b to a")) return 1;
    before = a.t.lifetime_s;
    forced_ms = now_ms();
    a.t.alloc_refresh_ms = forced_ms; /* force the timed Refresh now */
    if (!wait_for(&a, &b, refreshed, "refresh") || a.t.state != RDV_TURN_ALLOCATED || !a.t.lifetime_s) return 1;
    printf("relay ok (lifetime %u s, then %u s)\n", before, a.t.lifetime_s);
    return 0;
}
