/* rdv_peer: a host or joiner over librendezvous, for the end-to-end tests
 * and as a complete example of the game loop. The REST calls stay with the
 * caller (the fields of the create-listing or join answer are arguments);
 * this program does everything over UDP and prints one line per event.
 *
 *   rdv_peer host --mediator IP:PORT --handle H --token T --interval S [--listen A] [--seconds N] [--chat]
 *                 [--api URL --listing ID]
 *   rdv_peer join --mediator IP:PORT --handle H --token T [--listen A] [--seconds N]
 *                 [--relay IP:PORT --relay-user U --relay-credential C]   (a relay-only join)
 *                 [--api URL --attempt ID]
 *
 * With --api (and the principal's bearer token in the environment variable
 * RDV_TOKEN, never on the command line) the program fetches its relay
 * credential when the library asks for one: the host's for a relay-only
 * attempt (RDV_EV_RELAY_ONLY), either side's after a failed direct punch
 * (RDV_EV_RELAY_FALLBACK). Without it, or when the server has no relay, it
 * declines and the attempt fails. The HTTP client below is the example's
 * (plain HTTP/1.0, POSIX sockets, blocking for one short call); the library
 * itself does no HTTP.
 *
 * The host echoes every game datagram ("echo: " + payload); with --chat it
 * speaks rendezvous-peer's chat instead ("MSG <id> <text>" acknowledged
 * with "ACK <id>", the echo sent as a MESSAGE of its own and retransmitted
 * until acknowledged), so a Go rendezvous-peer joiner can talk to it. The joiner,
 * once connected, sends "hello from c" until the echo comes back, prints
 * it and exits 0. Tokens are never printed. */
#define _POSIX_C_SOURCE 200809L
#include "rendezvous.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(uint64_t ms) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

static const char *arg(int argc, char **argv, const char *name, const char *def) {
    int i;
    for (i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return def;
}

static int has_flag(int argc, char **argv, const char *name) {
    int i;
    for (i = 2; i < argc; i++)
        if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

/* --chat: rendezvous-peer's line protocol, for the NAT tests. */
#define CHAT_PENDING 8
static struct {
    int used, tries;
    unsigned long id;
    uint64_t next_ms;
    rdv_addr to;
    char line[300];
    size_t n;
} pending[CHAT_PENDING];
static unsigned long chat_next_id, seen_ids[16];
static int seen_count;

static void chat_in(rdv_ctx *ctx, const uint8_t *b, size_t n, const rdv_addr *from, uint64_t now) {
    char msg[300], ack[40];
    unsigned long id = 0;
    size_t i = 4, k;
    int j, dup = 0;
    if (n < 5 || n >= sizeof msg) return;
    memcpy(msg, b, n);
    msg[n] = 0;
    if (strncmp(msg, "ACK ", 4) == 0) {
        id = strtoul(msg + 4, NULL, 10);
        for (j = 0; j < CHAT_PENDING; j++)
            if (pending[j].used && pending[j].id == id) pending[j].used = 0;
        return;
    }
    if (strncmp(msg, "MSG ", 4) != 0) return;
    while (i < n && msg[i] >= '0' && msg[i] <= '9') id = id * 10 + (unsigned long)(msg[i++] - '0');
    if (i >= n || msg[i] != ' ') return;
    k = (size_t)snprintf(ack, sizeof ack, "ACK %lu", id);
    rdv_send(ctx, ack, k, from); /* every copy is acknowledged; a lost ACK makes the peer resend */
    for (j = 0; j < seen_count; j++) dup |= seen_ids[j] == id;
    if (dup) return;
    seen_ids[seen_count++ % 16] = id;
    if (seen_count > 16) seen_count = 16;
    printf("chat %s\n", msg + i + 1);
    for (j = 0; j < CHAT_PENDING; j++) {
        if (pending[j].used) continue;
        pending[j].used = 1;
        pending[j].tries = 0;
        pending[j].id = ++chat_next_id;
        pending[j].next_ms = now;
        pending[j].to = *from;
        pending[j].n = (size_t)snprintf(pending[j].line, sizeof pending[j].line, "MSG %lu echo: %s", pending[j].id, msg + i + 1);
        break;
    }
}

static void chat_retransmit(rdv_ctx *ctx, uint64_t now) {
    int j;
    for (j = 0; j < CHAT_PENDING; j++) {
        if (!pending[j].used || now < pending[j].next_ms) continue;
        if (pending[j].tries++ == 8) { pending[j].used = 0; continue; }
        rdv_send(ctx, pending[j].line, pending[j].n, &pending[j].to);
        pending[j].next_ms = now + 300;
    }
}

/* http_get GETs path from api ("http://host:port") with the RDV_TOKEN
 * bearer token into body (NUL-terminated) and returns the HTTP status, or
 * -1 when no answer came (5 s at most). */
static int http_get(const char *api, const char *path, char *body, size_t cap) {
    static char resp[8192];
    char host[256], req[1024], *port, *slash, *start;
    const char *token = getenv("RDV_TOKEN");
    struct addrinfo hints, *ai = NULL;
    struct timeval tv = {5, 0};
    size_t got = 0;
    ssize_t k;
    int fd, status = -1;
    if (strncmp(api, "http://", 7) != 0 || strlen(api + 7) >= sizeof host || !token) return -1;
    strcpy(host, api + 7);
    if ((slash = strchr(host, '/')) != NULL) *slash = 0;
    if ((port = strrchr(host, ':')) == NULL) return -1;
    *port++ = 0;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &ai) != 0) return -1;
    fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        /* HTTP/1.0: the answer ends at close, never chunked */
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n\r\n",
                         path, host, port, token);
        if (n > 0 && (size_t)n < sizeof req && send(fd, req, (size_t)n, 0) == n) {
            while (got < sizeof resp - 1 && (k = recv(fd, resp + got, sizeof resp - 1 - got, 0)) > 0) got += (size_t)k;
            resp[got] = 0;
            if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1) status = -1;
            start = strstr(resp, "\r\n\r\n");
            snprintf(body, cap, "%s", start ? start + 4 : "");
        }
    }
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return status;
}

/* json_string copies the string value of "name" (up to a quote, or to one
 * of the characters in stop) after prefix, which follows the opening quote. */
static int json_string(const char *body, const char *name, const char *prefix, const char *stop, char *out, size_t cap) {
    char key[64];
    const char *p;
    size_t n = 0;
    snprintf(key, sizeof key, "\"%s\":", name);
    if ((p = strstr(body, key)) == NULL) return 0;
    p += strlen(key);
    while (*p == ' ' || *p == '[') p++;
    if (*p++ != '"' || strncmp(p, prefix, strlen(prefix)) != 0) return 0;
    p += strlen(prefix);
    while (p[n] && p[n] != '"' && !strchr(stop, p[n]) && n + 1 < cap) n++;
    memcpy(out, p, n);
    out[n] = 0;
    return n > 0;
}

/* relay_for answers the library's ask for attempt h's relay credential:
 * fetched over REST and handed to rdv_relay_start, or declined. */
static void relay_for(rdv_ctx *ctx, int hosting, int argc, char **argv, const char *h) {
    static char body[8192];
    char path[256], server[128], user[160], cred[160];
    const char *api = arg(argc, argv, "--api", NULL);
    int status = -1;
    if (api && hosting && arg(argc, argv, "--listing", NULL))
        snprintf(path, sizeof path, "/v1/listings/%s/join-attempts/%s/relay", arg(argc, argv, "--listing", ""), h);
    else if (api && !hosting && arg(argc, argv, "--attempt", NULL))
        snprintf(path, sizeof path, "/v1/join-attempts/%s/relay", arg(argc, argv, "--attempt", ""));
    else
        api = NULL;
    if (api) status = http_get(api, path, body, sizeof body);
    if (status == 200 && json_string(body, "urls", "turn:", "?", server, sizeof server) &&
        json_string(body, "username", "", "", user, sizeof user) &&
        json_string(body, "credential", "", "", cred, sizeof cred) &&
        rdv_relay_start(ctx, now_ms(), h, server, user, cred) == RDV_OK) {
        printf("relay %s via %s\n", h, server); /* never the credential */
        return;
    }
    printf("relay-declined %s %d\n", h, status); /* 409 relay_unavailable, 404, or no --api */
    rdv_relay_decline(ctx, now_ms(), h);
}

/* The context's memory: one static block, sized once (aligned for it). */
static union { uint64_t align; uint8_t b[1 << 17]; } arena;

int main(int argc, char **argv) {
    rdv_ctx *ctx;
    rdv_error e;
    rdv_addr peer, local;
    int hosting, connected = 0, chat;
    uint64_t deadline, next_hello = 0;
    char text[64], h[37];
    if (argc < 2 || (strcmp(argv[1], "host") != 0 && strcmp(argv[1], "join") != 0)) {
        fprintf(stderr, "usage: rdv_peer host|join --mediator IP:PORT --handle H --token T [--interval S] [--listen A]\n");
        return 2;
    }
    hosting = strcmp(argv[1], "host") == 0;
    chat = has_flag(argc, argv, "--chat");
    if (rdv_memory_size(NULL) > sizeof arena.b) { fprintf(stderr, "arena too small\n"); return 1; }
    if ((e = rdv_init(arena.b, sizeof arena.b, NULL, &ctx)) != RDV_OK ||
        (e = rdv_open(ctx, arg(argc, argv, "--listen", "127.0.0.1:0"))) != RDV_OK) {
        fprintf(stderr, "init: %s\n", rdv_strerror(e));
        return 1;
    }
    if (hosting)
        e = rdv_host_start(ctx, now_ms(), arg(argc, argv, "--mediator", ""), arg(argc, argv, "--handle", ""),
                           arg(argc, argv, "--token", ""), (uint32_t)atoi(arg(argc, argv, "--interval", "5")));
    else
        e = rdv_join_start(ctx, now_ms(), arg(argc, argv, "--mediator", ""), arg(argc, argv, "--handle", ""),
                           arg(argc, argv, "--token", ""));
    if (e == RDV_OK && !hosting && arg(argc, argv, "--relay", NULL))
        e = rdv_relay_start(ctx, now_ms(), arg(argc, argv, "--handle", ""), arg(argc, argv, "--relay", ""),
                            arg(argc, argv, "--relay-user", ""), arg(argc, argv, "--relay-credential", ""));
    if (e != RDV_OK) {
        fprintf(stderr, "start: %s (%s)\n", rdv_strerror(e), rdv_error_name(e));
        return 1;
    }
    rdv_local_addr(ctx, &local);
    rdv_addr_format(&local, text, sizeof text);
    printf("listening %s\n", text);
    fflush(stdout);
    deadline = now_ms() + 1000 * (uint64_t)atoi(arg(argc, argv, "--seconds", "60"));
    memset(&peer, 0, sizeof peer);
    while (now_ms() < deadline) {
        uint64_t now = now_ms(), next = rdv_update(ctx, now);
        rdv_event ev;
        uint8_t buf[1200];
        size_t n;
        rdv_addr from;
        while (rdv_next_event(ctx, &ev) == RDV_OK) {
            rdv_handle_format(ev.handle, h);
            text[0] = 0;
            if (ev.addr.family) rdv_addr_format(&ev.addr, text, sizeof text);
            switch (ev.type) {
            case RDV_EV_PRESENCE: printf("presence %s\n", text); break;
            case RDV_EV_REJECTED: printf("rejected %s %d\n", h, ev.code); break;
            case RDV_EV_ATTEMPT: printf("attempt %s\n", h); break;
            case RDV_EV_INTRODUCED: printf("introduced %s %s\n", h, text); break;
            case RDV_EV_CONNECTED:
                printf("connected %s %s path=%u ms=%u\n", h, text, ev.path, ev.millis);
                peer = ev.addr;
                connected = 1;
                break;
            case RDV_EV_FAILED: printf("failed %s %s\n", h, rdv_error_name((rdv_error)ev.code)); break;
            case RDV_EV_REPORTED: printf("reported %s\n", h); break;
            case RDV_EV_RELAY_ONLY:
                printf("relay-only %s\n", h);
                relay_for(ctx, hosting, argc, argv, h);
                break;
            case RDV_EV_RELAY_FALLBACK:
                printf("relay-fallback %s\n", h);
                relay_for(ctx, hosting, argc, argv, h);
                break;
            }
            fflush(stdout);
        }
        while (rdv_recv(ctx, buf, sizeof buf - 6, &n, &from) == RDV_OK) {
            if (hosting && chat) {
                chat_in(ctx, buf, n, &from, now);
            } else if (hosting) {
                uint8_t out[1200];
                memcpy(out, "echo: ", 6);
                memcpy(out + 6, buf, n);
                rdv_send(ctx, out, n + 6, &from);
            } else if (chat && n > 4 && memcmp(buf, "MSG ", 4) == 0) {
                /* rendezvous-peer's host answers with a MESSAGE of its own: acknowledge it */
                char ack[40], *line;
                size_t k;
                buf[n] = 0;
                line = strchr((char *)buf + 4, ' ');
                k = (size_t)snprintf(ack, sizeof ack, "ACK %lu", strtoul((char *)buf + 4, NULL, 10));
                rdv_send(ctx, ack, k, &from);
                if (line && strncmp(line + 1, "echo: ", 6) == 0) {
                    printf("got %s\n", line + 1);
                    fflush(stdout);
                    rdv_close(ctx);
                    return 0;
                }
            } else if (!chat && n >= 6 && memcmp(buf, "echo: ", 6) == 0) {
                printf("got %.*s\n", (int)n, (const char *)buf);
                fflush(stdout);
                rdv_close(ctx);
                return 0;
            }
        }
        if (chat) chat_retransmit(ctx, now);
        if (!hosting && connected && now >= next_hello) {
            if (chat) rdv_send(ctx, "MSG 1 hello from c", 18, &peer); /* ACKed or answered: resent until echoed */
            else rdv_send(ctx, "hello from c", 12, &peer);
            next_hello = now + 200;
        }
        now = now_ms();
        sleep_ms(next > now ? (next - now < 10 ? next - now : 10) : 0);
    }
    rdv_close(ctx);
    return hosting ? 0 : 1;
}
