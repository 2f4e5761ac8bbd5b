/* kv_events.c — the KV event publisher of `wick serve` (see kv_events.h):
 * owns the server's ZMQ context and PUB socket (guarded by a mutex: every
 * model's scheduler thread publishes through it), the message sequence
 * counter, and per attached model the msgpack encoding of one scheduler
 * step's events, sent on the prefix cache's FLUSH. The msgpack encoders are
 * the few this format needs, written here, into the serve layer's wbuf. */
#include "serve/kv_events.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/error.h"
#include "engine/context.h"
#include "kv/kv_cache.h"

struct kv_events {
    void *zctx, *sock;
    pthread_mutex_t mu; /* the socket and seq */
    uint64_t seq;       /* of the next message */
    char *topic;        /* --kv-events-topic, or NULL */
    char *host;
    _Atomic int port;
};

/* Room kept before a batch's events for the header written at send time:
 * fixarray(3) + float64 + array32 header. */
#define MP_HEAD 15

struct kv_events_model {
    kv_events *p;
    wick_context *ctx;
    char *name;
    char *topic;        /* built at the first send (the port is known by then) */
    int topic_port;     /* the port in topic */
    wbuf b;             /* MP_HEAD bytes of room, then the events (b.oom: one did not fit,
                         * and the batch is replaced) */
    uint32_t n_events;
};

/* ------------------------------------------------------------ msgpack */

static void put_be(uint8_t *o, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; i--, v >>= 8) o[i] = (uint8_t)v;
}

/* one tag byte followed by v in `bytes` big-endian bytes */
static void mp_tagged(kv_events_model *m, uint8_t tag, uint64_t v, int bytes) {
    uint8_t o[9];
    o[0] = tag;
    put_be(o + 1, v, bytes);
    wbuf_put(&m->b, (const char *)o, 1 + (size_t)bytes);
}

static void mp_nil(kv_events_model *m) { mp_tagged(m, 0xc0, 0, 0); }

/* the header of an array of n elements into o; returns its length */
static size_t mp_array_head(uint8_t *o, uint32_t n) {
    if (n < 16) {
        o[0] = (uint8_t)(0x90 | n);
        return 1;
    }
    if (n <= 0xffff) {
        o[0] = 0xdc;
        put_be(o + 1, n, 2);
        return 3;
    }
    o[0] = 0xdd;
    put_be(o + 1, n, 4);
    return 5;
}

static void mp_array(kv_events_model *m, uint32_t n) {
    uint8_t o[5];
    wbuf_put(&m->b, (const char *)o, mp_array_head(o, n));
}

static void mp_uint(kv_events_model *m, uint64_t v) {
    if (v < 0x80) mp_tagged(m, (uint8_t)v, 0, 0);
    else if (v <= 0xff) mp_tagged(m, 0xcc, v, 1);
    else if (v <= 0xffff) mp_tagged(m, 0xcd, v, 2);
    else if (v <= 0xffffffffu) mp_tagged(m, 0xce, v, 4);
    else mp_tagged(m, 0xcf, v, 8);
}

static void mp_int(kv_events_model *m, int64_t v) {
    if (v >= 0) mp_uint(m, (uint64_t)v);
    else if (v >= -32) mp_tagged(m, (uint8_t)(int8_t)v, 0, 0);
    else if (v >= INT8_MIN) mp_tagged(m, 0xd0, (uint64_t)v, 1);
    else if (v >= INT16_MIN) mp_tagged(m, 0xd1, (uint64_t)v, 2);
    else if (v >= INT32_MIN) mp_tagged(m, 0xd2, (uint64_t)v, 4);
    else mp_tagged(m, 0xd3, (uint64_t)v, 8);
}

/* Full width whatever the value, so decoders see one type for every hash. */
static void mp_u64(kv_events_model *m, uint64_t v) { mp_tagged(m, 0xcf, v, 8); }

/* fixstr, str8 or str16 (the event names; longer strings are cut) */
static void mp_str(kv_events_model *m, const char *s) {
    size_t n = strlen(s);
    if (n > 0xffff) n = 0xffff;
    if (n < 32) mp_tagged(m, (uint8_t)(0xa0 | n), 0, 0);
    else if (n <= 0xff) mp_tagged(m, 0xd9, n, 1);
    else mp_tagged(m, 0xda, n, 2);
    wbuf_put(&m->b, s, n);
}

/* --------------------------------------------------------------- batch */

static void batch_reset(kv_events_model *m) {
    static const char room[MP_HEAD];
    wbuf_reset(&m->b);
    m->b.oom = false;
    wbuf_put(&m->b, room, MP_HEAD);
    m->n_events = 0;
}

static void add_cleared(kv_events_model *m) {
    mp_array(m, 1);
    mp_str(m, "AllBlocksCleared");
    m->n_events++;
}

static void add_event(kv_events_model *m, const kv_event *ev) {
    switch (ev->kind) {
    case KV_EVENT_STORED:
        mp_array(m, 6);
        mp_str(m, "BlockStored");
        mp_array(m, 1);
        mp_u64(m, ev->key.lo);
        if (ev->has_parent) mp_u64(m, ev->parent.lo);
        else mp_nil(m);
        mp_array(m, (uint32_t)ev->n_tokens);
        for (int i = 0; i < ev->n_tokens; i++) mp_int(m, ev->tokens[i]);
        mp_int(m, KV_BLOCK_SIZE);
        mp_nil(m); /* lora_id */
        break;
    case KV_EVENT_REMOVED:
        mp_array(m, 2);
        mp_str(m, "BlockRemoved");
        mp_array(m, 1);
        mp_u64(m, ev->key.lo);
        break;
    case KV_EVENT_FLUSH:
        return;
    }
    m->n_events++;
}

static char *topic_of(const kv_events_model *m, int port) {
    const kv_events *p = m->p;
    if (p->topic) return strdup(p->topic);
    const char *host = p->host ? p->host : "127.0.0.1";
    const bool v6 = strchr(host, ':') != NULL;
    const char *fmt = v6 ? "kv@[%s]:%d@%s" : "kv@%s:%d@%s";
    int n = snprintf(NULL, 0, fmt, host, port, m->name);
    char *t = n < 0 ? NULL : malloc((size_t)n + 1);
    if (t) snprintf(t, (size_t)n + 1, fmt, host, port, m->name);
    return t;
}


/* Send the collected events as one message (if there are any). */
static void batch_send(kv_events_model *m) {
    if (m->b.oom) { /* events were lost: tell subscribers to forget this model's blocks */
        batch_reset(m);
        add_cleared(m);
    }
    if (m->n_events == 0) return;
    mp_nil(m); /* data_parallel_rank */
    if (m->b.oom) {
        batch_reset(m);
        return;
    }
    uint8_t head[MP_HEAD];
    size_t h = 0;
    head[h++] = 0x93;
    head[h++] = 0xcb;
    double ts = wick_wall_s();
    uint64_t bits;
    memcpy(&bits, &ts, sizeof bits);
    put_be(head + h, bits, 8);
    h += 8;
    h += mp_array_head(head + h, m->n_events);
    uint8_t *msg = (uint8_t *)m->b.data + MP_HEAD - h;
    memcpy(msg, head, h);
    const size_t len = m->b.len - (MP_HEAD - h);

    const int port = atomic_load(&m->p->port);
    if (!m->topic || m->topic_port != port) { /* (re)built once the server's port is known */
        char *t = topic_of(m, port);
        if (t) {
            free(m->topic);
            m->topic = t;
            m->topic_port = port;
        }
    }
    kv_events *p = m->p;
    pthread_mutex_lock(&p->mu);
    uint8_t seq[8];
    put_be(seq, p->seq++, 8);
    const char *topic = m->topic ? m->topic : "";
    /* PUB never blocks: past the high-water mark a message is dropped whole */
    if (zmq_send(p->sock, topic, strlen(topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 &&
        zmq_send(p->sock, seq, sizeof seq, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0)
        zmq_send(p->sock, msg, len, ZMQ_DONTWAIT);
    pthread_mutex_unlock(&p->mu);
    batch_reset(m);
}

/* The prefix cache's callback: on the model's scheduler thread. */
static void on_event(void *user, const kv_event *ev) {
    kv_events_model *m = user;
    if (ev->kind == KV_EVENT_FLUSH) batch_send(m);
    else add_event(m, ev);
}

/* ---------------------------------------------------------- publisher */

kv_events *kv_events_open(const char *endpoint, const char *topic, const char *host, wick_error *err) {
    kv_events *p = calloc(1, sizeof *p);
    if (!p || (topic && !(p->topic = strdup(topic))) || (host && !(p->host = strdup(host)))) {
        if (p) {
            free(p->topic);
            free(p);
        }
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    const bool bind = strchr(endpoint, '*') || strncmp(endpoint, "ipc://", 6) == 0;
    int linger = 1000, on = 1;
    if (!(p->zctx = zmq_ctx_new())) {
        wick_fail(err, "KV events: cannot create a ZMQ context: %s", zmq_strerror(errno));
        goto fail;
    }
    if (!(p->sock = zmq_socket(p->zctx, ZMQ_PUB))) {
        wick_fail(err, "KV events: cannot create a ZMQ PUB socket: %s", zmq_strerror(errno));
        goto fail;
    }
    zmq_setsockopt(p->sock, ZMQ_LINGER, &linger, sizeof linger);
    if (strchr(endpoint, '[')) zmq_setsockopt(p->sock, ZMQ_IPV6, &on, sizeof on);
    if ((bind ? zmq_bind(p->sock, endpoint) : zmq_connect(p->sock, endpoint)) != 0) {
        wick_fail(err, "KV events endpoint \"%s\": cannot %s: %s", endpoint, bind ? "bind" : "connect",
                  zmq_strerror(errno));
        goto fail;
    }
    return p;
fail:
    kv_events_close(p);
    return NULL;
}

void kv_events_set_port(kv_events *p, int port) {
    if (p) atomic_store(&p->port, port);
}

void kv_events_close(kv_events *p) {
    if (!p) return;
    if (p->sock) zmq_close(p->sock);
    if (p->zctx) /* waits up to the linger for queued messages */
        while (zmq_ctx_term(p->zctx) != 0 && errno == EINTR) {
        }
    pthread_mutex_destroy(&p->mu);
    free(p->topic);
    free(p->host);
    free(p);
}

int kv_events_attach(kv_events *p, wick_context *ctx, const char *name, kv_events_model **out, wick_error *err) {
    *out = NULL;
    if (!p || !ctx->kv.pc) return 0;
    kv_events_model *m = calloc(1, sizeof *m);
    if (!m || !(m->name = strdup(name))) {
        free(m);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    m->p = p;
    m->ctx = ctx;
    batch_reset(m);
    if (m->b.oom) {
        wbuf_free(&m->b);
        free(m->name);
        free(m);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    kv_set_events(&ctx->kv, on_event, m);
    *out = m;
    return 0;
}

void kv_events_detach(kv_events_model *m) {
    if (!m) return;
    kv_set_events(&m->ctx->kv, NULL, NULL);
    add_cleared(m); /* after whatever the last step left unsent */
    batch_send(m);
    free(m->topic);
    free(m->name);
    wbuf_free(&m->b);
    free(m);
}
