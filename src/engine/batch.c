/* batch.c — building one scheduler step's forward batch: the next token of
 * every decoding request (its drafts after it when it speculates) first,
 * then prefill chunks of the others in admission order, each up to its next
 * placed span, within the step's token budget; the span job's tokens ride
 * behind their request's (sched_spans.c). Only the last row of a request's
 * history (and each draft's) asks for logits. */
#include <stdlib.h>

#include "engine/sched_internal.h"

int sched_batch_init(sched_batch *b, int budget, int n_seq) {
    const size_t B = (size_t)budget, N = (size_t)n_seq;
    b->tok = malloc(B * sizeof *b->tok);
    b->pos = malloc(B * sizeof *b->pos);
    b->seq = malloc(B * sizeof *b->seq);
    b->rope = malloc(B * sizeof *b->rope);
    b->want = malloc(B * sizeof *b->want);
    b->order = malloc(N * sizeof *b->order);
    b->in = malloc(N * sizeof *b->in);
    b->counts = malloc(N * sizeof *b->counts);
    return b->tok && b->pos && b->seq && b->rope && b->want && b->order && b->in && b->counts ? 0 : -1;
}

void sched_batch_free(sched_batch *b) {
    free(b->tok);
    free(b->pos);
    free(b->seq);
    free(b->rope);
    free(b->want);
    free(b->order);
    free(b->in);
    free(b->counts);
}

/* The running requests in batch order: decoders first (one token each), then
 * the others in admission order. */
static int batch_order(wick_sched *s, sched_req **order) {
    int n_order = 0;
    for (int i = 0; i < s->n_running; i++)
        if (s->running[i]->n_tokens - s->running[i]->n_computed == 1) order[n_order++] = s->running[i];
    int n_dec = n_order;
    for (int i = 0; i < s->n_running; i++)
        if (s->running[i]->n_tokens - s->running[i]->n_computed > 1) order[n_order++] = s->running[i];
    /* Prefill in admission order. */
    for (int i = n_dec + 1; i < n_order; i++)
        for (int k = i; k > n_dec && order[k]->admit_seq < order[k - 1]->admit_seq; k--) {
            sched_req *t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    return n_order;
}

int sched_batch_build(wick_sched *s) {
    sched_batch *b = &s->batch;
    sched_req **order = b->order;
    const int n_order = batch_order(s, order);
    int n = 0;
    b->n_in = 0;
    b->job_n = 0;
    for (int i = 0; i < n_order && n < s->budget; i++) {
        sched_req *q = order[i];
        int take = q->n_tokens - q->n_computed + q->n_draft; /* a decoder's drafts follow its last token */
        if (take > s->budget - n) take = s->budget - n;
        if (q->plan) { /* up to the next placed span */
            const int placed = span_next_placed(q->plan, q->n_computed);
            if (placed - q->n_computed < take) take = placed - q->n_computed;
        }
        if (q->n_draft > take - 1) q->n_draft = take > 0 ? take - 1 : 0; /* (never, by spec_draft_all's count) */
        for (int k = 0; k < take; k++) {
            int p = q->n_computed + k;
            b->tok[n] = q->tokens[p];
            b->pos[n] = p;
            b->rope[n] = q->plan ? span_rope_pos(q->plan, p) : p;
            b->seq[n] = q->slot;
            b->want[n] = p >= q->n_tokens - 1;
            n++;
        }
        if (q == s->job_owner) { /* its span job's tokens: A ++ S in the span sequence */
            b->job_n = spans_job_rows(s, n);
            n += b->job_n;
        }
        b->in[b->n_in] = q;
        b->counts[b->n_in++] = take;
    }
    b->n = n;
    return n;
}
