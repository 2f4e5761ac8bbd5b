/* token_slices.c — cutting the vocabulary into slices and the sliced token
 * mask (token_slices.h). */
#include "grammar/token_slices.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MAX_SLICES 8

const char *const token_slices_json[3] = {
    "[^\"\\\\\\x00-\\x1f\\x7f]{1,10}",
    "[^\"\\\\\\x00-\\x1f\\x7f]{1,30}",
    "[^\"\\\\\\x00-\\x1f\\x7f]+",
};

struct token_slices {
    int n;                           /* pattern slices; slice n is the rest */
    char *pattern[MAX_SLICES];
    token_trie *trie[MAX_SLICES + 1];
    uint64_t *bits[MAX_SLICES + 1]; /* the slice's tokens */
    int32_t n_vocab;
};

/* token_bytes_fn over the tokens of one slice. */
typedef struct slice_filter {
    token_bytes_fn bytes;
    void *ctx;
    const uint64_t *bits;
} slice_filter;

static bool filtered_bytes(void *ctx, int32_t id, uint8_t *buf, size_t cap, size_t *len) {
    const slice_filter *f = ctx;
    return token_mask_has(f->bits, id) && f->bytes(f->ctx, id, buf, cap, len);
}

token_slices *token_slices_new(int32_t n_vocab, token_bytes_fn bytes, void *ctx, const char *const *patterns,
                               int n_patterns, wick_error *err) {
    if (n_patterns < 0 || n_patterns > MAX_SLICES) {
        wick_fail(err, "token slices: %d patterns (at most %d)", n_patterns, MAX_SLICES);
        return NULL;
    }
    const size_t words = token_mask_words(n_vocab);
    token_slices *ts = calloc(1, sizeof *ts);
    rx_store *s = rx_store_new();
    uint8_t *buf = malloc(4096);
    rx_id terms[MAX_SLICES];
    if (!ts || !s || !buf) goto oom;
    ts->n = n_patterns;
    ts->n_vocab = n_vocab;
    for (int i = 0; i < n_patterns; i++) {
        terms[i] = rx_parse(s, patterns[i], strlen(patterns[i]), err);
        if (terms[i] < 0) goto fail;
        ts->pattern[i] = strdup(patterns[i]);
        if (!ts->pattern[i]) goto oom;
    }
    for (int i = 0; i <= n_patterns; i++)
        if (!(ts->bits[i] = calloc(words, sizeof(uint64_t)))) goto oom;
    for (int32_t id = 0; id < n_vocab; id++) {
        size_t len = 0;
        if (!bytes(ctx, id, buf, 4096, &len) || len == 0 || len > 4096) continue;
        int k = 0;
        while (k < n_patterns && !rx_matches(s, terms[k], buf, len)) k++;
        ts->bits[k][id >> 6] |= 1ull << (id & 63);
    }
    if (!rx_store_ok(s)) goto oom;
    for (int i = 0; i <= n_patterns; i++) {
        slice_filter f = {.bytes = bytes, .ctx = ctx, .bits = ts->bits[i]};
        if (!(ts->trie[i] = token_trie_new(n_vocab, filtered_bytes, &f, err))) goto fail;
    }
    rx_store_free(s);
    free(buf);
    return ts;
oom:
    wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory cutting the vocabulary into slices");
fail:
    rx_store_free(s);
    free(buf);
    token_slices_free(ts);
    return NULL;
}

void token_slices_free(token_slices *ts) {
    if (!ts) return;
    for (int i = 0; i <= MAX_SLICES; i++) {
        if (i < MAX_SLICES) free(ts->pattern[i]);
        token_trie_free(ts->trie[i]);
        free(ts->bits[i]);
    }
    free(ts);
}

int token_slices_count(const token_slices *ts) { return ts->n; }

int token_slices_terms(const token_slices *ts, rx_store *s, rx_id *terms) {
    for (int i = 0; i < ts->n; i++) {
        terms[i] = rx_parse(s, ts->pattern[i], strlen(ts->pattern[i]), NULL);
        if (terms[i] < 0) return -1; /* the patterns parsed when the slices were made: only memory can fail */
    }
    return 0;
}

void token_slices_mask_regex(const token_slices *ts, rx_store *s, const rx_id *terms, rx_id r, uint64_t *mask) {
    const size_t words = token_mask_words(ts->n_vocab);
    memset(mask, 0, sizeof *mask * words);
    for (int i = 0; i <= ts->n; i++) {
        if (i < ts->n && rx_contains_prefixes(s, r, terms[i])) {
            const uint64_t *b = ts->bits[i];
            for (size_t w = 0; w < words; w++) mask[w] |= b[w];
        } else {
            token_trie_add_regex(ts->trie[i], s, r, mask);
        }
    }
}

const token_trie *token_slices_trie(const token_slices *ts, int i) { return ts->trie[i]; }
const uint64_t *token_slices_bits(const token_slices *ts, int i) { return ts->bits[i]; }
