/* A minimal test harness: CHECK records a failure and goes on, so one run
 * shows every broken vector; main returns non-zero when any failed. */
#ifndef RDV_CHECK_H
#define RDV_CHECK_H
#include <stdio.h>
#include <stdint.h>
#include <string.h>

static int check_failures;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            check_failures++;                                              \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static inline int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* unhex decodes hex into out (at most cap bytes); -1 on bad input. */
static inline int unhex(const char *hex, uint8_t *out, size_t cap) {
    size_t n = 0;
    while (hex[0] && hex[0] != '\n') {
        int hi = hexval(hex[0]), lo = hexval(hex[1]);
        if (hi < 0 || lo < 0 || n == cap) return -1;
        out[n++] = (uint8_t)(hi << 4 | lo);
        hex += 2;
    }
    return (int)n;
}

static inline void tohex(const uint8_t *b, size_t n, char *out) {
    static const char d[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < n; i++) { out[2 * i] = d[b[i] >> 4]; out[2 * i + 1] = d[b[i] & 15]; }
    out[2 * n] = 0;
}

#endif
