/* Known-answer tests of the embedded crypto against the published vectors:
 * SHA-256 and SHA-1 (FIPS 180-4 examples), HMAC-SHA256 (RFC 4231 §4),
 * HMAC-SHA1 (RFC 2202 §3), MD5 (RFC 1321 A.5) and CRC-32 (the catalogue's
 * check value for "123456789"). Each hash is also fed in every split of its
 * input, so the block buffering is exercised, not only one-shot calls. */
#include "check.h"
#include "../src/crypto.h"

static uint8_t big[1000000];

static void hexeq(const uint8_t *got, size_t n, const char *want, const char *what) {
    char h[129];
    tohex(got, n, h);
    CHECK(strcmp(h, want) == 0, "%s: got %s want %s", what, h, want);
}

struct hv { const char *msg; const char *sha256; const char *sha1; };

static const struct hv fips[] = {
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
     "a9993e364706816aba3e25717850c26c9cd0d89d"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
     "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
     "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
};

static void test_sha(void) {
    uint8_t d[32];
    size_t i, split;
    for (i = 0; i < sizeof fips / sizeof fips[0]; i++) {
        size_t n = strlen(fips[i].msg);
        for (split = 0; split <= n; split++) {
            rdv_sha256_ctx c;
            rdv_sha1_ctx c1;
            rdv_sha256_init(&c);
            rdv_sha256_update(&c, fips[i].msg, split);
            rdv_sha256_update(&c, fips[i].msg + split, n - split);
            rdv_sha256_final(&c, d);
            hexeq(d, 32, fips[i].sha256, "sha256");
            rdv_sha1_init(&c1);
            rdv_sha1_update(&c1, fips[i].msg, split);
            rdv_sha1_update(&c1, fips[i].msg + split, n - split);
            rdv_sha1_final(&c1, d);
            hexeq(d, 20, fips[i].sha1, "sha1");
        }
    }
    memset(big, 'a', sizeof big);
    rdv_sha256(big, sizeof big, d);
    hexeq(d, 32, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "sha256 million a");
    rdv_sha1(big, sizeof big, d);
    hexeq(d, 20, "34aa973cd4c4daa4f61eeb2bdbad27316534016f", "sha1 million a");
}

struct mac { size_t klen; uint8_t kbyte; const char *key; size_t dlen; uint8_t dbyte; const char *data; const char *want; };

/* RFC 4231 §4.2-4.8; test case 5's output is truncated to 128 bits. */
static const struct mac rfc4231[] = {
    {20, 0x0b, NULL, 0, 0, "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
    {0, 0, "Jefe", 0, 0, "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
    {20, 0xaa, NULL, 50, 0xdd, NULL, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
    {25, 0, NULL, 50, 0xcd, NULL, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
    {20, 0x0c, NULL, 0, 0, "Test With Truncation", "a3b6167473100ee06e0c796c2955552b"},
    {131, 0xaa, NULL, 0, 0, "Test Using Larger Than Block-Size Key - Hash Key First",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    {131, 0xaa, NULL, 0, 0,
     "This is a test using a larger than block-size key and a larger than block-size data. "
     "The key needs to be hashed before being used by the HMAC algorithm.",
     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
};

/* RFC 2202 §3. */
static const struct mac rfc2202[] = {
    {20, 0x0b, NULL, 0, 0, "Hi There", "b617318655057264e28bc0b6fb378c8ef146be00"},
    {0, 0, "Jefe", 0, 0, "what do ya want for nothing?", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"},
    {20, 0xaa, NULL, 50, 0xdd, NULL, "125d7342b9ac11cd91a39af48aa17b4f63f175d3"},
    {25, 0, NULL, 50, 0xcd, NULL, "4c9007f4026250c6bc8414f9bf50c86c2d7235da"},
    {20, 0x0c, NULL, 0, 0, "Test With Truncation", "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"},
    {80, 0xaa, NULL, 0, 0, "Test Using Larger Than Block-Size Key - Hash Key First",
     "aa4ae5e15272d00e95705637ce8a3b55ed402112"},
    {80, 0xaa, NULL, 0, 0, "Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data",
     "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"},
};

static size_t mac_inputs(const struct mac *m, uint8_t *key, uint8_t *data) {
    size_t i, klen, dlen;
    if (m->key) { klen = strlen(m->key); memcpy(key, m->key, klen); }
    else if (m->kbyte) { klen = m->klen; memset(key, m->kbyte, klen); }
    else { klen = m->klen; for (i = 0; i < klen; i++) key[i] = (uint8_t)(i + 1); } /* 0x01..0x19 */
    if (m->data) { dlen = strlen(m->data); memcpy(data, m->data, dlen); }
    else { dlen = m->dlen; memset(data, m->dbyte, dlen); }
    return klen << 16 | dlen;
}

static void test_hmac(void) {
    uint8_t key[200], data[200], out[32];
    size_t i;
    for (i = 0; i < sizeof rfc4231 / sizeof rfc4231[0]; i++) {
        size_t kd = mac_inputs(&rfc4231[i], key, data), klen = kd >> 16, dlen = kd & 0xffff;
        size_t wantn = strlen(rfc4231[i].want) / 2;
        rdv_hmac_sha256(key, klen, data, dlen, out);
        hexeq(out, wantn, rfc4231[i].want, "hmac-sha256");
        /* the two-part form over the same bytes */
        rdv_hmac_sha256_2(key, klen, data, dlen / 2, data + dlen / 2, dlen - dlen / 2, out);
        hexeq(out, wantn, rfc4231[i].want, "hmac-sha256 split");
    }
    for (i = 0; i < sizeof rfc2202 / sizeof rfc2202[0]; i++) {
        size_t kd = mac_inputs(&rfc2202[i], key, data), klen = kd >> 16, dlen = kd & 0xffff;
        rdv_hmac_sha1(key, klen, data, dlen, out);
        hexeq(out, 20, rfc2202[i].want, "hmac-sha1");
        rdv_hmac_sha1_2(key, klen, data, 3, data + 3, dlen - 3, out);
        hexeq(out, 20, rfc2202[i].want, "hmac-sha1 split");
    }
}

/* RFC 1321 A.5 test suite. */
static const char *const md5v[][2] = {
    {"", "d41d8cd98f00b204e9800998ecf8427e"},
    {"a", "0cc175b9c0f1b6a831c399e269772661"},
    {"abc", "900150983cd24fb0d6963f7d28e17f72"},
    {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
    {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"},
    {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
     "57edf4a22be3c955ac49da2e2107b67a"},
};

static void test_md5(void) {
    uint8_t d[16];
    size_t i, split;
    for (i = 0; i < sizeof md5v / sizeof md5v[0]; i++) {
        size_t n = strlen(md5v[i][0]);
        for (split = 0; split <= n; split++) {
            rdv_md5_ctx c;
            rdv_md5_init(&c);
            rdv_md5_update(&c, md5v[i][0], split);
            rdv_md5_update(&c, md5v[i][0] + split, n - split);
            rdv_md5_final(&c, d);
            hexeq(d, 16, md5v[i][1], "md5");
        }
    }
}

static void test_crc32(void) {
    uint32_t c = rdv_crc32(0, "123456789", 9);
    CHECK(c == 0xCBF43926u, "crc32 check value: %08x", (unsigned)c);
    c = rdv_crc32(rdv_crc32(0, "1234", 4), "56789", 5);
    CHECK(c == 0xCBF43926u, "crc32 continued: %08x", (unsigned)c);
    CHECK(rdv_crc32(0, "", 0) == 0, "crc32 of nothing");
}

static void test_ct_equal(void) {
    uint8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 5};
    CHECK(rdv_ct_equal(a, a, 4), "equal");
    CHECK(!rdv_ct_equal(a, b, 4), "differ in the last byte");
}

int main(void) {
    test_sha();
    test_hmac();
    test_md5();
    test_crc32();
    test_ct_equal();
    if (check_failures) { fprintf(stderr, "test_crypto: %d failures\n", check_failures); return 1; }
    printf("test_crypto: ok\n");
    return 0;
}
