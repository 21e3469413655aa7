/* POSIX platform layer (Linux, macOS, the BSDs). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "platform.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static socklen_t to_sockaddr(const rdv_addr *a, struct sockaddr_storage *ss) {
    memset(ss, 0, sizeof *ss);
    if (a->family == RDV_AF_INET) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(a->port);
        memcpy(&s4->sin_addr, a->ip, 4);
        return sizeof *s4;
    }
    if (a->family == RDV_AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(a->port);
        memcpy(&s6->sin6_addr, a->ip, 16);
        return sizeof *s6;
    }
    return 0;
}

static void from_sockaddr(const struct sockaddr_storage *ss, rdv_addr *a) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(a, 0, sizeof *a);
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        a->family = RDV_AF_INET;
        a->port = ntohs(s4->sin_port);
        memcpy(a->ip, &s4->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        a->port = ntohs(s6->sin6_port);
        if (memcmp(&s6->sin6_addr, mapped, 12) == 0) { /* the wire sends these as IPv4 */
            a->family = RDV_AF_INET;
            memcpy(a->ip, (const uint8_t *)&s6->sin6_addr + 12, 4);
        } else {
            a->family = RDV_AF_INET6;
            memcpy(a->ip, &s6->sin6_addr, 16);
        }
    }
}

rdv_error rdv_plat_open(const rdv_addr *local, intptr_t *out) {
    struct sockaddr_storage ss;
    socklen_t sl = to_sockaddr(local, &ss);
    int fd, fl;
    if (!sl) return RDV_E_BAD_ADDRESS;
    fd = socket(ss.ss_family, SOCK_DGRAM, 0);
    if (fd < 0) return RDV_E_SOCKET;
    fl = fcntl(fd, F_GETFL, 0);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
        bind(fd, (struct sockaddr *)&ss, sl) < 0) {
        close(fd);
        return RDV_E_SOCKET;
    }
    *out = fd;
    return RDV_OK;
}

void rdv_plat_close(intptr_t s) {
    if (s != RDV_BAD_SOCKET) close((int)s);
}

rdv_error rdv_plat_local(intptr_t s, rdv_addr *out) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname((int)s, (struct sockaddr *)&ss, &sl) < 0) return RDV_E_SOCKET;
    from_sockaddr(&ss, out);
    return RDV_OK;
}

rdv_error rdv_plat_send(intptr_t s, const void *buf, size_t n, const rdv_addr *to) {
    struct sockaddr_storage ss;
    socklen_t sl = to_sockaddr(to, &ss);
    if (!sl) return RDV_E_BAD_ADDRESS;
    if (sendto((int)s, buf, n, 0, (struct sockaddr *)&ss, sl) < 0)
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) ? RDV_E_WOULD_BLOCK : RDV_E_SOCKET;
    return RDV_OK;
}

rdv_error rdv_plat_recv(intptr_t s, void *buf, size_t cap, size_t *n, rdv_addr *from) {
    struct sockaddr_storage ss;
    struct iovec iov;
    struct msghdr mh;
    ssize_t r;
    iov.iov_base = buf;
    iov.iov_len = cap;
    memset(&mh, 0, sizeof mh);
    mh.msg_name = &ss;
    mh.msg_namelen = sizeof ss;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    for (;;) {
        r = recvmsg((int)s, &mh, 0);
        if (r >= 0) break;
        if (errno == EINTR) continue;
        /* ICMP errors of earlier sends (ECONNREFUSED) say nothing about this read. */
        if (errno == ECONNREFUSED) continue;
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? RDV_E_WOULD_BLOCK : RDV_E_SOCKET;
    }
    from_sockaddr(&ss, from);
    *n = (size_t)r;
    return (mh.msg_flags & MSG_TRUNC) ? RDV_E_TOO_LARGE : RDV_OK;
}

rdv_error rdv_plat_random(void *buf, size_t n) {
    uint8_t *p = (uint8_t *)buf;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return RDV_E_RANDOM;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) continue;
            close(fd);
            return RDV_E_RANDOM;
        }
        p += r;
        n -= (size_t)r;
    }
    close(fd);
    return RDV_OK;
}

rdv_error rdv_plat_pton(int family, const char *s, uint8_t *ip) {
    int af = family == RDV_AF_INET ? AF_INET : AF_INET6;
    return inet_pton(af, s, ip) == 1 ? RDV_OK : RDV_E_BAD_ADDRESS;
}

rdv_error rdv_plat_ntop(int family, const uint8_t *ip, char *buf, size_t cap) {
    int af = family == RDV_AF_INET ? AF_INET : AF_INET6;
    return inet_ntop(af, ip, buf, (socklen_t)cap) ? RDV_OK : RDV_E_INVALID_ARGUMENT;
}
