/* grammar_mask.c — the token mask of a regular expression over a real
 * vocabulary: trie build time and size, and the mask time (median and max of
 * repeats) for a few patterns, one thread.
 *   build/bench/grammar_mask TOKENIZER [repeats] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/regex.h"
#include "grammar/token_slices.h"
#include "grammar/token_trie.h"
#include "text/tokenizer.h"
#include "wick.h"

#include "bench_util.h"

static bool piece(void *ctx, int32_t id, uint8_t *buf, size_t cap, size_t *len) {
    const wick_tokenizer *t = ctx;
    if (tok_is_special(t, id)) return false;
    const int n = wick_tokenizer_piece(t, id, (char *)buf, cap);
    if (n <= 0 || (size_t)n > cap) return false;
    *len = (size_t)n;
    return true;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s TOKENIZER [repeats]\n", argv[0]);
        return 2;
    }
    const int reps = arg_int(argc, argv, 2, 50);
    wick_error err = {0};
    wick_tokenizer *tk = wick_tokenizer_load(argv[1], &err);
    if (!tk) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const int nv = wick_tokenizer_n_vocab(tk);
    double t0 = now_s();
    token_trie *trie = token_trie_new(nv, piece, tk, &err);
    if (!trie) return 1;
    printf("vocab %d, trie %zu nodes, built in %.1f ms\n", nv, token_trie_nodes(trie), (now_s() - t0) * 1e3);
    static const char *pats[] = {"-?(0|[1-9][0-9]*)(\\.[0-9]+)?", "\"[^\"\\\\\\x00-\\x1f]*\"", "(true|false|null)",
                                 "[^\"\\\\\\x00-\\x1f]*\"", "[\\s\\S]*"};
    t0 = now_s();
    token_slices *ts = token_slices_new(nv, piece, tk, token_slices_json, 3, &err);
    if (!ts) return 1;
    printf("JSON slices built in %.1f ms\n", (now_s() - t0) * 1e3);
    uint64_t *mask = malloc(sizeof *mask * token_mask_words(nv));
    double *tm = malloc(sizeof *tm * (size_t)reps), *tms = malloc(sizeof *tms * (size_t)reps);
    for (size_t i = 0; i < sizeof pats / sizeof *pats; i++) {
        rx_store *s = rx_store_new();
        const rx_id r = rx_parse(s, pats[i], strlen(pats[i]), &err);
        int allowed = 0;
        for (int k = 0; k < reps; k++) {
            t0 = now_s();
            token_trie_mask_regex(trie, s, r, mask);
            tm[k] = (now_s() - t0) * 1e6;
        }
        for (int id = 0; id < nv; id++) allowed += token_mask_has(mask, id);
        double mx = 0;
        for (int k = 1; k < reps; k++) mx = tm[k] > mx ? tm[k] : mx;
        const double first = tm[0];
        printf("%-36s allowed %6d  first %8.0f us  median %8.0f us  max %8.0f us  terms %zu\n", pats[i], allowed, first,
               median(tm + 1, reps - 1), mx, rx_store_size(s));
        rx_id terms[3];
        token_slices_terms(ts, s, terms);
        for (int k = 0; k < reps; k++) {
            t0 = now_s();
            token_slices_mask_regex(ts, s, terms, r, mask);
            tms[k] = (now_s() - t0) * 1e6;
        }
        int allowed2 = 0;
        for (int id = 0; id < nv; id++) allowed2 += token_mask_has(mask, id);
        printf("%-36s allowed %6d  sliced: first %8.0f us  median %8.0f us\n", "", allowed2, tms[0], median(tms + 1, reps - 1));
        rx_store_free(s);
    }
    free(tm);
    free(tms);
    free(mask);
    token_slices_free(ts);
    token_trie_free(trie);
    wick_tokenizer_free(tk);
    return 0;
}
