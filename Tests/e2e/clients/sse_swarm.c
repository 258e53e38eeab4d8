/*
 * sse_swarm — thousands of SSE clients of reachd's /events in one epoll loop, for the scale
 * tests (test_scale.py). C because a Python client would be the bottleneck at 10,000 streams.
 * Unlike bench/sseclient.c (timing), it keeps what each stream received, to be checked:
 * every event's `id:` and the `"sequence":` in its data, and how the stream ended.
 *
 *   sse_swarm -p PORT [-n CONNS] [-i INFLIGHT] [-t MAX_SECONDS] -o FILE
 *
 * Opens CONNS connections to 127.0.0.1:PORT (run it inside reachd's namespace with
 * `ip netns exec`), at most INFLIGHT still waiting for their first event at a time, and sends
 * `GET /events`. One line each way on stdin/stdout:
 *   out "ready OPEN FAILED"  every connection has its first event (or failed)
 *   out "seen N"             every open stream has received the event with id N
 *   out "ended N"            N streams have ended since "ready" (printed once all have)
 *   in  "quit" (or EOF)      close everything, write FILE, print "summary ...", exit
 * It exits by itself after MAX_SECONDS (default 600).
 *
 * FILE: one line per connection, "INDEX END ENDED_NS ID ID ...": END is open, clean (the final
 * chunk `0\r\n\r\n` then EOF), eof (EOF without the final chunk), reset, or error-WHY; ENDED_NS
 * the CLOCK_MONOTONIC time the stream ended (0 if open); then the id of every event in order.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum framing { HEAD, CHUNK_SIZE, CHUNK_DATA, CHUNK_CRLF, TRAILER, FINISHED, RAW };

typedef struct {
    int fd;
    enum framing state;
    int sent, first, ended;
    const char *end; /* how it ended */
    int64_t ended_ns;
    long long chunk_left;
    int size_digits;
    char head[4096];
    size_t head_len;
    char line[1 << 16]; /* current SSE line; reachd's documents are a few KiB */
    size_t line_len;
    long long event_id, event_sequence; /* of the event being read, -1 if none */
    long long *ids;
    size_t nids, capids;
} stream_t;

static stream_t *streams;
static int nstreams, inflight_max = 200, launched, inflight, open_ok, open_failed, ready_said, ended_after_ready;
static long long last_seen_said = -1;
static struct sockaddr_in target;
static int epfd;
static const char request[] = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void say(const char *word, long long a, long long b) {
    if (b >= 0) printf("%s %lld %lld\n", word, a, b);
    else printf("%s %lld\n", word, a);
    fflush(stdout);
}

static void check_ready(void) {
    if (!ready_said && open_ok + open_failed == nstreams) {
        ready_said = 1;
        say("ready", open_ok, open_failed);
    }
}

/* "seen N" for the newest id every open stream has: streams receive ids in increasing order. */
static void check_seen(void) {
    if (!ready_said) return;
    long long lowest = -1;
    int any = 0;
    for (int i = 0; i < nstreams; i++) {
        stream_t *s = &streams[i];
        if (s->ended || !s->first || s->nids == 0) continue;
        long long newest = s->ids[s->nids - 1];
        if (!any || newest < lowest) lowest = newest;
        any = 1;
    }
    if (any && lowest > last_seen_said) {
        last_seen_said = lowest;
        say("seen", lowest, -1);
    }
}

static void end_stream(stream_t *s, const char *how) {
    if (s->ended) return;
    s->ended = 1;
    s->end = how;
    s->ended_ns = now_ns();
    if (s->fd >= 0) {
        epoll_ctl(epfd, EPOLL_CTL_DEL, s->fd, NULL);
        close(s->fd);
        s->fd = -1;
    }
    if (!s->first) {
        inflight--;
        open_failed++;
        check_ready();
    } else if (ready_said) {
        ended_after_ready++;
        if (ended_after_ready == open_ok) say("ended", ended_after_ready, -1);
    }
}

static void event_done(stream_t *s) {
    if (s->event_id < 0) return;
    if (s->event_sequence != s->event_id) { end_stream(s, "error-id-is-not-the-sequence"); return; }
    if (s->nids && s->event_id <= s->ids[s->nids - 1]) { end_stream(s, "error-ids-not-increasing"); return; }
    if (s->nids == s->capids) {
        s->capids = s->capids ? s->capids * 2 : 8;
        s->ids = realloc(s->ids, s->capids * sizeof *s->ids);
        if (!s->ids) { perror("realloc"); exit(2); }
    }
    s->ids[s->nids++] = s->event_id;
    if (!s->first) {
        s->first = 1;
        inflight--;
        open_ok++;
        check_ready();
    }
}

static long long number_after(const char *text, size_t length, const char *key) {
    const char *p = memmem(text, length, key, strlen(key));
    if (!p) return -1;
    p += strlen(key);
    while (p < text + length && *p == ' ') p++;
    long long value = 0;
    int digits = 0;
    while (p < text + length && *p >= '0' && *p <= '9') { value = value * 10 + (*p++ - '0'); digits++; }
    return digits ? value : -1;
}

static void sse_line(stream_t *s) {
    size_t n = s->line_len;
    if (n && s->line[n - 1] == '\r') n--;
    if (n == 0) {
        event_done(s);
        s->event_id = s->event_sequence = -1;
    } else if (n > 3 && memcmp(s->line, "id:", 3) == 0) {
        s->event_id = number_after(s->line, n, "id:");
    } else if (n > 5 && memcmp(s->line, "data:", 5) == 0) {
        s->event_sequence = number_after(s->line, n, "\"sequence\":");
    }
}

static void sse_bytes(stream_t *s, const char *p, size_t n) {
    while (n && !s->ended) {
        const char *newline = memchr(p, '\n', n);
        size_t take = newline ? (size_t)(newline - p) : n;
        if (s->line_len + take >= sizeof s->line) { end_stream(s, "error-line-too-long"); return; }
        memcpy(s->line + s->line_len, p, take);
        s->line_len += take;
        if (!newline) return;
        sse_line(s);
        s->line_len = 0;
        p += take + 1;
        n -= take + 1;
    }
}

static void body_bytes(stream_t *s, const char *p, size_t n) {
    while (n && !s->ended) {
        char c;
        switch (s->state) {
        case RAW:
            sse_bytes(s, p, n);
            return;
        case CHUNK_SIZE:
            c = *p++, n--;
            if (c == '\n') {
                if (!s->size_digits) { end_stream(s, "error-empty-chunk-size"); return; }
                s->state = s->chunk_left ? CHUNK_DATA : TRAILER;
                s->size_digits = 0;
            } else if (c >= '0' && c <= '9') s->chunk_left = s->chunk_left * 16 + (c - '0'), s->size_digits++;
            else if (c >= 'a' && c <= 'f') s->chunk_left = s->chunk_left * 16 + (c - 'a' + 10), s->size_digits++;
            else if (c >= 'A' && c <= 'F') s->chunk_left = s->chunk_left * 16 + (c - 'A' + 10), s->size_digits++;
            else if (c != '\r') { end_stream(s, "error-bad-chunk-size"); return; }
            break;
        case CHUNK_DATA: {
            size_t take = (size_t)s->chunk_left < n ? (size_t)s->chunk_left : n;
            sse_bytes(s, p, take);
            p += take, n -= take;
            s->chunk_left -= (long long)take;
            if (!s->chunk_left) s->state = CHUNK_CRLF;
            break;
        }
        case CHUNK_CRLF:
            c = *p++, n--;
            if (c == '\n') s->state = CHUNK_SIZE;
            else if (c != '\r') { end_stream(s, "error-chunk-not-followed-by-crlf"); return; }
            break;
        case TRAILER: /* reachd sends no trailer fields: the empty line ends the message */
            c = *p++, n--;
            if (c == '\n') s->state = FINISHED;
            else if (c != '\r') { end_stream(s, "error-trailer"); return; }
            break;
        case FINISHED:
            end_stream(s, "error-bytes-after-the-final-chunk");
            return;
        case HEAD:
            return;
        }
    }
}

static void on_bytes(stream_t *s, const char *p, size_t n) {
    if (s->state != HEAD) { body_bytes(s, p, n); return; }
    size_t take = n < sizeof s->head - 1 - s->head_len ? n : sizeof s->head - 1 - s->head_len;
    memcpy(s->head + s->head_len, p, take);
    s->head_len += take;
    s->head[s->head_len] = 0;
    char *end = strstr(s->head, "\r\n\r\n");
    if (!end) {
        if (s->head_len == sizeof s->head - 1) end_stream(s, "error-head-too-long");
        return;
    }
    if (strncmp(s->head, "HTTP/1.1 200 ", 13) != 0) { end_stream(s, "error-status-not-200"); return; }
    s->state = strcasestr(s->head, "\r\ntransfer-encoding: chunked") ? CHUNK_SIZE : RAW;
    size_t used = (size_t)(end + 4 - s->head) - (s->head_len - take);
    body_bytes(s, p + used, n - used);
}

static void launch(void) {
    stream_t *s = &streams[launched++];
    inflight++;
    s->event_id = s->event_sequence = -1;
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) { end_stream(s, "error-socket"); return; }
    if (connect(s->fd, (struct sockaddr *)&target, sizeof target) < 0 && errno != EINPROGRESS) {
        end_stream(s, "error-connect");
        return;
    }
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)(s - streams)};
    epoll_ctl(epfd, EPOLL_CTL_ADD, s->fd, &ev);
}

static void on_ready(stream_t *s, uint32_t events) {
    if (s->ended) return;
    if (!s->sent) {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error) { end_stream(s, error == ECONNREFUSED ? "error-refused" : "error-connect"); return; }
        if (!(events & EPOLLOUT)) return;
        if (send(s->fd, request, sizeof request - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof request - 1)) {
            end_stream(s, "error-send");
            return;
        }
        s->sent = 1;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)(s - streams)};
        epoll_ctl(epfd, EPOLL_CTL_MOD, s->fd, &ev);
    }
    static char buffer[65536];
    for (int round = 0; round < 16 && !s->ended; round++) {
        ssize_t got = recv(s->fd, buffer, sizeof buffer, 0);
        if (got < 0) {
            if (errno == EAGAIN || errno == EINTR) return;
            end_stream(s, errno == ECONNRESET ? "reset" : "error-recv");
            return;
        }
        if (got == 0) {
            end_stream(s, s->state == FINISHED ? "clean" : "eof");
            return;
        }
        on_bytes(s, buffer, (size_t)got);
        if ((size_t)got < sizeof buffer) return;
    }
}

int main(int argc, char **argv) {
    const char *output = NULL;
    int port = 0, option;
    double max_seconds = 600;
    nstreams = 1;
    while ((option = getopt(argc, argv, "p:n:i:t:o:")) != -1) {
        switch (option) {
        case 'p': port = atoi(optarg); break;
        case 'n': nstreams = atoi(optarg); break;
        case 'i': inflight_max = atoi(optarg); break;
        case 't': max_seconds = atof(optarg); break;
        case 'o': output = optarg; break;
        default: fprintf(stderr, "usage: sse_swarm -p PORT [-n N] [-i INFLIGHT] [-t SECONDS] -o FILE\n"); return 2;
        }
    }
    if (port <= 0 || nstreams <= 0 || !output) { fprintf(stderr, "sse_swarm: -p, -n and -o are required\n"); return 2; }
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    if (limit.rlim_cur < (rlim_t)nstreams + 64) {
        limit.rlim_cur = (rlim_t)nstreams + 64 < limit.rlim_max ? (rlim_t)nstreams + 64 : limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    target.sin_family = AF_INET;
    target.sin_port = htons((uint16_t)port);
    target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    streams = calloc((size_t)nstreams, sizeof *streams);
    if (!streams) { perror("calloc"); return 2; }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    struct epoll_event input = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &input);

    int64_t deadline = now_ns() + (int64_t)(max_seconds * 1e9);
    struct epoll_event events[1024];
    char command[256];
    size_t command_length = 0;
    int quit = 0;
    int64_t last_check_ns = 0;
    while (!quit) {
        while (launched < nstreams && inflight < inflight_max) launch();
        if (now_ns() > deadline) { fprintf(stderr, "sse_swarm: time limit reached\n"); break; }
        int count = epoll_wait(epfd, events, 1024, 20);
        for (int i = 0; i < count; i++) {
            if (events[i].data.u32 == UINT32_MAX) {
                ssize_t got = read(0, command + command_length, sizeof command - 1 - command_length);
                if (got <= 0) { quit = got == 0; if (quit) break; continue; }
                command_length += (size_t)got;
                command[command_length] = 0;
                if (strstr(command, "quit")) quit = 1;
                if (command_length > 200) command_length = 0;
                continue;
            }
            on_ready(&streams[events[i].data.u32], events[i].events);
        }
        int64_t now = now_ns();
        if (now - last_check_ns > 20000000) { /* a pass over every stream: at most 50 a second */
            last_check_ns = now;
            check_seen();
        }
    }
    FILE *file = fopen(output, "w");
    if (!file) { perror("sse_swarm: output"); return 1; }
    long clean = 0, open = 0;
    for (int i = 0; i < nstreams; i++) {
        stream_t *s = &streams[i];
        clean += s->ended && strcmp(s->end, "clean") == 0;
        open += !s->ended && i < launched;
        fprintf(file, "%d %s %lld", i, s->ended ? s->end : "open", (long long)s->ended_ns);
        for (size_t k = 0; k < s->nids; k++) fprintf(file, " %lld", s->ids[k]);
        fputc('\n', file);
        if (s->fd >= 0) close(s->fd);
    }
    fclose(file);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("summary streams=%d ok=%d failed=%d open=%ld clean=%ld cpu=%.2fs maxrss_kib=%ld\n", nstreams, open_ok,
           open_failed, open, clean, usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
           (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6, usage.ru_maxrss);
    fflush(stdout);
    return 0;
}
