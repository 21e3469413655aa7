/* The error table, the string parsers and the POSIX platform layer (a real
 * non-blocking socket on loopback). */
#include "check.h"
#include "rendezvous.h"
#include "../src/platform.h"

/* The layouts the C# binding (sdk/csharp) mirrors; it checks the same sizes. */
_Static_assert(sizeof(rdv_addr) == 20, "rdv_addr is 20 bytes with no padding");
_Static_assert(sizeof(rdv_event) == 56, "rdv_event is 56 bytes with no padding");
_Static_assert(sizeof(rdv_config) == 48, "rdv_config is 48 bytes");

static void test_errors(void) {
    int e, f;
    for (e = 0; e < RDV_E_COUNT_; e++) {
        CHECK(rdv_strerror((rdv_error)e) && rdv_strerror((rdv_error)e)[0], "text for %d", e);
        for (f = 0; f < e; f++)
            CHECK(strcmp(rdv_error_name((rdv_error)e), rdv_error_name((rdv_error)f)) != 0, "names %d %d", e, f);
    }
    CHECK(strcmp(rdv_error_name(RDV_E_WOULD_BLOCK), "WOULD_BLOCK") == 0, "name");
    CHECK(strcmp(rdv_strerror((rdv_error)999), "unknown error") == 0, "out of range");
    CHECK(rdv_version() == (RDV_VERSION_MAJOR << 16 | RDV_VERSION_MINOR << 8 | RDV_VERSION_PATCH), "version");
}

static void test_addr(void) {
    rdv_addr a;
    char buf[64];
    CHECK(rdv_addr_parse("192.0.2.1:3478", &a) == RDV_OK && a.family == RDV_AF_INET && a.port == 3478 &&
              a.ip[0] == 192 && a.ip[3] == 1, "v4");
    CHECK(rdv_addr_format(&a, buf, sizeof buf) == RDV_OK && strcmp(buf, "192.0.2.1:3478") == 0, "fmt %s", buf);
    CHECK(rdv_addr_parse("[2001:db8::7]:9", &a) == RDV_OK && a.family == RDV_AF_INET6 && a.port == 9 &&
              a.ip[0] == 0x20 && a.ip[15] == 7, "v6");
    CHECK(rdv_addr_format(&a, buf, sizeof buf) == RDV_OK && strcmp(buf, "[2001:db8::7]:9") == 0, "fmt %s", buf);
    CHECK(rdv_addr_parse("[::ffff:10.0.0.1]:1", &a) == RDV_OK && a.family == RDV_AF_INET && a.ip[0] == 10 &&
              a.ip[3] == 1 && a.ip[4] == 0, "mapped becomes v4");
    CHECK(rdv_addr_parse("localhost:80", &a) == RDV_E_BAD_ADDRESS, "no DNS");
    CHECK(rdv_addr_parse("1.2.3.4:65536", &a) == RDV_E_BAD_ADDRESS, "port range");
    CHECK(rdv_addr_parse("1.2.3.4", &a) == RDV_E_BAD_ADDRESS, "no port");
    CHECK(rdv_addr_parse("[::1]", &a) == RDV_E_BAD_ADDRESS, "no v6 port");
    rdv_addr_parse("10.0.0.1:1", &a);
    CHECK(rdv_addr_format(&a, buf, 4) == RDV_E_BUFFER_FULL, "small buffer");
}

static void test_ids(void) {
    uint8_t h[16], c[32];
    int i;
    CHECK(rdv_handle_parse("0123abcd-4567-89ef-0123-456789abcdef", h) == RDV_OK && h[0] == 0x01 && h[15] == 0xef,
          "handle");
    {
        char text[37];
        CHECK(rdv_handle_format(h, text) == RDV_OK && strcmp(text, "0123abcd-4567-89ef-0123-456789abcdef") == 0,
              "handle round trip: %s", text);
    }
    CHECK(rdv_handle_parse("0123ABCD-4567-89ef-0123-456789abcdef", h) == RDV_E_BAD_HANDLE, "upper case");
    CHECK(rdv_handle_parse("0123abcd-4567-89ef-0123-456789abcde", h) == RDV_E_BAD_HANDLE, "short");
    CHECK(rdv_handle_parse("0123abcd+4567-89ef-0123-456789abcdef", h) == RDV_E_BAD_HANDLE, "separator");
    /* 32 bytes 0x00..0x1f in unpadded base64url (RFC 4648 §5 alphabet). */
    CHECK(rdv_capability_parse("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", c) == RDV_OK, "cap");
    for (i = 0; i < 32; i++) CHECK(c[i] == i, "cap byte %d", i);
    CHECK(rdv_capability_parse("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9", c) == RDV_E_BAD_CAPABILITY,
          "non-zero trailing bits");
    CHECK(rdv_capability_parse("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+", c) == RDV_E_BAD_CAPABILITY,
          "standard alphabet");
    CHECK(rdv_capability_parse("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", c) == RDV_E_BAD_CAPABILITY,
          "padding");
}

static void test_socket(void) {
    intptr_t s;
    rdv_addr local, from;
    uint8_t buf[64], small[2];
    size_t n;
    rdv_addr_parse("127.0.0.1:0", &local);
    CHECK(rdv_plat_open(&local, &s) == RDV_OK, "open");
    CHECK(rdv_plat_local(s, &local) == RDV_OK && local.port != 0, "bound port");
    CHECK(rdv_plat_recv(s, buf, sizeof buf, &n, &from) == RDV_E_WOULD_BLOCK, "empty socket would block");
    CHECK(rdv_plat_send(s, "hello", 5, &local) == RDV_OK, "send to self");
    CHECK(rdv_plat_recv(s, buf, sizeof buf, &n, &from) == RDV_OK && n == 5 && memcmp(buf, "hello", 5) == 0 &&
              from.port == local.port, "receive");
    CHECK(rdv_plat_send(s, "hello", 5, &local) == RDV_OK, "send again");
    CHECK(rdv_plat_recv(s, small, sizeof small, &n, &from) == RDV_E_TOO_LARGE, "truncated read is TOO_LARGE");
    CHECK(rdv_plat_recv(s, buf, sizeof buf, &n, &from) == RDV_E_WOULD_BLOCK, "truncated datagram consumed");
    rdv_plat_close(s);
    CHECK(rdv_plat_random(buf, sizeof buf) == RDV_OK, "random");
}

int main(void) {
    test_errors();
    test_addr();
    test_ids();
    test_socket();
    if (check_failures) { fprintf(stderr, "test_basics: %d failures\n", check_failures); return 1; }
    printf("test_basics: ok\n");
    return 0;
}
