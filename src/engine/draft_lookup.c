/* draft_lookup.c — prompt lookup decoding (llama.cpp's lookup / "prompt
 * lookup decoding"): no model; the drafts are what followed the most recent
 * earlier occurrence of the sequence's last n tokens, for the longest n (up
 * to the request's `lookup`) that occurs. Retelling, quoting, code edits
 * and summaries repeat their prompt's names and phrases, so runs of drafts
 * are often right. The drafts are certain (point masses): speculative
 * sampling accepts a draft x with probability p(x). */
#include <stdlib.h>

#include "core/error.h"
#include "engine/draft.h"

int draft_lookup_find(const int32_t *tokens, int n, int lookup, int k, int32_t *out) {
    if (k <= 0 || n < 2) return 0;
    for (int g = lookup < n - 1 ? lookup : n - 1; g >= 1; g--) {
        const int32_t *suf = tokens + n - g;
        /* an earlier start j < n - g, scanning from the most recent */
        for (int j = n - g - 1; j >= 0; j--) {
            int e = 0;
            while (e < g && tokens[j + e] == suf[e]) e++;
            if (e < g) continue;
            int m = 0;
            for (int at = j + g; at < n && m < k; at++) out[m++] = tokens[at];
            if (m > 0) return m;
        }
    }
    return 0;
}

static int lookup_propose(drafter *d, const draft_call *c, wick_error *err) {
    (void)d, (void)err;
    return draft_lookup_find(c->tokens, c->n_tokens, c->lookup > 0 ? c->lookup : 3, c->k, c->out);
}

static void lookup_free(drafter *d) { free(d); }

static const drafter_ops LOOKUP_OPS = {lookup_propose, NULL, lookup_free};

drafter *draft_lookup_new(wick_error *err) {
    drafter *d = calloc(1, sizeof *d);
    if (!d) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    d->ops = &LOOKUP_OPS;
    d->point_mass = true;
    return d;
}
