/*
 * floor — the least an SSE server can do per change, for reachd's fan-out benchmark: it only
 * writes. Every change is framed once and sent to every open stream with one send() each, split
 * over THREADS threads, nothing else (no HTTP parsing beyond finding the end of a request head,
 * no slow-client handling, no accounting). Its spread is the physical floor of fan-out on this
 * machine for that many threads; reachd and nchan are measured against it in the same run.
 *
 *   floor -p PORT [-t THREADS]
 *
 * Listens on 127.0.0.1:PORT. `GET /status` gets `{}` and a close; any other request gets a chunked
 * `text/event-stream` response that starts with the latest frame. Changes arrive on stdin as
 * "LENGTH\n" then LENGTH bytes of document; each is sent as `id: 0\nevent: status\ndata: DOC\n\n`
 * and answered on stdout with "sent N\n" once every thread has written it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MAX_STREAMS = 40000, MAX_THREADS = 16 };

static int streams[MAX_STREAMS];
static int stream_count;
static char *chunk;     /* the framed change every stream is sent */
static size_t chunk_len;

typedef struct { int first, step; } share_t;

static void *write_share(void *arg) {
    share_t *share = arg;
    for (int i = share->first; i < stream_count; i += share->step)
        (void) send(streams[i], chunk, chunk_len, MSG_DONTWAIT | MSG_NOSIGNAL);
    return NULL;
}

/* Frames `doc` as one SSE event in one HTTP chunk. */
static void frame(const char *doc, size_t len) {
    static const char prefix[] = "id: 0\nevent: status\ndata: ";
    size_t body = sizeof(prefix) - 1 + len + 2;
    char head[32];
    int head_len = snprintf(head, sizeof head, "%zx\r\n", body);
    free(chunk);
    chunk_len = head_len + body + 2;
    chunk = malloc(chunk_len);
    memcpy(chunk, head, head_len);
    memcpy(chunk + head_len, prefix, sizeof(prefix) - 1);
    memcpy(chunk + head_len + sizeof(prefix) - 1, doc, len);
    memcpy(chunk + chunk_len - 4, "\n\n\r\n", 4);
}

static void publish(int threads) {
    pthread_t ids[MAX_THREADS];
    share_t shares[MAX_THREADS];
    for (int t = 0; t < threads; t++) shares[t] = (share_t){t, threads};
    for (int t = 1; t < threads; t++) pthread_create(&ids[t], NULL, write_share, &shares[t]);
    write_share(&shares[0]);
    for (int t = 1; t < threads; t++) pthread_join(ids[t], NULL);
    printf("sent %d\n", stream_count);
    fflush(stdout);
}

/* Reads one change from stdin; 0 at EOF. */
static int read_change(void) {
    char line[32];
    if (!fgets(line, sizeof line, stdin)) return 0;
    size_t len = strtoul(line, NULL, 10);
    char *doc = malloc(len ? len : 1);
    if (fread(doc, 1, len, stdin) != len) { free(doc); return 0; }
    frame(doc, len);
    free(doc);
    return 1;
}

static void answer(int fd, const char *request) {
    if (strncmp(request, "GET /status", 11) == 0) {
        static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                                    "Connection: close\r\n\r\n{}";
        (void) send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL);
        close(fd);
        return;
    }
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void) send(fd, head, sizeof head - 1, MSG_NOSIGNAL);
    if (chunk) (void) send(fd, chunk, chunk_len, MSG_NOSIGNAL);
    if (stream_count < MAX_STREAMS) streams[stream_count++] = fd;
    else close(fd);
}

int main(int argc, char **argv) {
    int port = 0, threads = 1, opt;
    while ((opt = getopt(argc, argv, "p:t:")) != -1) {
        if (opt == 'p') port = atoi(optarg);
        else if (opt == 't') threads = atoi(optarg);
    }
    if (port <= 0 || threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: floor -p PORT [-t THREADS]\n");
        return 2;
    }
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) { limit.rlim_cur = limit.rlim_max; setrlimit(RLIMIT_NOFILE, &limit); }
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (bind(listener, (struct sockaddr *) &address, sizeof address) || listen(listener, 4096)) {
        perror("floor: listen");
        return 1;
    }
    int poller = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
    event.data.fd = STDIN_FILENO;
    epoll_ctl(poller, EPOLL_CTL_ADD, STDIN_FILENO, &event);
    for (;;) {
        struct epoll_event ready[256];
        int n = epoll_wait(poller, ready, 256, -1);
        if (n < 0 && errno == EINTR) continue;
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == STDIN_FILENO) {
                if (!read_change()) return 0;
                publish(threads);
            } else if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                    struct epoll_event request = {.events = EPOLLIN, .data.fd = client};
                    epoll_ctl(poller, EPOLL_CTL_ADD, client, &request);
                }
            } else {
                /* A request head: small enough to arrive in one read on loopback. */
                char request[2048];
                ssize_t got = recv(fd, request, sizeof request - 1, 0);
                epoll_ctl(poller, EPOLL_CTL_DEL, fd, NULL);
                if (got <= 0) { close(fd); continue; }
                request[got] = 0;
                answer(fd, request);
            }
        }
    }
}
