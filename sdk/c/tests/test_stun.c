/* The parser's acceptance rules (docs/contracts/udp.md, Acceptance), the
 * builder's limits, and MESSAGE-INTEGRITY (SHA-1, for TURN) and
 * FINGERPRINT against the published RFC 5769 sample messages. */
#include "check.h"
#include "stun.h"

static const uint8_t tx[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const uint8_t key[32] = {7};
static const uint8_t handle[16] = {0xde, 0xad, 0xbe, 0xef};

static size_t base(uint8_t *buf, size_t cap) {
    rdv_stun_builder b;
    rdv_sb_init(&b, buf, cap, RDV_BINDING_REQUEST, tx);
    rdv_sb_username(&b, 'p', handle);
    rdv_sb_u64(&b, RDV_ATTR_SEQUENCE, 5);
    rdv_sb_integrity_sha256(&b, key, 32);
    rdv_sb_fingerprint(&b);
    return b.err == RDV_OK ? b.len : 0;
}

static rdv_error parse(const uint8_t *b, size_t n) {
    rdv_stun_msg m;
    return rdv_stun_parse(b, n, &m);
}

static void put16(uint8_t *p, size_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

static void test_acceptance(void) {
    uint8_t b[1400], c[1400];
    size_t n = base(b, sizeof b), i;
    rdv_stun_msg m;
    rdv_stun_builder sb;
    CHECK(n == 20 + 44 + 12 + 36 + 8, "base size %zu", n);
    CHECK(parse(b, n) == RDV_OK, "base parses");
    CHECK(rdv_stun_parse(b, n, &m) == RDV_OK && rdv_stun_check_sha256(&m, key, 32) == RDV_OK, "base verifies");
    CHECK(parse(b, 19) == RDV_E_TOO_SHORT, "short");
    memset(c, 0, sizeof c);
    memcpy(c, b, 20);
    put16(c + 2, 1184);
    CHECK(parse(c, 1204) == RDV_E_TOO_LONG, "over 1200");
    memcpy(c, b, n); c[0] |= 0x80;
    CHECK(parse(c, n) == RDV_E_NOT_STUN, "top bits");
    memcpy(c, b, n); c[4] ^= 1;
    CHECK(parse(c, n) == RDV_E_NOT_STUN, "cookie");
    memcpy(c, b, n); put16(c + 2, n - 20 - 4);
    CHECK(parse(c, n) == RDV_E_BAD_LENGTH, "length mismatch");
    memcpy(c, b, n); put16(c + 2, n - 20 + 2); c[n] = c[n + 1] = 0;
    CHECK(parse(c, n + 2) == RDV_E_BAD_LENGTH, "length not a multiple of 4");
    memcpy(c, b, n); put16(c + 22, 200);
    CHECK(parse(c, n) == RDV_E_ATTR_OVERRUN, "attribute overrun");
    /* an attribute after FINGERPRINT */
    memcpy(c, b, n); memset(c + n, 0, 8); put16(c + n, 0x8022); put16(c + n + 2, 4); put16(c + 2, n + 8 - 20);
    CHECK(parse(c, n + 8) == RDV_E_ATTR_AFTER_FINGERPRINT, "after fingerprint");
    memcpy(c, b, n); c[n - 1] ^= 1;
    CHECK(parse(c, n) == RDV_E_BAD_FINGERPRINT, "fingerprint");
    /* flipping a signed byte breaks the fingerprint first; without one the MAC catches it */
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    rdv_sb_username(&sb, 'p', handle);
    rdv_sb_integrity_sha256(&sb, key, 32);
    c[30] ^= 1;
    CHECK(rdv_stun_parse(c, sb.len, &m) == RDV_OK && rdv_stun_check_sha256(&m, key, 32) == RDV_E_BAD_INTEGRITY,
          "tampered body");
    /* duplicate USERNAME, duplicate integrity, integrity of the wrong size */
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    rdv_sb_username(&sb, 'p', handle);
    rdv_sb_username(&sb, 'p', handle);
    CHECK(parse(c, sb.len) == RDV_E_DUPLICATE_ATTR, "two usernames");
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    rdv_sb_integrity_sha256(&sb, key, 32);
    rdv_sb_username(&sb, 'p', handle);
    CHECK(rdv_stun_parse(c, sb.len, &m) == RDV_OK && m.nattrs == 0, "username after integrity ignored");
    rdv_sb_username(&sb, 'p', handle);
    CHECK(parse(c, sb.len) == RDV_E_DUPLICATE_ATTR, "second username after integrity");
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    rdv_sb_integrity_sha256(&sb, key, 32);
    rdv_sb_integrity_sha256(&sb, key, 32);
    CHECK(parse(c, sb.len) == RDV_E_DUPLICATE_ATTR, "two integrity");
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    rdv_sb_bytes(&sb, RDV_ATTR_INTEGRITY_SHA256, key, 20);
    CHECK(parse(c, sb.len) == RDV_E_BAD_ATTR_VALUE, "short integrity");
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    rdv_sb_bytes(&sb, RDV_ATTR_FINGERPRINT, key, 8);
    CHECK(parse(c, sb.len) == RDV_E_BAD_ATTR_VALUE, "long fingerprint");
    /* 24 recognised attributes pass, 25 do not; unknown ones are listed (8 at most) */
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    for (i = 0; i < 24; i++) rdv_sb_u32(&sb, RDV_ATTR_RDV_LIFETIME, (uint32_t)i);
    CHECK(parse(c, sb.len) == RDV_OK, "24 attributes");
    rdv_sb_u32(&sb, RDV_ATTR_RDV_LIFETIME, 1);
    CHECK(parse(c, sb.len) == RDV_E_TOO_MANY_ATTRS, "25 attributes");
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    for (i = 0; i < 10; i++) rdv_sb_u32(&sb, (uint16_t)(0x7000 + i), 0);
    rdv_sb_u32(&sb, 0xC0FF, 0); /* comprehension-optional: ignored */
    CHECK(rdv_stun_parse(c, sb.len, &m) == RDV_OK && m.nunknown == 8 && m.unknown[7] == 0x7007 && m.nattrs == 0,
          "unknown attributes");
    /* accessors on malformed values */
    rdv_sb_init(&sb, c, sizeof c, RDV_BINDING_REQUEST, tx);
    rdv_sb_bytes(&sb, RDV_ATTR_XOR_MAPPED_ADDRESS, "\0\1\0\0\0\0", 6);
    rdv_sb_bytes(&sb, RDV_ATTR_OUTCOME, "\4\0\0\0\0\0\0\0", 8);
    rdv_sb_bytes(&sb, RDV_ATTR_SEQUENCE, "\0\0\0\0", 4);
    CHECK(rdv_stun_parse(c, sb.len, &m) == RDV_OK, "parse malformed values");
    {
        rdv_addr a;
        uint8_t path;
        uint32_t ms;
        uint64_t seq;
        CHECK(rdv_stun_xor_addr(&m, RDV_ATTR_XOR_MAPPED_ADDRESS, &a) == RDV_E_BAD_ATTR_VALUE, "short address");
        CHECK(rdv_stun_xor_addr(&m, RDV_ATTR_XOR_PEER_ADDRESS, &a) == RDV_E_ABSENT, "absent address");
        CHECK(rdv_stun_outcome(&m, &path, &ms) == RDV_E_BAD_ATTR_VALUE, "path 4");
        CHECK(rdv_stun_u64(&m, RDV_ATTR_SEQUENCE, &seq) == RDV_E_BAD_ATTR_VALUE, "short sequence");
    }
}

static void test_builder(void) {
    uint8_t b[64];
    rdv_stun_builder sb;
    rdv_addr bad;
    rdv_sb_init(&sb, b, 10, RDV_BINDING_REQUEST, tx);
    CHECK(sb.err == RDV_E_BUFFER_FULL, "header does not fit");
    rdv_sb_init(&sb, b, sizeof b, RDV_BINDING_REQUEST, tx);
    rdv_sb_username(&sb, 'p', handle);
    CHECK(sb.err == RDV_OK && sb.len == 20 + 4 + 40, "username fits");
    rdv_sb_fingerprint(&sb);
    CHECK(sb.err == RDV_E_BUFFER_FULL, "fingerprint does not fit");
    rdv_sb_init(&sb, b, sizeof b, RDV_BINDING_REQUEST, tx);
    memset(&bad, 0, sizeof bad);
    rdv_sb_xor_addr(&sb, RDV_ATTR_LOCAL_ADDRESS, &bad);
    CHECK(sb.err == RDV_E_BAD_ADDRESS, "no family");
    rdv_sb_init(&sb, b, sizeof b, RDV_BINDING_REQUEST, tx);
    rdv_sb_outcome(&sb, 0, 1);
    CHECK(sb.err == RDV_E_INVALID_ARGUMENT, "path 0");
    rdv_sb_init(&sb, b, sizeof b, RDV_BINDING_REQUEST, tx);
    rdv_sb_error_code(&sb, 200, "x");
    CHECK(sb.err == RDV_E_INVALID_ARGUMENT, "code 200");
}

/* RFC 5769 §2.1-2.3: short-term credential samples (MESSAGE-INTEGRITY with
 * the password as the key, then FINGERPRINT). */
static const uint8_t rfc5769_request[] = {
    0x00, 0x01, 0x00, 0x58, 0x21, 0x12, 0xa4, 0x42, 0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae,
    0x80, 0x22, 0x00, 0x10, 0x53, 0x54, 0x55, 0x4e, 0x20, 0x74, 0x65, 0x73, 0x74, 0x20, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74,
    0x00, 0x24, 0x00, 0x04, 0x6e, 0x00, 0x01, 0xff,
    0x80, 0x29, 0x00, 0x08, 0x93, 0x2f, 0xf9, 0xb1, 0x51, 0x26, 0x3b, 0x36,
    0x00, 0x06, 0x00, 0x09, 0x65, 0x76, 0x74, 0x6a, 0x3a, 0x68, 0x36, 0x76, 0x59, 0x20, 0x20, 0x20,
    0x00, 0x08, 0x00, 0x14, 0x9a, 0xea, 0xa7, 0x0c, 0xbf, 0xd8, 0xcb, 0x56, 0x78, 0x1e, 0xf2, 0xb5, 0xb2, 0xd3, 0xf2, 0x49,
    0xc1, 0xb5, 0x71, 0xa2,
    0x80, 0x28, 0x00, 0x04, 0xe5, 0x7a, 0x3b, 0xcf,
};
static const uint8_t rfc5769_response4[] = {
    0x01, 0x01, 0x00, 0x3c, 0x21, 0x12, 0xa4, 0x42, 0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae,
    0x80, 0x22, 0x00, 0x0b, 0x74, 0x65, 0x73, 0x74, 0x20, 0x76, 0x65, 0x63, 0x74, 0x6f, 0x72, 0x20,
    0x00, 0x20, 0x00, 0x08, 0x00, 0x01, 0xa1, 0x47, 0xe1, 0x12, 0xa6, 0x43,
    0x00, 0x08, 0x00, 0x14, 0x2b, 0x91, 0xf5, 0x99, 0xfd, 0x9e, 0x90, 0xc3, 0x8c, 0x74, 0x89, 0xf9, 0x2a, 0xf9, 0xba, 0x53,
    0xf0, 0x6b, 0xe7, 0xd7,
    0x80, 0x28, 0x00, 0x04, 0xc0, 0x7d, 0x4c, 0x96,
};
static const uint8_t rfc5769_response6[] = {
    0x01, 0x01, 0x00, 0x48, 0x21, 0x12, 0xa4, 0x42, 0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae,
    0x80, 0x22, 0x00, 0x0b, 0x74, 0x65, 0x73, 0x74, 0x20, 0x76, 0x65, 0x63, 0x74, 0x6f, 0x72, 0x20,
    0x00, 0x20, 0x00, 0x14, 0x00, 0x02, 0xa1, 0x47, 0x01, 0x13, 0xa9, 0xfa, 0xa5, 0xd3, 0xf1, 0x79, 0xbc, 0x25, 0xf4, 0xb5,
    0xbe, 0xd2, 0xb9, 0xd9,
    0x00, 0x08, 0x00, 0x14, 0xa3, 0x82, 0x95, 0x4e, 0x4b, 0xe6, 0x7b, 0xf1, 0x17, 0x84, 0xc9, 0x7c, 0x82, 0x92, 0xc2, 0x75,
    0xbf, 0xe3, 0xed, 0x41,
    0x80, 0x28, 0x00, 0x04, 0xc8, 0xfb, 0x0b, 0x4c,
};

static void test_rfc5769(void) {
    static const char pw[] = "VOkJxbRl1RmTxUk/WvJxBt";
    rdv_stun_msg m;
    rdv_addr a, want;
    CHECK(rdv_stun_parse(rfc5769_request, sizeof rfc5769_request, &m) == RDV_OK, "5769 request parses");
    CHECK(rdv_stun_check_sha1(&m, (const uint8_t *)pw, strlen(pw)) == RDV_OK, "5769 request integrity");
    CHECK(rdv_stun_check_sha1(&m, (const uint8_t *)pw, strlen(pw) - 1) == RDV_E_BAD_INTEGRITY, "wrong password");
    CHECK(m.nunknown == 1 && m.unknown[0] == 0x0024, "PRIORITY is unknown here");
    CHECK(rdv_stun_parse(rfc5769_response4, sizeof rfc5769_response4, &m) == RDV_OK, "5769 v4 parses");
    CHECK(rdv_stun_check_sha1(&m, (const uint8_t *)pw, strlen(pw)) == RDV_OK, "5769 v4 integrity");
    rdv_addr_parse("192.0.2.1:32853", &want);
    CHECK(rdv_stun_xor_addr(&m, RDV_ATTR_XOR_MAPPED_ADDRESS, &a) == RDV_OK && memcmp(&a, &want, sizeof a) == 0,
          "5769 v4 address");
    CHECK(rdv_stun_parse(rfc5769_response6, sizeof rfc5769_response6, &m) == RDV_OK, "5769 v6 parses");
    CHECK(rdv_stun_check_sha1(&m, (const uint8_t *)pw, strlen(pw)) == RDV_OK, "5769 v6 integrity");
    rdv_addr_parse("[2001:db8:1234:5678:11:2233:4455:6677]:32853", &want);
    CHECK(rdv_stun_xor_addr(&m, RDV_ATTR_XOR_MAPPED_ADDRESS, &a) == RDV_OK && memcmp(&a, &want, sizeof a) == 0,
          "5769 v6 address");
}

int main(void) {
    test_acceptance();
    test_builder();
    test_rfc5769();
    if (check_failures) { fprintf(stderr, "test_stun: %d failures\n", check_failures); return 1; }
    printf("test_stun: ok\n");
    return 0;
}
