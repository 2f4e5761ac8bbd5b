/* stop.c — stop-string matching across token boundaries (see stop.h). */
#include "engine/stop.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int stop_init(stop_matcher *m, const char *const *stops, int n_stops, size_t max_chunk,
              wick_error *err) {
    memset(m, 0, sizeof *m);
    m->stops = stops;
    m->n_stops = n_stops;
    m->max_chunk = max_chunk;
    for (int i = 0; i < n_stops; i++) {
        size_t l = stops[i] ? strlen(stops[i]) : 0;
        if (l == 0) return wick_fail(err, "stop strings must not be empty");
        if (l > m->max_len) m->max_len = l;
    }
    m->held = malloc(m->max_len + 1);
    m->work = malloc(m->max_len + max_chunk + 1);
    if (!m->held || !m->work) {
        stop_free(m);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    return 0;
}

void stop_free(stop_matcher *m) {
    free(m->held);
    free(m->work);
    m->held = m->work = NULL;
}

/* Length of the longest suffix of s[0..n) that is a proper prefix of a stop string. */
static size_t partial_suffix(const stop_matcher *m, const char *s, size_t n) {
    size_t best = 0;
    for (int i = 0; i < m->n_stops; i++) {
        size_t l = strlen(m->stops[i]);
        for (size_t k = (l - 1 < n ? l - 1 : n); k > best; k--)
            if (memcmp(s + n - k, m->stops[i], k) == 0) {
                best = k;
                break;
            }
    }
    return best;
}

bool stop_feed(stop_matcher *m, const char *text, size_t len, const char **out, size_t *out_len) {
    if (m->n_stops == 0) {
        *out = text;
        *out_len = len;
        return false;
    }
    if (len > m->max_chunk) len = m->max_chunk;
    memcpy(m->work, m->held, m->n_held);
    memcpy(m->work + m->n_held, text, len);
    size_t n = m->n_held + len;
    *out = m->work;
    /* The earliest occurrence of any stop string wins. */
    size_t cut = n;
    for (int i = 0; i < m->n_stops; i++) {
        size_t l = strlen(m->stops[i]);
        for (size_t at = 0; at + l <= n && at < cut; at++)
            if (memcmp(m->work + at, m->stops[i], l) == 0) {
                cut = at;
                break;
            }
    }
    if (cut < n) {
        *out_len = cut;
        m->n_held = 0;
        return true;
    }
    m->n_held = partial_suffix(m, m->work, n);
    memcpy(m->held, m->work + n - m->n_held, m->n_held);
    *out_len = n - m->n_held;
    return false;
}

size_t stop_flush(stop_matcher *m, const char **out) {
    *out = m->held;
    size_t n = m->n_held;
    m->n_held = 0;
    return n;
}
