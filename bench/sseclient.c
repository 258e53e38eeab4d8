/*
 * sseclient — many concurrent Server-Sent Events clients in one epoll loop, for reachd's
 * benchmarks (bench/run.sh). Written in C so that the client is not the bottleneck it would
 * be in Python (about one core per 5,000 events per burst).
 *
 *   sseclient -p PORT [-a 127.0.0.1] [-n CONNS] [-i INFLIGHT] [-t MAX_SECONDS] [-o FILE]
 *
 * Opens CONNS connections to ADDR:PORT (at most INFLIGHT still connecting or waiting for
 * their first event at a time), sends `GET /events` with `Accept: text/event-stream`, and
 * follows each stream: HTTP/1.1 chunked decoding, then SSE lines. An event is recognised by
 * the `"sequence":N` inside its `data:` line (reachd's status document; the nchan peer is
 * published the same bytes), and recorded as (connection, N, user-space receive time on
 * CLOCK_MONOTONIC, kernel receive time of the segment from SO_TIMESTAMPNS on CLOCK_REALTIME).
 *
 * Talks to the driving process over stdin/stdout, one line each:
 *   out  "ready OPEN FAILED"    every connection is open and has its first event (or failed)
 *   out  "done N"               every live connection has received the event with sequence N
 *   in   "quit"  (or EOF)       close everything, write FILE, print "summary ...", exit
 * It also exits by itself after MAX_SECONDS (default 300): every loop is bounded in time.
 *
 * FILE gets one line per event: "conn seq user_mono_ns kernel_real_ns" (kernel 0 if absent).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { HDR, CHUNK_SIZE, CHUNK_DATA, CHUNK_CRLF, RAW };

typedef struct {
    int fd;
    int state;          /* HTTP framing state */
    int connected;      /* connect() completed and request sent */
    int first;          /* first event received */
    int dead;
    int chunked;
    long long chunk_left;
    char *hdr;          /* header bytes until \r\n\r\n */
    size_t hlen, hcap;
    char *line;         /* current SSE line */
    size_t llen, lcap;
    long long ev_seq;   /* sequence seen in the current event's data, -1 if none */
    long long last_seq;
    long heartbeats;
} conn_t;

typedef struct { long long seq; long count; int reported; } seqcount_t;
typedef struct { uint32_t conn; int64_t seq, user_ns, kern_ns; } record_t;

static conn_t *conns;
static int nconns, inflight_max = 200, launched, inflight, open_ok, open_failed, alive;
static struct sockaddr_in target;
static const char request[] =
    "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
    "Cache-Control: no-cache\r\n\r\n";
static record_t *records;
static size_t nrecords, caprecords;
static seqcount_t seqs[4096];
static int nseqs;
static int ready_reported;
static long total_heartbeats, total_errors;
static int64_t cur_user_ns, cur_kern_ns;
static int epfd;

static int64_t now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void grow(char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return;
    size_t n = *cap ? *cap : 256;
    while (n < need) n *= 2;
    *buf = realloc(*buf, n);
    if (!*buf) { perror("realloc"); exit(2); }
    *cap = n;
}

static void check_done(void);

static void kill_conn(conn_t *c, const char *why) {
    (void)why;
    if (c->dead) return;
    c->dead = 1;
    total_errors++;
    if (c->fd >= 0) { epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL); close(c->fd); c->fd = -1; }
    if (!c->first) { inflight--; open_failed++; } else alive--;
    free(c->hdr); c->hdr = NULL; free(c->line); c->line = NULL;
    check_done();
}

static void report_ready(void) {
    if (!ready_reported && open_ok + open_failed == nconns) {
        ready_reported = 1;
        printf("ready %d %d\n", open_ok, open_failed);
        fflush(stdout);
    }
}

static void check_done(void) {
    if (!ready_reported) return;
    for (int i = 0; i < nseqs; i++) {
        if (!seqs[i].reported && seqs[i].count >= alive) {
            seqs[i].reported = 1;
            printf("done %lld\n", seqs[i].seq);
            fflush(stdout);
        }
    }
}

static void record_event(conn_t *c) {
    long long seq = c->ev_seq;
    int idx = (int)(c - conns);
    if (nrecords == caprecords) {
        caprecords = caprecords ? caprecords * 2 : 65536;
        records = realloc(records, caprecords * sizeof(record_t));
        if (!records) { perror("realloc"); exit(2); }
    }
    records[nrecords++] = (record_t){(uint32_t)idx, seq, cur_user_ns, cur_kern_ns};
    c->last_seq = seq;
    if (!c->first) {
        c->first = 1;
        inflight--;
        open_ok++;
        alive++;
        report_ready();
        return; /* the first event is the current value, not a change */
    }
    int i;
    for (i = 0; i < nseqs; i++) if (seqs[i].seq == seq) break;
    if (i == nseqs) {
        if (nseqs == (int)(sizeof seqs / sizeof seqs[0])) return;
        seqs[nseqs++] = (seqcount_t){seq, 0, 0};
    }
    seqs[i].count++;
    check_done();
}

static void sse_line(conn_t *c) {
    char *l = c->line;
    size_t n = c->llen;
    if (n && l[n - 1] == '\r') n--;
    if (n == 0) { /* end of event */
        if (c->ev_seq >= 0) record_event(c);
        c->ev_seq = -1;
        return;
    }
    if (l[0] == ':') { c->heartbeats++; total_heartbeats++; return; }
    if (n > 5 && memcmp(l, "data:", 5) == 0) {
        static const char key[] = "\"sequence\":";
        char *p = memmem(l, n, key, sizeof key - 1);
        if (p) {
            p += sizeof key - 1;
            long long v = 0;
            int any = 0;
            while (p < l + n && *p >= '0' && *p <= '9') { v = v * 10 + (*p - '0'); p++; any = 1; }
            if (any) c->ev_seq = v;
        }
    }
}

static void sse_bytes(conn_t *c, const char *p, size_t n) {
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (c->llen + take > (1 << 20)) { kill_conn(c, "line too long"); return; }
        grow(&c->line, &c->lcap, c->llen + take + 1);
        memcpy(c->line + c->llen, p, take);
        c->llen += take;
        if (!nl) return;
        sse_line(c);
        if (c->dead) return;
        c->llen = 0;
        p += take + 1;
        n -= take + 1;
    }
}

static void body_bytes(conn_t *c, const char *p, size_t n) {
    while (n && !c->dead) {
        switch (c->state) {
        case RAW:
            sse_bytes(c, p, n);
            return;
        case CHUNK_SIZE: {
            char ch = *p++; n--;
            if (ch == '\n') {
                if (c->chunk_left == 0) { kill_conn(c, "end of stream"); return; }
                c->state = CHUNK_DATA;
            } else if (ch >= '0' && ch <= '9') c->chunk_left = c->chunk_left * 16 + (ch - '0');
            else if (ch >= 'a' && ch <= 'f') c->chunk_left = c->chunk_left * 16 + (ch - 'a' + 10);
            else if (ch >= 'A' && ch <= 'F') c->chunk_left = c->chunk_left * 16 + (ch - 'A' + 10);
            /* '\r' and chunk extensions are ignored */
            break;
        }
        case CHUNK_DATA: {
            size_t take = (size_t)c->chunk_left < n ? (size_t)c->chunk_left : n;
            sse_bytes(c, p, take);
            p += take; n -= take;
            c->chunk_left -= (long long)take;
            if (c->chunk_left == 0) c->state = CHUNK_CRLF;
            break;
        }
        case CHUNK_CRLF: {
            char ch = *p++; n--;
            if (ch == '\n') { c->state = CHUNK_SIZE; c->chunk_left = 0; }
            break;
        }
        }
    }
}

static void on_bytes(conn_t *c, const char *p, size_t n) {
    if (c->state != HDR) { body_bytes(c, p, n); return; }
    grow(&c->hdr, &c->hcap, c->hlen + n + 1);
    memcpy(c->hdr + c->hlen, p, n);
    c->hlen += n;
    c->hdr[c->hlen] = 0;
    char *end = strstr(c->hdr, "\r\n\r\n");
    if (!end) {
        if (c->hlen > 16384) kill_conn(c, "headers too long");
        return;
    }
    if (strncmp(c->hdr, "HTTP/1.1 200", 12) != 0 && strncmp(c->hdr, "HTTP/1.0 200", 12) != 0) {
        fprintf(stderr, "sseclient: unexpected response: %.40s\n", c->hdr);
        kill_conn(c, "status");
        return;
    }
    c->chunked = strcasestr(c->hdr, "transfer-encoding: chunked") != NULL;
    c->state = c->chunked ? CHUNK_SIZE : RAW;
    size_t hdrlen = (size_t)(end - c->hdr) + 4;
    size_t rest = c->hlen - hdrlen;
    char *copy = NULL;
    if (rest) { copy = malloc(rest); memcpy(copy, c->hdr + hdrlen, rest); }
    free(c->hdr); c->hdr = NULL; c->hlen = c->hcap = 0;
    if (rest) { body_bytes(c, copy, rest); free(copy); }
}

static void launch_one(void) {
    conn_t *c = &conns[launched++];
    inflight++;
    c->ev_seq = -1;
    c->last_seq = -1;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) { perror("sseclient: socket"); c->fd = -1; kill_conn(c, "socket"); return; }
    int one = 1;
    setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    int rc = connect(c->fd, (struct sockaddr *)&target, sizeof target);
    if (rc < 0 && errno != EINPROGRESS) { kill_conn(c, "connect"); return; }
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)(c - conns)};
    epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

static void on_ready(conn_t *c, uint32_t events) {
    if (c->dead) return;
    if (!c->connected && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) { kill_conn(c, "connect error"); return; }
        ssize_t w = send(c->fd, request, sizeof request - 1, MSG_NOSIGNAL);
        if (w != (ssize_t)(sizeof request - 1)) { kill_conn(c, "send"); return; }
        c->connected = 1;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)(c - conns)};
        epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    }
    if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) return;
    static char buf[65536];
    char cbuf[CMSG_SPACE(sizeof(struct timespec)) * 2];
    for (int rounds = 0; rounds < 16 && !c->dead; rounds++) {
        struct iovec iov = {buf, sizeof buf};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        ssize_t r = recvmsg(c->fd, &msg, 0);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            if (errno == EINTR) continue;
            kill_conn(c, "recv");
            return;
        }
        if (r == 0) { kill_conn(c, "eof"); return; }
        cur_user_ns = now_ns(CLOCK_MONOTONIC);
        cur_kern_ns = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                cur_kern_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
            }
        }
        on_bytes(c, buf, (size_t)r);
        if ((size_t)r < sizeof buf) return;
    }
}

int main(int argc, char **argv) {
    const char *addr = "127.0.0.1", *out = NULL;
    int port = 0;
    double max_seconds = 300;
    nconns = 1;
    int opt;
    while ((opt = getopt(argc, argv, "a:p:n:i:t:o:")) != -1) {
        switch (opt) {
        case 'a': addr = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 'n': nconns = atoi(optarg); break;
        case 'i': inflight_max = atoi(optarg); break;
        case 't': max_seconds = atof(optarg); break;
        case 'o': out = optarg; break;
        default:
            fprintf(stderr, "usage: sseclient -p PORT [-a ADDR] [-n CONNS] [-i INFLIGHT] [-t SECONDS] [-o FILE]\n");
            return 2;
        }
    }
    if (port <= 0 || nconns <= 0) { fprintf(stderr, "sseclient: -p and -n are required\n"); return 2; }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rlim_t want = (rlim_t)nconns + 64;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    memset(&target, 0, sizeof target);
    target.sin_family = AF_INET;
    target.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, addr, &target.sin_addr) != 1) { fprintf(stderr, "sseclient: bad address\n"); return 2; }
    conns = calloc((size_t)nconns, sizeof(conn_t));
    epfd = epoll_create1(EPOLL_CLOEXEC);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    struct epoll_event sev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &sev);

    int64_t deadline = now_ns(CLOCK_MONOTONIC) + (int64_t)(max_seconds * 1e9);
    int64_t connect_deadline = now_ns(CLOCK_MONOTONIC) + 60LL * 1000000000LL;
    struct epoll_event evs[1024];
    char cmd[256];
    size_t cmdlen = 0;
    int quit = 0;
    while (!quit) {
        while (launched < nconns && inflight < inflight_max) launch_one();
        int64_t now = now_ns(CLOCK_MONOTONIC);
        if (now > deadline) { fprintf(stderr, "sseclient: time limit reached\n"); break; }
        if (!ready_reported && now > connect_deadline) {
            /* Connections that never got their first event in 60 s count as failed. */
            for (int i = 0; i < launched; i++) if (!conns[i].first && !conns[i].dead) kill_conn(&conns[i], "timeout");
            while (launched < nconns) { conn_t *c = &conns[launched++]; c->dead = 1; c->fd = -1; open_failed++; }
            report_ready();
        }
        int n = epoll_wait(epfd, evs, 1024, 200);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u32 == UINT32_MAX) {
                for (;;) {
                    ssize_t r = read(0, cmd + cmdlen, sizeof cmd - 1 - cmdlen);
                    if (r == 0) { quit = 1; break; }
                    if (r < 0) break;
                    cmdlen += (size_t)r;
                    cmd[cmdlen] = 0;
                    if (strstr(cmd, "quit")) { quit = 1; break; }
                    if (cmdlen > 200) cmdlen = 0;
                }
                if (quit) epoll_ctl(epfd, EPOLL_CTL_DEL, 0, NULL);
                continue;
            }
            on_ready(&conns[evs[i].data.u32], evs[i].events);
        }
    }
    long long still = 0;
    for (int i = 0; i < nconns; i++) if (!conns[i].dead && conns[i].fd >= 0) { close(conns[i].fd); still++; }
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) { perror("sseclient: output"); return 1; }
        for (size_t i = 0; i < nrecords; i++)
            fprintf(f, "%u %lld %lld %lld\n", records[i].conn, (long long)records[i].seq,
                    (long long)records[i].user_ns, (long long)records[i].kern_ns);
        fclose(f);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("summary conns=%d ok=%d failed=%d open_at_end=%lld errors=%ld events=%zu heartbeats=%ld "
           "utime=%.3f stime=%.3f maxrss_kib=%ld\n",
           nconns, open_ok, open_failed, still, total_errors, nrecords, total_heartbeats,
           ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
           ru.ru_maxrss);
    fflush(stdout);
    return 0;
}
