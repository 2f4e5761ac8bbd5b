/* test_buf.c — core/buf.c, the growable byte buffer and the array growth
 * step: appends and the NUL after them, doubling growth, printf appends short
 * and long, the byte cap (an append past it is refused whole and sticks),
 * size overflow refused without touching memory, reset, take (and take of an
 * empty or failed buffer), and grow_array's doubling, no-op and overflow. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/buf.h"

static void test_append(void) {
    wbuf b = {0};
    CHECK(wbuf_puts(&b, "hello"));
    CHECK(wbuf_put(&b, ", ", 2));
    CHECK(wbuf_printf(&b, "%s %d", "world", 42));
    CHECK_INT(b.len, 15);
    CHECK_STR(b.data, "hello, world 42");
    CHECK(wbuf_put(&b, "\0x", 2)); /* binary bytes are kept, the NUL is after them */
    CHECK_INT(b.len, 17);
    CHECK(b.data[15] == 0 && b.data[16] == 'x' && b.data[17] == 0);
    CHECK(!b.oom);

    wbuf_reset(&b);
    CHECK_INT(b.len, 0);
    CHECK_STR(b.data, "");
    CHECK(b.cap > 0); /* memory kept */
    wbuf_free(&b);
    CHECK(b.data == NULL && b.len == 0 && b.cap == 0);
}

static void test_growth(void) {
    wbuf b = {0};
    size_t caps = 0, last = 0;
    int appended = 0, doubled = 1;
    for (int i = 0; i < 100000; i++) {
        appended += wbuf_put(&b, "abc", 3);
        if (b.cap != last) {
            doubled &= last == 0 || b.cap == 2 * last;
            last = b.cap;
            caps++;
        }
    }
    CHECK_INT(appended, 100000);
    CHECK(doubled);
    CHECK_INT(b.len, 300000);
    CHECK(b.cap > b.len);
    CHECK(caps < 20); /* doubling: a few reallocations, not one per append */
    int ok = 1;
    for (size_t i = 0; i < b.len; i++) ok &= b.data[i] == "abc"[i % 3];
    CHECK(ok && b.data[b.len] == 0);

    CHECK(wbuf_reserve(&b, 1000000));
    CHECK(b.cap >= b.len + 1000001);
    char *before = b.data;
    CHECK(wbuf_put(&b, before, 1000)); /* after reserve: no move */
    CHECK(b.data == before);
    wbuf_free(&b);
}

static void test_printf_long(void) {
    wbuf b = {0};
    char big[1000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = 0;
    CHECK(wbuf_puts(&b, "<"));
    CHECK(wbuf_printf(&b, "%s|%s", big, big)); /* past the 256-byte first pass */
    CHECK_INT(b.len, 1 + 2 * 999 + 1);
    CHECK(b.data[0] == '<' && b.data[1000] == '|' && b.data[1999] == 'q' && b.data[2000] == 0);
    CHECK(wbuf_printf(&b, "%s", ""));
    CHECK_INT(b.len, 2000);
    wbuf_free(&b);
}

static void test_cap(void) {
    wbuf b = {.max = 10};
    CHECK(wbuf_puts(&b, "0123456"));
    CHECK(b.cap <= 11); /* never more than max + the NUL */
    CHECK(!wbuf_puts(&b, "7890")); /* 11 bytes: refused whole */
    CHECK(b.oom);
    CHECK_INT(b.len, 7);
    CHECK_STR(b.data, "0123456");
    CHECK(!wbuf_puts(&b, "7")); /* sticky until cleared */
    b.oom = false;
    CHECK(wbuf_puts(&b, "789"));
    CHECK_INT(b.len, 10);
    CHECK(!wbuf_put(&b, "", 1));
    b.oom = false;
    CHECK(wbuf_put(&b, "", 0)); /* nothing more: still fits */
    CHECK(!wbuf_printf(&b, "%d", 1));
    CHECK(wbuf_take(&b, NULL) == NULL); /* failed: nothing handed over, memory freed */
    CHECK(b.data == NULL && b.max == 0 && !b.oom);
}

static void test_overflow(void) {
    wbuf b = {0};
    CHECK(wbuf_puts(&b, "x"));
    CHECK(!wbuf_reserve(&b, SIZE_MAX));
    CHECK(b.oom);
    CHECK_STR(b.data, "x");
    wbuf_free(&b);
    CHECK(wbuf_puts(&b, "x"));
    CHECK(!wbuf_reserve(&b, SIZE_MAX - 1)); /* len + extra + the NUL overflows */
    CHECK(b.oom);
    wbuf_free(&b);
    CHECK(!b.oom);
}

static void test_take(void) {
    wbuf b = {0};
    size_t n = 99;
    char *s = wbuf_take(&b, &n); /* empty: "" rather than NULL */
    CHECK(s && s[0] == 0 && n == 0);
    free(s);
    wbuf_printf(&b, "%05d", 7);
    s = wbuf_take(&b, &n);
    CHECK_STR(s, "00007");
    CHECK_INT(n, 5);
    CHECK(b.data == NULL && b.len == 0 && b.cap == 0);
    free(s);
    b.oom = true;
    CHECK(wbuf_take(&b, &n) == NULL && n == 0);
}

static void test_grow_array(void) {
    int *v = NULL;
    size_t cap = 0;
    CHECK(GROW_ARRAY(v, 1, &cap));
    CHECK(v != NULL && cap >= 1);
    size_t first = cap;
    int grown = 0;
    for (int i = 0; i < 1000; i++) {
        if (!GROW_ARRAY(v, (size_t)i + 1, &cap)) break;
        grown++;
        v[i] = i;
    }
    CHECK_INT(grown, 1000);
    CHECK(cap >= 1000 && cap < 2000 + first);
    int *keep = v;
    size_t keep_cap = cap;
    CHECK(GROW_ARRAY(v, 10, &cap)); /* fits already: nothing moves */
    CHECK(v == keep && cap == keep_cap);
    CHECK(!GROW_ARRAY(v, SIZE_MAX / sizeof *v + 1, &cap)); /* bytes overflow: refused */
    CHECK(!grow_array(&v, 3 * sizeof *v, SIZE_MAX / 4, &cap));
    CHECK(v == keep && cap == keep_cap); /* and left as they were */
    int sum = 0;
    for (int i = 0; i < 1000; i++) sum += v[i] == i;
    CHECK_INT(sum, 1000);
    CHECK(GROW_ARRAY(v, cap + 1, &cap)); /* one past: at least doubles */
    CHECK(cap >= 2 * keep_cap);
    free(v);

    size_t *pairs = NULL, pcap = 0; /* stride arrays: elem = a pair */
    CHECK(grow_array(&pairs, 2 * sizeof *pairs, 5, &pcap));
    CHECK(pcap >= 5);
    pairs[2 * pcap - 1] = 1; /* the whole capacity in pairs is there */
    free(pairs);
}

int main(void) {
    RUN(test_append);
    RUN(test_growth);
    RUN(test_printf_long);
    RUN(test_cap);
    RUN(test_overflow);
    RUN(test_take);
    RUN(test_grow_array);
    return check_summary("test_buf");
}
