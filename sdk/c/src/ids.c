/* Parsing of the strings the REST answers carry: handles (UUIDs) and
 * capabilities (base64url). */
#include "rendezvous.h"
#include <string.h>

static int lowerhex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

rdv_error rdv_handle_parse(const char *s, uint8_t out[16]) {
    int i, j = 0;
    if (!s || !out) return RDV_E_INVALID_ARGUMENT;
    if (strlen(s) != 36) return RDV_E_BAD_HANDLE;
    for (i = 0; i < 36;) {
        int hi, lo;
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return RDV_E_BAD_HANDLE;
            i++;
            continue;
        }
        hi = lowerhex(s[i]);
        lo = lowerhex(s[i + 1]);
        if (hi < 0 || lo < 0) return RDV_E_BAD_HANDLE;
        out[j++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return RDV_OK;
}

rdv_error rdv_handle_format(const uint8_t h[16], char out[37]) {
    static const char hex[] = "0123456789abcdef";
    int i, j = 0;
    if (!h || !out) return RDV_E_INVALID_ARGUMENT;
    for (i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[j++] = '-';
        out[j++] = hex[h[i] >> 4];
        out[j++] = hex[h[i] & 15];
    }
    out[j] = 0;
    return RDV_OK;
}

static int b64url(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

/* Strict, like the server's RawURLEncoding.Strict(): exactly 43 characters
 * and the unused low bits of the last one zero. */
rdv_error rdv_capability_parse(const char *s, uint8_t out[32]) {
    uint32_t acc = 0;
    int bits = 0, n = 0, i;
    if (!s || !out) return RDV_E_INVALID_ARGUMENT;
    if (strlen(s) != 43) return RDV_E_BAD_CAPABILITY;
    for (i = 0; i < 43; i++) {
        int v = b64url(s[i]);
        if (v < 0) return RDV_E_BAD_CAPABILITY;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (n != 32 || acc != 0) return RDV_E_BAD_CAPABILITY;
    return RDV_OK;
}
