/* Byte-for-byte compatibility with the Go SDK and the server's codec: every
 * vector of testdata/golden.txt (written by client/golden_vectors_test.go)
 * is rebuilt from its script with the C builder and must equal the Go
 * bytes; then the Go bytes are parsed with the C parser and every scripted
 * value must come back, the integrity must verify with the key and fail
 * with another, and an indication's transaction ID must be the mediator's. */
#include "check.h"
#include "stun.h"
#include "crypto.h"

#include <stdlib.h>

#define MAX_OPS 16

enum op_kind { OP_USERNAME, OP_U64, OP_U32, OP_XADDR, OP_ATTEMPT, OP_EMPTY, OP_OUTCOME, OP_ERROR, OP_UNKNOWN, OP_INTEGRITY, OP_FINGERPRINT };

struct op {
    enum op_kind kind;
    uint16_t type;
    uint64_t num;
    uint32_t num2;
    char kindc;
    uint8_t handle[16];
    rdv_addr addr;
    char text[64];
    uint16_t list[8];
    size_t nlist;
    uint8_t key[32];
};

struct vector {
    char name[64];
    uint16_t type;
    uint8_t txid[12];
    struct op ops[MAX_OPS];
    int nops;
    uint8_t bytes[RDV_STUN_MAX_DATAGRAM];
    int nbytes;
};

static int vectors_checked;

static void check_vector(const struct vector *v) {
    uint8_t buf[RDV_STUN_MAX_DATAGRAM], other[32] = {0};
    rdv_stun_builder b;
    rdv_stun_msg m;
    int i, k, nattempts = 0, expect_attempts = 0;
    const uint8_t *attempts[4];
    const uint8_t *key = NULL;
    char hexgot[2 * RDV_STUN_MAX_DATAGRAM + 1], hexwant[2 * RDV_STUN_MAX_DATAGRAM + 1];

    rdv_sb_init(&b, buf, sizeof buf, v->type, v->txid);
    for (i = 0; i < v->nops; i++) {
        const struct op *o = &v->ops[i];
        switch (o->kind) {
        case OP_USERNAME: rdv_sb_username(&b, o->kindc, o->handle); break;
        case OP_U64: rdv_sb_u64(&b, o->type, o->num); break;
        case OP_U32: rdv_sb_u32(&b, o->type, (uint32_t)o->num); break;
        case OP_XADDR: rdv_sb_xor_addr(&b, o->type, &o->addr); break;
        case OP_ATTEMPT: rdv_sb_bytes(&b, RDV_ATTR_ATTEMPT, o->handle, 16); expect_attempts++; break;
        case OP_EMPTY: rdv_sb_bytes(&b, o->type, NULL, 0); break;
        case OP_OUTCOME: rdv_sb_outcome(&b, (uint8_t)o->num, o->num2); break;
        case OP_ERROR: rdv_sb_error_code(&b, (int)o->num, o->text); break;
        case OP_UNKNOWN: rdv_sb_unknown(&b, o->list, o->nlist); break;
        case OP_INTEGRITY: rdv_sb_integrity_sha256(&b, o->key, 32); key = o->key; break;
        case OP_FINGERPRINT: rdv_sb_fingerprint(&b); break;
        }
    }
    CHECK(b.err == RDV_OK, "%s: build: %s", v->name, rdv_strerror(b.err));
    if (b.len != (size_t)v->nbytes || memcmp(buf, v->bytes, b.len) != 0) {
        tohex(buf, b.len, hexgot);
        tohex(v->bytes, (size_t)v->nbytes, hexwant);
        CHECK(0, "%s: C bytes differ from Go's\n C  %s\n Go %s", v->name, hexgot, hexwant);
    }

    /* Decode the Go bytes. */
    CHECK(rdv_stun_parse(v->bytes, (size_t)v->nbytes, &m) == RDV_OK, "%s: parse", v->name);
    if (!m.raw) return;
    CHECK(m.type == v->type && memcmp(m.txid, v->txid, 12) == 0, "%s: header", v->name);
    for (i = 0; i < v->nops; i++) {
        const struct op *o = &v->ops[i];
        uint64_t u64;
        uint32_t u32, ms;
        uint8_t path, h[16];
        rdv_addr a;
        char kind;
        int code;
        const uint8_t *reason, *val;
        size_t n;
        switch (o->kind) {
        case OP_USERNAME:
            CHECK(rdv_stun_username(&m, &kind, h) == RDV_OK && kind == o->kindc && memcmp(h, o->handle, 16) == 0,
                  "%s: username", v->name);
            break;
        case OP_U64:
            CHECK(rdv_stun_u64(&m, o->type, &u64) == RDV_OK && u64 == o->num, "%s: u64", v->name);
            break;
        case OP_U32:
            CHECK(rdv_stun_u32(&m, o->type, &u32) == RDV_OK && u32 == o->num, "%s: u32", v->name);
            break;
        case OP_XADDR:
            CHECK(rdv_stun_xor_addr(&m, o->type, &a) == RDV_OK && memcmp(&a, &o->addr, sizeof a) == 0,
                  "%s: address %04x", v->name, o->type);
            break;
        case OP_ATTEMPT: break; /* below, in order */
        case OP_EMPTY:
            CHECK(rdv_stun_get(&m, o->type, &val, &n) == RDV_OK && n == 0, "%s: empty", v->name);
            break;
        case OP_OUTCOME:
            CHECK(rdv_stun_outcome(&m, &path, &ms) == RDV_OK && path == o->num && ms == o->num2, "%s: outcome",
                  v->name);
            break;
        case OP_ERROR:
            CHECK(rdv_stun_error_code(&m, &code, &reason, &n) == RDV_OK && code == (int)o->num &&
                      n == strlen(o->text) && memcmp(reason, o->text, n) == 0,
                  "%s: error code", v->name);
            break;
        case OP_UNKNOWN:
            CHECK(rdv_stun_get(&m, RDV_ATTR_UNKNOWN_ATTRIBUTES, &val, &n) == RDV_OK && n == 2 * o->nlist,
                  "%s: unknown attributes", v->name);
            break;
        case OP_INTEGRITY:
            CHECK(rdv_stun_check_sha256(&m, o->key, 32) == RDV_OK, "%s: integrity", v->name);
            memcpy(other, o->key, 32);
            other[31] ^= 1;
            CHECK(rdv_stun_check_sha256(&m, other, 32) == RDV_E_BAD_INTEGRITY, "%s: wrong key passes", v->name);
            break;
        case OP_FINGERPRINT: CHECK(m.fingerprint != 0, "%s: fingerprint", v->name); break;
        }
    }
    nattempts = rdv_stun_attempts(&m, attempts);
    CHECK(nattempts == expect_attempts, "%s: %d attempts, want %d", v->name, nattempts, expect_attempts);
    for (i = 0, k = 0; i < v->nops; i++) /* attempts come back in order */
        if (v->ops[i].kind == OP_ATTEMPT && k < nattempts)
            CHECK(memcmp(attempts[k++], v->ops[i].handle, 16) == 0, "%s: attempt order", v->name);
    if (!key) CHECK(rdv_stun_check_sha256(&m, other, 32) == RDV_E_BAD_INTEGRITY, "%s: unsigned verifies", v->name);

    /* The mediator's indication transaction IDs. */
    if (v->type == RDV_OFFER_INDICATION || v->type == RDV_INTRODUCE_INDICATION ||
        v->type == RDV_RELAY_INTRODUCE_INDICATION) {
        uint8_t tx[12], h[16];
        char kind;
        CHECK(rdv_stun_username(&m, &kind, h) == RDV_OK, "%s: indication username", v->name);
        if (v->type == RDV_OFFER_INDICATION) {
            CHECK(nattempts == 1, "%s: offer attempt", v->name);
            if (nattempts == 1) rdv_indication_txid('p', attempts[0], 0, tx);
        } else {
            rdv_indication_txid(kind, h, v->type == RDV_RELAY_INTRODUCE_INDICATION, tx);
        }
        CHECK(memcmp(tx, v->txid, 12) == 0, "%s: indication transaction ID", v->name);
    }

    /* Every strict prefix and every single-bit flip of the header or the
     * fingerprint is rejected (the FINGERPRINT covers the rest). */
    for (i = 0; i < v->nbytes; i++) {
        rdv_stun_msg m2;
        CHECK(rdv_stun_parse(v->bytes, (size_t)i, &m2) != RDV_OK, "%s: prefix %d accepted", v->name, i);
    }
    vectors_checked++;
}

static char *field(char *line, const char *name) {
    size_t n = strlen(name);
    if (strncmp(line, name, n) == 0 && line[n] == ' ') return line + n + 1;
    return NULL;
}

int main(int argc, char **argv) {
    FILE *f;
    static char line[4096];
    static struct vector v;
    int in = 0, caps = 0, hostkeys = 0;
    if (argc != 2) { fprintf(stderr, "usage: test_golden testdata/golden.txt\n"); return 2; }
    f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    while (fgets(line, sizeof line, f)) {
        char *p, *nl = strchr(line, '\n');
        struct op *o = in && v.nops < MAX_OPS ? &v.ops[v.nops] : NULL;
        if (nl) *nl = 0;
        if (line[0] == '#' || line[0] == 0) continue;
        if ((p = field(line, "capability"))) {
            /* capability <name> <base64url> <hex>: the REST form parses to the bytes */
            char name[32], b64[64], hex[80];
            uint8_t c[32], want[32];
            CHECK(sscanf(p, "%31s %63s %79s", name, b64, hex) == 3, "capability line");
            CHECK(rdv_capability_parse(b64, c) == RDV_OK && unhex(hex, want, 32) == 32 && memcmp(c, want, 32) == 0,
                  "capability %s", name);
            caps++;
        } else if ((p = field(line, "hostkey"))) {
            char pres[80], handle[40], want[80];
            uint8_t pc[32], h[16], k[32], w[32];
            CHECK(sscanf(p, "%79s %39s %79s", pres, handle, want) == 3, "hostkey line");
            unhex(pres, pc, 32);
            unhex(want, w, 32);
            CHECK(rdv_handle_parse(handle, h) == RDV_OK, "hostkey handle");
            rdv_host_attempt_key(pc, h, k);
            CHECK(memcmp(k, w, 32) == 0, "host attempt key differs from the server's derivation");
            hostkeys++;
        } else if ((p = field(line, "vector"))) {
            memset(&v, 0, sizeof v);
            snprintf(v.name, sizeof v.name, "%s", p);
            in = 1;
        } else if (!in) {
            CHECK(0, "line outside a vector: %s", line);
        } else if ((p = field(line, "type"))) {
            v.type = (uint16_t)strtoul(p, NULL, 16);
        } else if ((p = field(line, "txid"))) {
            CHECK(unhex(p, v.txid, 12) == 12, "txid");
        } else if ((p = field(line, "bytes"))) {
            v.nbytes = unhex(p, v.bytes, sizeof v.bytes);
            CHECK(v.nbytes >= 20, "%s: bytes", v.name);
        } else if (strcmp(line, "end") == 0) {
            check_vector(&v);
            in = 0;
        } else if (!o) {
            CHECK(0, "%s: too many attributes", v.name);
        } else {
            memset(o, 0, sizeof *o);
            if ((p = field(line, "username"))) {
                o->kind = OP_USERNAME;
                o->kindc = p[0];
                CHECK(rdv_handle_parse(p + 2, o->handle) == RDV_OK, "%s: username handle", v.name);
            } else if ((p = field(line, "u64"))) {
                o->kind = OP_U64;
                o->type = (uint16_t)strtoul(p, &p, 16);
                o->num = strtoull(p, NULL, 10);
            } else if ((p = field(line, "u32"))) {
                o->kind = OP_U32;
                o->type = (uint16_t)strtoul(p, &p, 16);
                o->num = strtoull(p, NULL, 10);
            } else if ((p = field(line, "xaddr"))) {
                o->kind = OP_XADDR;
                o->type = (uint16_t)strtoul(p, &p, 16);
                CHECK(rdv_addr_parse(p + 1, &o->addr) == RDV_OK, "%s: address %s", v.name, p + 1);
            } else if ((p = field(line, "attempt"))) {
                o->kind = OP_ATTEMPT;
                CHECK(rdv_handle_parse(p, o->handle) == RDV_OK, "%s: attempt", v.name);
            } else if ((p = field(line, "empty"))) {
                o->kind = OP_EMPTY;
                o->type = (uint16_t)strtoul(p, NULL, 16);
            } else if ((p = field(line, "outcome"))) {
                o->kind = OP_OUTCOME;
                o->num = strtoull(p, &p, 10);
                o->num2 = (uint32_t)strtoul(p, NULL, 10);
            } else if ((p = field(line, "error"))) {
                o->kind = OP_ERROR;
                o->num = strtoull(p, &p, 10);
                snprintf(o->text, sizeof o->text, "%s", p + 1);
            } else if ((p = field(line, "unknown"))) {
                o->kind = OP_UNKNOWN;
                while (*p && o->nlist < 8) {
                    o->list[o->nlist++] = (uint16_t)strtoul(p, &p, 16);
                    if (*p == ',') p++;
                }
            } else if ((p = field(line, "integrity"))) {
                o->kind = OP_INTEGRITY;
                CHECK(unhex(p, o->key, 32) == 32, "%s: key", v.name);
            } else if (strcmp(line, "fingerprint") == 0) {
                o->kind = OP_FINGERPRINT;
            } else {
                CHECK(0, "%s: unknown script line: %s", v.name, line);
                continue;
            }
            v.nops++;
        }
    }
    fclose(f);
    CHECK(vectors_checked >= 40 && caps == 2 && hostkeys == 1, "only %d vectors, %d capabilities, %d host keys",
          vectors_checked, caps, hostkeys);
    if (check_failures) { fprintf(stderr, "test_golden: %d failures\n", check_failures); return 1; }
    printf("test_golden: %d vectors byte for byte\n", vectors_checked);
    return 0;
}
