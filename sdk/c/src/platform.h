/* The platform layer: everything the library asks of the operating system,
 * in one small file per platform (platform_posix.c; a Winsock one implements
 * the same functions). The socket is an intptr_t so a SOCKET fits. */
#ifndef RDV_PLATFORM_H
#define RDV_PLATFORM_H

#include "rendezvous.h"

#define RDV_BAD_SOCKET ((intptr_t)-1)

/* Opens a non-blocking UDP socket bound to local (port 0: any). */
rdv_error rdv_plat_open(const rdv_addr *local, intptr_t *out);
void rdv_plat_close(intptr_t s);
/* The address the socket is bound to. */
rdv_error rdv_plat_local(intptr_t s, rdv_addr *out);
/* RDV_E_WOULD_BLOCK when the send buffer is full. */
rdv_error rdv_plat_send(intptr_t s, const void *buf, size_t n, const rdv_addr *to);
/* RDV_E_WOULD_BLOCK when nothing is queued; RDV_E_TOO_LARGE when the
 * datagram was larger than cap (it is consumed). */
rdv_error rdv_plat_recv(intptr_t s, void *buf, size_t cap, size_t *n, rdv_addr *from);
/* n bytes from the operating system's random source. */
rdv_error rdv_plat_random(void *buf, size_t n);
/* Numeric address text conversion (no DNS). */
rdv_error rdv_plat_pton(int family, const char *s, uint8_t *ip);
rdv_error rdv_plat_ntop(int family, const uint8_t *ip, char *buf, size_t cap);

#endif
