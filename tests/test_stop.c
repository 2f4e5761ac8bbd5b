/* test_stop.c — stop strings across token boundaries, and UTF-8 streaming. */
#include "check.h"
#include "engine/stop.h"
#include "text/utf8_stream.h"

/* Feed pieces one by one; collect emitted text; report whether it stopped. */
static bool run(const char *const *stops, int n_stops, const char *const *pieces, int n_pieces,
                char *out, size_t cap) {
    stop_matcher m;
    wick_error err;
    out[0] = 0;
    if (stop_init(&m, stops, n_stops, 64, &err) < 0) return false;
    bool stopped = false;
    const char *t;
    size_t n;
    for (int i = 0; i < n_pieces && !stopped; i++) {
        stopped = stop_feed(&m, pieces[i], strlen(pieces[i]), &t, &n);
        strncat(out, t, n < cap - strlen(out) - 1 ? n : cap - strlen(out) - 1);
    }
    if (!stopped) {
        n = stop_flush(&m, &t);
        strncat(out, t, n);
    }
    stop_free(&m);
    return stopped;
}

static void stops(void) {
    char out[256];
    const char *s1[] = {"\nUser:"};
    const char *p1[] = {"Hello", " there", "\n", "Us", "er", ": more"};
    CHECK(run(s1, 1, p1, 6, out, sizeof out));
    CHECK_STR(out, "Hello there");
    /* A partial match that fails is released. */
    const char *p2[] = {"a\n", "Use", "ful", " end"};
    CHECK(!run(s1, 1, p2, 4, out, sizeof out));
    CHECK_STR(out, "a\nUseful end");
    /* The stop string that starts earliest wins (abcd at 1, before bc at 2). */
    const char *s3[] = {"abcd", "bc"};
    const char *p3[] = {"xa", "b", "cd"};
    CHECK(run(s3, 2, p3, 3, out, sizeof out));
    CHECK_STR(out, "x");
    /* Stop string inside one piece. */
    const char *s4[] = {"STOP"};
    const char *p4[] = {"go go STOP go"};
    CHECK(run(s4, 1, p4, 1, out, sizeof out));
    CHECK_STR(out, "go go ");
    /* Held prefix at the very end is flushed. */
    const char *p5[] = {"ends with ST"};
    CHECK(!run(s4, 1, p5, 1, out, sizeof out));
    CHECK_STR(out, "ends with ST");
    /* No stop strings: pass-through. */
    CHECK(!run(NULL, 0, p1, 6, out, sizeof out));
    CHECK_STR(out, "Hello there\nUser: more");
    /* Empty stop strings are rejected. */
    stop_matcher m;
    wick_error err;
    const char *bad[] = {""};
    CHECK(stop_init(&m, bad, 1, 16, &err) < 0);
}

static void utf8(void) {
    utf8_stream u;
    utf8_stream_init(&u);
    /* "é" split across two pushes, then an emoji in 4 single bytes. */
    CHECK_INT(utf8_stream_push(&u, "a\xC3", 2), 1);
    CHECK_INT(utf8_stream_push(&u, "\xA9", 1), 2);
    CHECK(memcmp(u.out, "\xC3\xA9", 2) == 0);
    const char *emoji = "\xF0\x9F\x98\x80";
    for (int i = 0; i < 3; i++) CHECK_INT(utf8_stream_push(&u, emoji + i, 1), 0);
    CHECK_INT(utf8_stream_push(&u, emoji + 3, 1), 4);
    /* Invalid bytes become U+FFFD; a dangling lead byte at the end too. */
    CHECK_INT(utf8_stream_push(&u, "\xFFx", 2), 4);
    CHECK(memcmp(u.out, "\xEF\xBF\xBDx", 4) == 0);
    CHECK_INT(utf8_stream_push(&u, "\xE4\xB8", 2), 0);
    CHECK_INT(utf8_stream_finish(&u), 3);
    /* Surrogates and overlongs are invalid. */
    CHECK_INT(utf8_seq_len((const unsigned char *)"\xED\xA0\x80", 3), 0);
    CHECK_INT(utf8_seq_len((const unsigned char *)"\xC0\x80", 2), 0);
    CHECK_INT(utf8_seq_len((const unsigned char *)"\xF4\x90\x80\x80", 4), 0);
}

int main(void) {
    RUN(stops);
    RUN(utf8);
    return check_summary("test_stop");
}
