/* grammar.c — structured output's public face (wick.h, "structured output"):
 * compiling a grammar spec with the front ends of src/grammar/ against a
 * model's vocabulary, and the per-output matcher that turns the parser's
 * byte-level state into token masks, end-of-generation included. */
#include <cJSON.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "engine/grammar.h"
#include "grammar/front_simple.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "model/grammar_vocab.h"
#include "model/model.h"

#define MAX_SLICE_TERMS 8
/* The most DFA rows (1 KiB each) a grammar's warm store keeps. */
#define WARM_MAX_ROWS 16384

/* What the matchers of a grammar learn for the next ones: each starts from
 * a copy of `store` (the grammar's terms with the DFA rows filled so far)
 * and reads `plans` (the mask plans made over that store's lineage); when
 * it ends, it hands its own copy and plans back if nobody did in between
 * (version unchanged). So a grammar used again starts warm; concurrent
 * matchers never share a store, and share plans only read. */
typedef struct grammar_warm {
    pthread_mutex_t mu;
    rx_store *store; /* NULL: the grammar's own (cfg's) store */
    earley_plans *plans; /* NULL: none yet */
    uint64_t version;
} grammar_warm;

struct wick_grammar {
    const wick_model *m;
    const grammar_vocab *v;
    cfg *g;
    rx_id terms[MAX_SLICE_TERMS]; /* the vocabulary's slices as terms of g's store */
    double compile_ms;
    grammar_warm *warm;
};

struct wick_grammar_matcher {
    const wick_grammar *gr;
    grammar_matcher *mt;
    uint64_t base_version; /* the warm store's version it copied */
    int eog_taken;         /* an end-of-generation token was taken (1) or not (0) */
};

static int compile_front(cfg *g, const wick_grammar_spec *sp, size_t len, wick_error *err) {
    switch (sp->kind) {
    case WICK_GRAMMAR_JSON_SCHEMA: {
        cJSON *schema = cJSON_ParseWithLength(sp->text, len);
        if (!schema) return wick_fail(err, "the JSON schema is not valid JSON");
        const json_schema_opts o = {.strict = sp->strict, .declared_only = sp->declared_only,
                                    .flexible_ws = sp->flexible_ws,
                                    .single_space = sp->single_space, .prefix = sp->prefix,
                                    .suffix = sp->suffix, .separator = sp->separator,
                                    .min_values = sp->min_values, .max_values = sp->max_values};
        const int rc = json_schema_compile(g, schema, &o, err);
        cJSON_Delete(schema);
        return rc;
    }
    case WICK_GRAMMAR_JSON: return cfg_json_object(g, sp->flexible_ws, err);
    case WICK_GRAMMAR_REGEX: return cfg_from_regex(g, sp->text, len, err);
    case WICK_GRAMMAR_GBNF: return gbnf_compile(g, sp->text, len, err);
    case WICK_GRAMMAR_CHOICE:
        if (sp->n_choices <= 0 || !sp->choices) return wick_fail(err, "a choice grammar needs at least one choice");
        for (int i = 0; i < sp->n_choices; i++)
            if (!sp->choices[i]) return wick_fail(err, "choice %d is missing", i);
        return cfg_from_choices(g, sp->choices, sp->n_choices, err);
    }
    return wick_fail(err, "unknown grammar kind %d", (int)sp->kind);
}

wick_grammar *wick_grammar_compile(const wick_model *m, const wick_grammar_spec *sp, wick_error *err) {
    if (!m || !sp) {
        wick_fail(err, "no model or grammar given");
        return NULL;
    }
    const bool needs_text = sp->kind != WICK_GRAMMAR_JSON && sp->kind != WICK_GRAMMAR_CHOICE;
    if (needs_text && !sp->text) {
        wick_fail(err, "the grammar has no text");
        return NULL;
    }
    const grammar_vocab *v = model_grammar_vocab(m, err);
    if (!v) return NULL;
    const double t0 = wick_now_ms();
    wick_grammar *gr = calloc(1, sizeof *gr);
    if (!gr || !(gr->g = cfg_new())) {
        free(gr);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    gr->m = m;
    gr->v = v;
    if (!(gr->warm = calloc(1, sizeof *gr->warm)) || pthread_mutex_init(&gr->warm->mu, NULL) != 0) {
        free(gr->warm);
        gr->warm = NULL;
        wick_grammar_free(gr);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    const size_t len = sp->text && !sp->len ? strlen(sp->text) : sp->len;
    if (compile_front(gr->g, sp, len, err) < 0) {
        wick_grammar_free(gr);
        return NULL;
    }
    if (token_slices_count(v->slices) > MAX_SLICE_TERMS || token_slices_terms(v->slices, gr->g->rx, gr->terms) < 0) {
        wick_grammar_free(gr);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    /* the first mask fills the DFA rows every output starts with: once, here */
    earley *e = earley_new(gr->g, NULL, err);
    uint64_t *bits = e ? malloc(token_mask_words(token_trie_vocab(v->trie)) * sizeof *bits) : NULL;
    if (bits) earley_mask_sliced(e, v->slices, gr->terms, bits);
    free(bits);
    earley_free(e);
    if (!bits || !rx_store_ok(gr->g->rx)) {
        wick_grammar_free(gr);
        if (!e) return NULL;
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    gr->compile_ms = wick_now_ms() - t0;
    return gr;
}

void wick_grammar_free(wick_grammar *gr) {
    if (!gr) return;
    if (gr->warm) {
        rx_store_free(gr->warm->store);
        earley_plans_release(gr->warm->plans);
        pthread_mutex_destroy(&gr->warm->mu);
        free(gr->warm);
    }
    cfg_free(gr->g);
    free(gr);
}

double wick_grammar_compile_ms(const wick_grammar *gr) { return gr->compile_ms; }

wick_grammar_matcher *wick_grammar_matcher_new(const wick_grammar *gr, wick_error *err) {
    wick_grammar_matcher *m = calloc(1, sizeof *m);
    if (!m) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    m->gr = gr;
    grammar_warm *w = gr->warm;
    pthread_mutex_lock(&w->mu);
    m->base_version = w->version;
    m->mt = grammar_matcher_new(gr->g, w->store, w->plans, gr->v->trie, gr->v->slices, gr->terms, err);
    pthread_mutex_unlock(&w->mu);
    if (!m->mt) {
        free(m);
        return NULL;
    }
    return m;
}

void wick_grammar_matcher_free(wick_grammar_matcher *m) {
    if (!m) return;
    earley_plans *p;
    rx_store *s = grammar_matcher_free_keep_store(m->mt, &p);
    grammar_warm *w = m->gr->warm;
    pthread_mutex_lock(&w->mu);
    const size_t have = rx_store_rows(w->store ? w->store : m->gr->g->rx);
    if (s && w->version == m->base_version && (rx_store_rows(s) > have || p) && rx_store_rows(s) <= WARM_MAX_ROWS) {
        rx_store_free(w->store);
        earley_plans_release(w->plans);
        w->store = s, w->plans = p;
        w->version++;
        s = NULL, p = NULL;
    }
    pthread_mutex_unlock(&w->mu);
    rx_store_free(s);
    earley_plans_release(p);
    free(m);
}

bool wick_grammar_matcher_accept(wick_grammar_matcher *m, int32_t id) {
    if (m->eog_taken) return false;
    if (wick_token_is_eog(m->gr->m, id)) {
        if (!grammar_matcher_complete(m->mt)) return false;
        m->eog_taken = 1;
        return true;
    }
    return grammar_matcher_accept(m->mt, id);
}

void wick_grammar_matcher_rollback(wick_grammar_matcher *m, int n) {
    if (n <= 0) return;
    if (m->eog_taken) m->eog_taken = 0, n--;
    grammar_matcher_rollback(m->mt, (size_t)n);
}

bool wick_grammar_matcher_complete(const wick_grammar_matcher *m) {
    return !m->eog_taken && grammar_matcher_complete(m->mt);
}

int wick_grammar_matcher_mask(wick_grammar_matcher *m, uint64_t *bits) {
    const wick_model *model = m->gr->m;
    const size_t words = token_mask_words(model->hp.n_vocab);
    memset(bits, 0, words * sizeof *bits);
    if (m->eog_taken) return 0;
    grammar_matcher_mask(m->mt, bits); /* the tokenizer's ids (the model may have more rows, never allowed) */
    const bool complete = grammar_matcher_complete(m->mt);
    for (int i = 0; i < model->n_eog; i++) { /* allowed where complete, never elsewhere (even if not special) */
        const int32_t id = model->eog[i];
        if (id < 0 || id >= model->hp.n_vocab) continue;
        if (complete) bits[id >> 6] |= 1ull << (id & 63);
        else bits[id >> 6] &= ~(1ull << (id & 63));
    }
    int n = 0; /* counted up to 2: all callers need (none, one, several) */
    for (size_t w = 0; w < words && n < 2; w++) n += token_mask_bits(bits[w]);
    return n < 2 ? n : 2;
}

const wick_model *grammar_model(const wick_grammar *gr) { return gr->m; }
