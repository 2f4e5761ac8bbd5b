/* kv_events_sub.c — test helper for tests/serve_kv_events.test.sh (not a
 * test by itself): a ZMQ SUB client of `wick serve --kv-events` that decodes
 * the vLLM KV event messages with its own msgpack reader, checks every one,
 * and keeps the set of blocks stored and not removed.
 *
 * usage: kv_events_sub (--bind EP | --connect EP) --dir DIR [--timeout S]
 *                      [--filter PREFIX] [--until-cleared]
 *
 * --bind: DIR/endpoint gets the endpoint actually bound (for "tcp://H:*").
 * After every message DIR/state is rewritten (atomically) with lines
 * "messages N", "live N" (stored, not removed), "seen N" (hashes ever
 * stored), "stored N", "removed N", "cleared N", "errors N", "seq N" (the
 * last one) and "topic T"; every BlockStored is appended to DIR/stored.jsonl
 * as {"hash":"H","parent":"P"|null,"tokens":[...]} (hashes as decimal
 * strings). Checks: three frames; a topic "kv@HOST[:PORT]@MODEL", the
 * same in every message; seq 0 first, then +1 each;
 * payload [float64 ts near now, [event...], nil] with nothing after it;
 * ["BlockStored", [uint64 hash], uint64 parent|nil, [128 token ids >= 0],
 * 128, nil] of a hash not live, whose parent was stored before;
 * ["BlockRemoved", [uint64 hash...]] of live hashes; ["AllBlocksCleared"].
 * Each failed check prints "kv_events_sub: error: ..." on stderr.
 * --until-cleared: exit after the first AllBlocksCleared. Exits 0 if no
 * check failed, 1 if one did, 2 on a usage or setup error, 3 on timeout
 * (default 60 s). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#define BLOCK 128

static int n_errors;
static void error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kv_events_sub: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    n_errors++;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------ msgpack reader */

typedef enum { MP_NIL, MP_BOOL, MP_UINT, MP_INT, MP_FLOAT, MP_STR, MP_BIN, MP_ARRAY, MP_MAP, MP_EXT, MP_BAD } mp_type;

typedef struct mp_val {
    mp_type t;
    uint8_t tag;   /* the first byte */
    uint64_t u;    /* MP_UINT; array/map/str/bin length */
    int64_t i;     /* MP_INT (negative) */
    double f;
    const uint8_t *s; /* MP_STR / MP_BIN bytes */
} mp_val;

typedef struct mp_rd {
    const uint8_t *p, *end;
} mp_rd;

static bool take(mp_rd *r, size_t n, const uint8_t **out) {
    if ((size_t)(r->end - r->p) < n) return false;
    *out = r->p;
    r->p += n;
    return true;
}

static uint64_t be(const uint8_t *b, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | b[i];
    return v;
}

/* Read one value's head (an array's or map's elements stay to be read). */
static mp_val mp_next(mp_rd *r) {
    mp_val v = {.t = MP_BAD};
    const uint8_t *b;
    if (!take(r, 1, &b)) return v;
    const uint8_t c = b[0];
    v.tag = c;
    int n = 0; /* bytes of the number or length that follow */
    if (c <= 0x7f) return (mp_val){.t = MP_UINT, .tag = c, .u = c};
    if (c >= 0xe0) return (mp_val){.t = MP_INT, .tag = c, .i = (int8_t)c};
    if ((c & 0xf0) == 0x90) return (mp_val){.t = MP_ARRAY, .tag = c, .u = c & 0x0f};
    if ((c & 0xf0) == 0x80) return (mp_val){.t = MP_MAP, .tag = c, .u = c & 0x0f};
    if ((c & 0xe0) == 0xa0) {
        v.t = MP_STR;
        v.u = c & 0x1f;
        if (!take(r, v.u, &v.s)) v.t = MP_BAD;
        return v;
    }
    switch (c) {
    case 0xc0: v.t = MP_NIL; return v;
    case 0xc2: case 0xc3: v.t = MP_BOOL; v.u = c == 0xc3; return v;
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
        n = 1 << (c - 0xcc);
        if (!take(r, (size_t)n, &b)) return v;
        v.t = MP_UINT;
        v.u = be(b, n);
        return v;
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        n = 1 << (c - 0xd0);
        if (!take(r, (size_t)n, &b)) return v;
        uint64_t x = be(b, n);
        int shift = 64 - 8 * n;
        int64_t s = (int64_t)(x << shift) >> shift; /* sign-extend */
        if (s >= 0) {
            v.t = MP_UINT;
            v.u = (uint64_t)s;
        } else {
            v.t = MP_INT;
            v.i = s;
        }
        return v;
    }
    case 0xca: {
        if (!take(r, 4, &b)) return v;
        uint32_t x = (uint32_t)be(b, 4);
        float f;
        memcpy(&f, &x, sizeof f);
        v.t = MP_FLOAT;
        v.f = f;
        return v;
    }
    case 0xcb: {
        if (!take(r, 8, &b)) return v;
        uint64_t x = be(b, 8);
        memcpy(&v.f, &x, sizeof v.f);
        v.t = MP_FLOAT;
        return v;
    }
    case 0xd9: case 0xda: case 0xdb: case 0xc4: case 0xc5: case 0xc6:
        n = c >= 0xd9 ? 1 << (c - 0xd9) : 1 << (c - 0xc4);
        if (!take(r, (size_t)n, &b)) return v;
        v.u = be(b, n);
        if (!take(r, v.u, &v.s)) return v;
        v.t = c >= 0xd9 ? MP_STR : MP_BIN;
        return v;
    case 0xdc: case 0xdd: case 0xde: case 0xdf:
        n = (c & 1) ? 4 : 2;
        if (!take(r, (size_t)n, &b)) return v;
        v.t = c <= 0xdd ? MP_ARRAY : MP_MAP;
        v.u = be(b, n);
        return v;
    default:
        return v; /* ext types: not in this format */
    }
}

static bool is_str(const mp_val *v, const char *s) {
    return v->t == MP_STR && v->u == strlen(s) && memcmp(v->s, s, v->u) == 0;
}

/* ------------------------------------------------------------ block set */

#define SET_CAP (1u << 16)
static uint64_t set_key[SET_CAP];
static uint8_t set_state[SET_CAP]; /* 0 empty, 1 live, 2 seen (removed) */
static int n_live, n_seen;

static uint8_t *slot(uint64_t h, bool add) {
    uint32_t i = (uint32_t)((h * 0x9e3779b97f4a7c15ull) >> 48) & (SET_CAP - 1);
    for (uint32_t k = 0; k < SET_CAP; k++, i = (i + 1) & (SET_CAP - 1)) {
        if (set_state[i] && set_key[i] == h) return &set_state[i];
        if (!set_state[i]) {
            if (!add) return NULL;
            if ((uint32_t)n_seen + 1 >= SET_CAP / 2) return NULL;
            set_key[i] = h;
            n_seen++;
            return &set_state[i];
        }
    }
    return NULL;
}

static void clear_live(void) {
    for (uint32_t i = 0; i < SET_CAP; i++)
        if (set_state[i] == 1) set_state[i] = 2;
    n_live = 0;
}

/* ------------------------------------------------------------- checking */

static char topic0[512];
static uint64_t n_msgs, n_stored, n_removed, n_cleared, last_seq;
static FILE *stored_log;

/* A hash: one uint64. Returns false (with an error) otherwise. */
static bool read_hash(mp_rd *r, uint64_t *h, const char *what) {
    mp_val v = mp_next(r);
    if (v.t != MP_UINT || v.tag != 0xcf) {
        error("%s: not a msgpack uint64 (tag 0x%02x)", what, v.tag);
        return false;
    }
    *h = v.u;
    return true;
}

/* One event; false if the rest of the payload cannot be trusted. */
static bool check_event(mp_rd *r, uint64_t idx) {
    mp_val a = mp_next(r);
    if (a.t != MP_ARRAY || a.u < 1) {
        error("event %llu: not a non-empty array", (unsigned long long)idx);
        return false;
    }
    mp_val name = mp_next(r);
    if (is_str(&name, "BlockStored")) {
        if (a.u != 6) {
            error("BlockStored with %llu elements, want 6", (unsigned long long)a.u);
            return false;
        }
        mp_val hs = mp_next(r);
        uint64_t h = 0, parent = 0;
        if (hs.t != MP_ARRAY || hs.u != 1) {
            error("BlockStored: block_hashes is not an array of one hash");
            return false;
        }
        if (!read_hash(r, &h, "BlockStored hash")) return false;
        mp_val pv = mp_next(r);
        const bool has_parent = pv.t != MP_NIL;
        if (has_parent) {
            if (pv.t != MP_UINT || pv.tag != 0xcf) {
                error("BlockStored: parent_block_hash neither nil nor uint64");
                return false;
            }
            parent = pv.u;
            uint8_t *ps = slot(parent, false);
            if (!ps) error("BlockStored %llu: parent %llu was never stored", (unsigned long long)h,
                           (unsigned long long)parent);
        }
        mp_val tv = mp_next(r);
        if (tv.t != MP_ARRAY) {
            error("BlockStored: token_ids is not an array");
            return false;
        }
        if (tv.u != BLOCK) error("BlockStored: %llu token ids, want %d", (unsigned long long)tv.u, BLOCK);
        if (stored_log) {
            fprintf(stored_log, "{\"hash\":\"%llu\",\"parent\":", (unsigned long long)h);
            if (has_parent) fprintf(stored_log, "\"%llu\"", (unsigned long long)parent);
            else fprintf(stored_log, "null");
            fprintf(stored_log, ",\"tokens\":[");
        }
        for (uint64_t i = 0; i < tv.u; i++) {
            mp_val t = mp_next(r);
            if (t.t != MP_UINT || t.u > INT32_MAX) {
                error("BlockStored: token id %llu is not an int >= 0", (unsigned long long)i);
                return false;
            }
            if (stored_log) fprintf(stored_log, "%s%llu", i ? "," : "", (unsigned long long)t.u);
        }
        if (stored_log) fprintf(stored_log, "]}\n");
        mp_val bs = mp_next(r);
        if (bs.t != MP_UINT || bs.u != BLOCK) error("BlockStored: block_size is not %d", BLOCK);
        mp_val lora = mp_next(r);
        if (lora.t != MP_NIL) error("BlockStored: lora_id is not nil");
        uint8_t *st = slot(h, true);
        if (!st) {
            error("too many distinct hashes");
            return false;
        }
        if (*st == 1) error("BlockStored %llu: already stored and not removed", (unsigned long long)h);
        else n_live++;
        *st = 1;
        n_stored++;
        return true;
    }
    if (is_str(&name, "BlockRemoved")) {
        if (a.u != 2) {
            error("BlockRemoved with %llu elements, want 2", (unsigned long long)a.u);
            return false;
        }
        mp_val hs = mp_next(r);
        if (hs.t != MP_ARRAY || hs.u < 1) {
            error("BlockRemoved: block_hashes is not a non-empty array");
            return false;
        }
        for (uint64_t i = 0; i < hs.u; i++) {
            uint64_t h;
            if (!read_hash(r, &h, "BlockRemoved hash")) return false;
            uint8_t *st = slot(h, false);
            if (!st || *st != 1) {
                error("BlockRemoved %llu: not stored now", (unsigned long long)h);
                continue;
            }
            *st = 2;
            n_live--;
            n_removed++;
        }
        return true;
    }
    if (is_str(&name, "AllBlocksCleared")) {
        if (a.u != 1) {
            error("AllBlocksCleared with %llu elements, want 1", (unsigned long long)a.u);
            return false;
        }
        clear_live();
        n_cleared++;
        return true;
    }
    error("event %llu: unknown event type", (unsigned long long)idx);
    return false;
}

/* kv@HOST[:PORT]@MODEL (llm-d's pattern) */
static bool topic_ok(const char *t) {
    if (strncmp(t, "kv@", 3) != 0) return false;
    const char *at = strchr(t + 3, '@');
    return at && at > t + 3 && at[1];
}

static void check_message(zmq_msg_t *f, int n_frames) {
    n_msgs++;
    if (n_frames != 3) {
        error("message %llu: %d frames, want 3", (unsigned long long)n_msgs, n_frames);
        return;
    }
    char topic[512];
    size_t tl = zmq_msg_size(&f[0]);
    if (tl >= sizeof topic) tl = sizeof topic - 1;
    memcpy(topic, zmq_msg_data(&f[0]), tl);
    topic[tl] = 0;
    if (!topic0[0]) {
        snprintf(topic0, sizeof topic0, "%s", topic);
        if (!topic_ok(topic)) error("topic \"%s\" is not kv@HOST[:PORT]@MODEL", topic);
    } else if (strcmp(topic, topic0) != 0) {
        error("topic changed from \"%s\" to \"%s\"", topic0, topic);
    }
    if (zmq_msg_size(&f[1]) != 8) {
        error("seq frame of %zu bytes, want 8", zmq_msg_size(&f[1]));
    } else {
        uint64_t seq = be(zmq_msg_data(&f[1]), 8);
        uint64_t want = n_msgs == 1 ? 0 : last_seq + 1;
        if (seq != want) error("seq %llu, want %llu", (unsigned long long)seq, (unsigned long long)want);
        last_seq = seq;
    }
    mp_rd r = {zmq_msg_data(&f[2]), (const uint8_t *)zmq_msg_data(&f[2]) + zmq_msg_size(&f[2])};
    mp_val top = mp_next(&r);
    if (top.t != MP_ARRAY || top.u != 3) {
        error("payload: not an array of 3 (ts, events, dp_rank)");
        return;
    }
    mp_val ts = mp_next(&r);
    if (ts.t != MP_FLOAT || ts.tag != 0xcb) error("payload: ts is not a float64");
    else if (ts.f < now_s() - 3600 || ts.f > now_s() + 60) error("payload: ts %.3f is not the time now", ts.f);
    mp_val evs = mp_next(&r);
    if (evs.t != MP_ARRAY || evs.u == 0) {
        error("payload: events is not a non-empty array");
        return;
    }
    for (uint64_t i = 0; i < evs.u; i++)
        if (!check_event(&r, i)) return;
    mp_val dp = mp_next(&r);
    if (dp.t != MP_NIL) error("payload: data_parallel_rank is not nil");
    if (r.p != r.end) error("payload: %zu bytes after the batch", (size_t)(r.end - r.p));
}

static void write_state(const char *dir) {
    char path[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/state", dir);
    snprintf(tmp, sizeof tmp, "%s/state.tmp", dir);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "messages %llu\nlive %d\nseen %d\nstored %llu\nremoved %llu\ncleared %llu\nerrors %d\nseq %llu\ntopic %s\n",
            (unsigned long long)n_msgs, n_live, n_seen, (unsigned long long)n_stored, (unsigned long long)n_removed,
            (unsigned long long)n_cleared, n_errors, (unsigned long long)last_seq, topic0);
    fclose(f);
    rename(tmp, path);
}

int main(int argc, char **argv) {
    const char *bind_ep = NULL, *connect_ep = NULL, *dir = NULL, *filter = "kv@";
    double timeout = 60;
    bool until_cleared = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bind") && i + 1 < argc) bind_ep = argv[++i];
        else if (!strcmp(argv[i], "--connect") && i + 1 < argc) connect_ep = argv[++i];
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atof(argv[++i]);
        else if (!strcmp(argv[i], "--until-cleared")) until_cleared = true;
        else {
            fprintf(stderr, "usage: kv_events_sub (--bind EP | --connect EP) --dir DIR [--timeout S] "
                            "[--filter PREFIX] [--until-cleared]\n");
            return 2;
        }
    }
    if (!dir || !!bind_ep == !!connect_ep) {
        fprintf(stderr, "kv_events_sub: need --dir and one of --bind / --connect\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/stored.jsonl", dir);
    if (!(stored_log = fopen(path, "w"))) {
        fprintf(stderr, "kv_events_sub: %s: %s\n", path, strerror(errno));
        return 2;
    }
    void *zctx = zmq_ctx_new();
    void *sock = zctx ? zmq_socket(zctx, ZMQ_SUB) : NULL;
    int linger = 0;
    if (!sock || zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(sock, ZMQ_SUBSCRIBE, filter, strlen(filter)) != 0 ||
        (bind_ep ? zmq_bind(sock, bind_ep) : zmq_connect(sock, connect_ep)) != 0) {
        fprintf(stderr, "kv_events_sub: %s: %s\n", bind_ep ? bind_ep : connect_ep, zmq_strerror(errno));
        return 2;
    }
    if (bind_ep) {
        char ep[512];
        size_t len = sizeof ep;
        zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &len);
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s/endpoint.tmp", dir);
        snprintf(path, sizeof path, "%s/endpoint", dir);
        FILE *f = fopen(tmp, "w");
        if (!f) return 2;
        fprintf(f, "%s\n", ep);
        fclose(f);
        rename(tmp, path);
    }
    write_state(dir);
    const double t_end = now_s() + timeout;
    int rc = 3;
    while (now_s() < t_end) {
        zmq_pollitem_t it = {.socket = sock, .events = ZMQ_POLLIN};
        if (zmq_poll(&it, 1, 100) <= 0 || !(it.revents & ZMQ_POLLIN)) continue;
        zmq_msg_t f[4];
        int n = 0;
        int more = 1;
        while (more) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, sock, 0) < 0) {
                zmq_msg_close(&m);
                break;
            }
            more = zmq_msg_more(&m);
            if (n < 4) f[n] = m;
            else zmq_msg_close(&m);
            n++;
        }
        check_message(f, n);
        for (int i = 0; i < n && i < 4; i++) zmq_msg_close(&f[i]);
        fflush(stored_log);
        write_state(dir);
        if (until_cleared && n_cleared > 0) {
            rc = 0;
            break;
        }
    }
    if (rc == 3) fprintf(stderr, "kv_events_sub: timed out after %.0f s\n", timeout);
    printf("kv_events_sub: %llu messages, %llu stored, %llu removed, %llu cleared, %d live, %d errors\n",
           (unsigned long long)n_msgs, (unsigned long long)n_stored, (unsigned long long)n_removed,
           (unsigned long long)n_cleared, n_live, n_errors);
    fclose(stored_log);
    zmq_close(sock);
    zmq_ctx_term(zctx);
    if (rc == 0 && n_errors) rc = 1;
    return rc;
}
