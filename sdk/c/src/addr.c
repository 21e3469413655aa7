/* Numeric endpoint text: "1.2.3.4:5" and "[v6]:5". */
#include "platform.h"
#include <stdio.h>
#include <string.h>

static int parse_port(const char *s, uint16_t *port) {
    unsigned long v = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        v = v * 10 + (unsigned long)(*s - '0');
        if (v > 65535) return 0;
    }
    *port = (uint16_t)v;
    return 1;
}

rdv_error rdv_addr_parse(const char *s, rdv_addr *out) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    char host[64];
    const char *colon;
    size_t n;
    if (!s || !out) return RDV_E_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':' || (size_t)(end - s - 1) >= sizeof host) return RDV_E_BAD_ADDRESS;
        n = (size_t)(end - s - 1);
        memcpy(host, s + 1, n);
        host[n] = 0;
        if (!parse_port(end + 2, &out->port) || rdv_plat_pton(RDV_AF_INET6, host, out->ip) != RDV_OK)
            return RDV_E_BAD_ADDRESS;
        out->family = RDV_AF_INET6;
        if (memcmp(out->ip, mapped, 12) == 0) {
            memmove(out->ip, out->ip + 12, 4);
            memset(out->ip + 4, 0, 12);
            out->family = RDV_AF_INET;
        }
        return RDV_OK;
    }
    colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof host) return RDV_E_BAD_ADDRESS;
    n = (size_t)(colon - s);
    memcpy(host, s, n);
    host[n] = 0;
    if (!parse_port(colon + 1, &out->port) || rdv_plat_pton(RDV_AF_INET, host, out->ip) != RDV_OK)
        return RDV_E_BAD_ADDRESS;
    out->family = RDV_AF_INET;
    return RDV_OK;
}

rdv_error rdv_addr_format(const rdv_addr *a, char *buf, size_t cap) {
    char host[48];
    int n;
    if (!a || !buf) return RDV_E_INVALID_ARGUMENT;
    if (a->family != RDV_AF_INET && a->family != RDV_AF_INET6) return RDV_E_BAD_ADDRESS;
    if (rdv_plat_ntop(a->family, a->ip, host, sizeof host) != RDV_OK) return RDV_E_BAD_ADDRESS;
    n = a->family == RDV_AF_INET ? snprintf(buf, cap, "%s:%u", host, (unsigned)a->port)
                                 : snprintf(buf, cap, "[%s]:%u", host, (unsigned)a->port);
    return (n < 0 || (size_t)n >= cap) ? RDV_E_BUFFER_FULL : RDV_OK;
}
