/* test_grammar_sched.c — structured output through the scheduler, on the
 * real stories260K (the repo's demo model): every output under a regular
 * expression, at temperature 1 over many seeds, matches it whole as PCRE2
 * (an independent engine) says; choice and JSON Schema outputs end exactly
 * where the grammar is complete; grammar requests mixed in one batch with
 * unconstrained ones give the same tokens as each run alone (greedy and
 * seeded); speculative decoding (prompt lookup) under a grammar gives the
 * greedy output of plain decoding; the matcher API (accept, refuse,
 * rollback, masks); errors (bad grammars, another model's grammar); a
 * lazily started grammar (triggered by a token). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <cJSON.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wick.h"

#define MAX_OUT 200 /* tokens kept per request (sched_rec.h) */
#include "sched_rec.h"

static const char *model_path(void) {
    const char *p = shared_path("models/stories260K/stories260K-f32.gguf");
    return p ? p : "models/stories260K/stories260K-f32.gguf";
}

static wick_grammar *compile(wick_model *m, wick_grammar_kind kind, const char *text) {
    wick_error err;
    wick_grammar_spec sp = {.kind = kind, .text = text, .strict = true};
    wick_grammar *g = wick_grammar_compile(m, &sp, &err);
    CHECK_MSG(g != NULL, "compile %s: %s", text ? text : "(json)", err.msg);
    return g;
}

typedef struct job_spec {
    const wick_grammar *g;
    float temperature;
    uint64_t seed;
    int n_predict;
    const char *prompt;
} job_spec;

static void submit(wick_sched *s, wick_model *m, const job_spec *j, out_rec *o, wick_spec_method spec) {
    int32_t ids[64];
    wick_error err;
    const int n = wick_tokenize(m, j->prompt, strlen(j->prompt), true, ids, 64, &err);
    CHECK(n > 0 && n <= 64);
    memset(o, 0, sizeof *o);
    wick_request r = {.prompt = ids, .n_prompt = n, .n_predict = j->n_predict, .grammar = j->g,
                      .on_token = on_token, .on_done = on_done, .user = o, .logprobs = -1};
    r.sampling = wick_sampling_default();
    r.sampling.temperature = j->temperature;
    r.sampling.seed = j->seed;
    r.spec.method = spec;
    CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
}

static void run_all(wick_sched *s) {
    wick_error err;
    int left, guard = 0;
    while ((left = wick_sched_step(s, &err)) > 0 && guard++ < 100000) {
    }
    CHECK_MSG(left == 0, "step: %s", left < 0 ? err.msg : "did not finish");
}

static wick_sched *new_sched(wick_model *m, int n_seq, wick_context **c, bool lookup) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 256, .n_seq = n_seq, .n_threads = 1, .prefill_chunk = 16};
    *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(*c != NULL, "%s", err.msg);
    wick_sched *s = *c ? wick_sched_new(*c, NULL, &err) : NULL;
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (s && lookup) {
        wick_spec_params sp = {.lookup = 3, .draft_max = 4};
        CHECK_MSG(wick_sched_set_spec(s, &sp, &err) == 0, "%s", err.msg);
    }
    return s;
}

/* Does text match pattern whole (PCRE2, anchored at both ends)? */
static bool pcre_whole(const char *pattern, const char *text) {
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED,
                                   &ec, &eo, NULL);
    if (!re) return false;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    const int rc = pcre2_match(re, (PCRE2_SPTR)text, strlen(text), 0, 0, md, NULL);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return rc >= 0;
}

/* Sampled outputs under regular expressions match them whole, per PCRE2. */
static void regex_outputs_match(wick_model *m) {
    static const char *const patterns[] = {
        "[0-9]{3}-[a-z]{2,5}",
        "(yes|no|maybe)( because [a-z ]{1,20})?\\.",
        "[A-Z][a-z]+, [A-Z][a-z]+",
        "\\{\"n\": ?(0|[1-9][0-9]?)\\}",
    };
    enum { NP = sizeof patterns / sizeof patterns[0], SEEDS = 6 };
    wick_context *c;
    wick_sched *s = new_sched(m, 8, &c, false);
    if (!s) return;
    wick_grammar *g[NP];
    for (int i = 0; i < NP; i++) g[i] = compile(m, WICK_GRAMMAR_REGEX, patterns[i]);
    static out_rec o[NP][SEEDS];
    for (int i = 0; i < NP; i++)
        for (int k = 0; k < SEEDS; k++) {
            job_spec j = {.g = g[i], .temperature = 1.0f, .seed = 100 + (uint64_t)k, .n_predict = 60, .prompt = "Once upon a time"};
            submit(s, m, &j, &o[i][k], WICK_SPEC_OFF);
        }
    run_all(s);
    int complete = 0;
    for (int i = 0; i < NP; i++)
        for (int k = 0; k < SEEDS; k++) {
            CHECK_MSG(o[i][k].done && o[i][k].res.finish != WICK_FINISH_ERROR, "regex %d seed %d: %s", i, k, o[i][k].error);
            if (o[i][k].res.finish != WICK_FINISH_STOP) continue; /* cut by n_predict */
            complete++;
            CHECK_MSG(pcre_whole(patterns[i], o[i][k].text), "/%s/ vs \"%s\"", patterns[i], o[i][k].text);
        }
    CHECK_MSG(complete >= NP * SEEDS / 2, "only %d of %d outputs complete", complete, NP * SEEDS);
    for (int i = 0; i < NP; i++) wick_grammar_free(g[i]);
    wick_sched_free(s);
    wick_context_free(c);
}

/* A choice ends at a choice; a strict JSON Schema's output parses and has
 * its fields in range. */
static void choice_and_schema(wick_model *m) {
    wick_context *c;
    wick_sched *s = new_sched(m, 4, &c, false);
    if (!s) return;
    static const char *const choices[] = {"red", "green", "blue and white"};
    wick_error err;
    wick_grammar_spec cs = {.kind = WICK_GRAMMAR_CHOICE, .choices = choices, .n_choices = 3};
    wick_grammar *gc = wick_grammar_compile(m, &cs, &err);
    CHECK_MSG(gc != NULL, "%s", err.msg);
    wick_grammar *gs = compile(m, WICK_GRAMMAR_JSON_SCHEMA,
                               "{\"type\":\"object\",\"properties\":{\"age\":{\"type\":\"integer\",\"minimum\":1,"
                               "\"maximum\":99},\"ok\":{\"type\":\"boolean\"},\"pet\":{\"enum\":[\"cat\",\"dog\"]},"
                               "\"name\":{\"type\":\"string\",\"maxLength\":8}},\"required\":[\"age\",\"ok\",\"pet\",\"name\"]}");
    enum { N = 8 };
    static out_rec oc[N], os[N];
    for (int k = 0; k < N; k++) {
        job_spec a = {.g = gc, .temperature = k ? 1.0f : 0.0f, .seed = (uint64_t)k, .n_predict = 20, .prompt = "The color was"};
        job_spec b = {.g = gs, .temperature = k ? 1.0f : 0.0f, .seed = (uint64_t)k, .n_predict = 80, .prompt = "Lily said"};
        submit(s, m, &a, &oc[k], WICK_SPEC_OFF);
        submit(s, m, &b, &os[k], WICK_SPEC_OFF);
    }
    run_all(s);
    for (int k = 0; k < N; k++) {
        CHECK_INT(oc[k].res.finish, WICK_FINISH_STOP);
        CHECK_MSG(!strcmp(oc[k].text, choices[0]) || !strcmp(oc[k].text, choices[1]) || !strcmp(oc[k].text, choices[2]),
                  "choice output \"%s\"", oc[k].text);
        CHECK_MSG(os[k].res.finish == WICK_FINISH_STOP, "schema output %d cut: \"%s\"", k, os[k].text);
        cJSON *j = cJSON_Parse(os[k].text);
        CHECK_MSG(cJSON_IsObject(j), "not JSON: \"%s\"", os[k].text);
        const cJSON *age = cJSON_GetObjectItem(j, "age"), *ok = cJSON_GetObjectItem(j, "ok"), *pet = cJSON_GetObjectItem(j, "pet"),
                    *name = cJSON_GetObjectItem(j, "name");
        CHECK_MSG(cJSON_IsNumber(age) && age->valuedouble >= 1 && age->valuedouble <= 99, "age in \"%s\"", os[k].text);
        CHECK_MSG(cJSON_IsBool(ok), "ok in \"%s\"", os[k].text);
        CHECK_MSG(cJSON_IsString(pet) && (!strcmp(pet->valuestring, "cat") || !strcmp(pet->valuestring, "dog")), "pet in \"%s\"", os[k].text);
        CHECK_MSG(cJSON_IsString(name) && strlen(name->valuestring) <= 8 * 4, "name in \"%s\"", os[k].text);
        CHECK_INT(cJSON_GetArraySize(j), 4);
        cJSON_Delete(j);
    }
    wick_grammar_free(gc);
    wick_grammar_free(gs);
    wick_sched_free(s);
    wick_context_free(c);
}

/* Grammar requests mixed with plain ones, all at once, equal each alone. */
static void batch_invariance(wick_model *m) {
    wick_grammar *gr = compile(m, WICK_GRAMMAR_REGEX, "[a-z ]{5,40}\\.");
    wick_grammar *gj = compile(m, WICK_GRAMMAR_JSON, NULL);
    wick_grammar *gs = compile(m, WICK_GRAMMAR_JSON_SCHEMA,
                               "{\"type\":\"object\",\"properties\":{\"xs\":{\"type\":\"array\",\"items\":{\"type\":\"integer\","
                               "\"minimum\":0,\"maximum\":9},\"maxItems\":5}},\"required\":[\"xs\"]}");
    enum { N = 8 };
    const job_spec js[N] = {
        {gr, 0.0f, 1, 40, "Once upon a time"}, {NULL, 0.0f, 2, 30, "Once upon a time"},
        {gj, 1.0f, 3, 50, "The dog"},          {gs, 0.0f, 4, 40, "Tom had"},
        {gs, 1.0f, 5, 40, "Tom had"},          {NULL, 1.0f, 6, 30, "Lily"},
        {gr, 1.0f, 7, 40, "A bird"},           {gj, 0.0f, 8, 50, "The sun"},
    };
    static out_rec solo[N], all[N];
    for (int i = 0; i < N; i++) {
        wick_context *c;
        wick_sched *s = new_sched(m, 1, &c, false);
        if (!s) return;
        submit(s, m, &js[i], &solo[i], WICK_SPEC_OFF);
        run_all(s);
        wick_sched_free(s);
        wick_context_free(c);
    }
    wick_context *c;
    wick_sched *s = new_sched(m, N, &c, false);
    if (!s) return;
    for (int i = 0; i < N; i++) submit(s, m, &js[i], &all[i], WICK_SPEC_OFF);
    run_all(s);
    for (int i = 0; i < N; i++) {
        CHECK_MSG(all[i].n == solo[i].n && !memcmp(all[i].ids, solo[i].ids, sizeof(int32_t) * (size_t)solo[i].n),
                  "request %d: batched \"%s\" vs alone \"%s\"", i, all[i].text, solo[i].text);
        CHECK_INT(all[i].res.finish, solo[i].res.finish);
    }
    /* speculative decoding (prompt lookup) under a grammar: the same greedy tokens */
    wick_sched_free(s);
    wick_context_free(c);
    s = new_sched(m, N, &c, true);
    if (!s) return;
    static out_rec spec[N];
    for (int i = 0; i < N; i++) submit(s, m, &js[i], &spec[i], js[i].temperature > 0 ? WICK_SPEC_OFF : WICK_SPEC_LOOKUP);
    run_all(s);
    for (int i = 0; i < N; i++)
        CHECK_MSG(spec[i].n == solo[i].n && !memcmp(spec[i].ids, solo[i].ids, sizeof(int32_t) * (size_t)solo[i].n),
                  "request %d: speculative \"%s\" vs plain \"%s\"", i, spec[i].text, solo[i].text);
    wick_sched_free(s);
    wick_context_free(c);
    wick_grammar_free(gr);
    wick_grammar_free(gj);
    wick_grammar_free(gs);
}

/* The matcher API: masks agree with accept; rollback restores the mask;
 * end-of-generation only where complete. */
static void matcher_api(wick_model *m) {
    wick_grammar *g = compile(m, WICK_GRAMMAR_REGEX, " ?ab(c|de)"); /* " ": SentencePiece's dummy prefix */
    wick_model_info info;
    wick_model_get_info(m, &info);
    const size_t words = ((size_t)info.n_vocab + 63) / 64;
    uint64_t *a = calloc(words, 8), *b = calloc(words, 8);
    wick_error err;
    wick_grammar_matcher *mt = g ? wick_grammar_matcher_new(g, &err) : NULL;
    CHECK(mt && a && b);
    if (mt && a && b) {
        const int n0 = wick_grammar_matcher_mask(mt, a);
        CHECK(n0 > 0);
        int32_t ids[16];
        const int n = wick_tokenize(m, "abde", 4, false, ids, 16, &err);
        CHECK(n >= 2);
        int refused = 0;
        for (int32_t id = 0; id < info.n_vocab; id++) /* a forbidden token is refused and changes nothing */
            if (!(a[id >> 6] >> (id & 63) & 1) && (refused++ < 50)) CHECK(!wick_grammar_matcher_accept(mt, id));
        for (int i = 0; i < n; i++) {
            CHECK(!wick_grammar_matcher_complete(mt));
            wick_grammar_matcher_mask(mt, b);
            CHECK(b[ids[i] >> 6] >> (ids[i] & 63) & 1);
            CHECK(wick_grammar_matcher_accept(mt, ids[i]));
        }
        CHECK(wick_grammar_matcher_complete(mt));
        CHECK_INT(wick_grammar_matcher_mask(mt, b), 1); /* end-of-generation alone */
        const int32_t eos = info.eos;
        CHECK(eos >= 0 && (b[eos >> 6] >> (eos & 63) & 1));
        wick_grammar_matcher_rollback(mt, n);
        wick_grammar_matcher_mask(mt, b);
        CHECK(memcmp(a, b, words * 8) == 0);
        CHECK(!wick_grammar_matcher_accept(mt, eos));
    }
    wick_grammar_matcher_free(mt);
    free(a);
    free(b);
    wick_grammar_free(g);
}

static void errors(wick_model *m) {
    static const struct {
        wick_grammar_kind kind;
        const char *text, *want;
    } bad[] = {
        {WICK_GRAMMAR_JSON_SCHEMA, "{\"type\":\"object\",\"properties\":{\"a\":{\"not\":{}}}}", "#/properties/a"},
        {WICK_GRAMMAR_JSON_SCHEMA, "{\"type\":", "not valid JSON"},
        {WICK_GRAMMAR_REGEX, "(a", ""},
        {WICK_GRAMMAR_REGEX, "(a)\\1", ""},
        {WICK_GRAMMAR_GBNF, "root ::= missing", "missing"},
        {WICK_GRAMMAR_GBNF, "", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wick_error err = {0};
        wick_grammar_spec sp = {.kind = bad[i].kind, .text = bad[i].text, .len = strlen(bad[i].text)};
        wick_grammar *g = wick_grammar_compile(m, &sp, &err);
        CHECK_MSG(!g && err.msg[0] && strstr(err.msg, bad[i].want), "\"%s\": %s", bad[i].text, g ? "compiled" : err.msg);
        wick_grammar_free(g);
    }
    /* a grammar compiled for another model */
    wick_error err;
    wick_model *m2 = wick_model_load(model_path(), NULL, &err);
    CHECK_MSG(m2 != NULL, "%s", err.msg);
    if (!m2) return;
    wick_grammar *g = compile(m2, WICK_GRAMMAR_JSON, NULL);
    wick_context *c;
    wick_sched *s = new_sched(m, 1, &c, false);
    if (s && g) {
        int32_t ids[4] = {1, 2, 3, 4};
        out_rec o;
        wick_request r = {.prompt = ids, .n_prompt = 4, .n_predict = 4, .grammar = g, .on_done = on_done, .user = &o};
        CHECK(wick_sched_submit(s, &r, &err) < 0 && strstr(err.msg, "another model"));
    }
    wick_sched_free(s);
    wick_context_free(c);
    wick_grammar_free(g);
    wick_model_free(m2);
}

/* A lazily started grammar: the output is the free run's up to and with the
 * trigger token, then the grammar's; a trigger never sampled leaves the
 * whole output free; a scheduler that speculates gives the same. */
static void lazy_trigger(wick_model *m) {
    wick_context *c;
    for (int lookup = 0; lookup <= 1; lookup++) {
        wick_sched *s = new_sched(m, 2, &c, lookup);
        if (!s) return;
        const job_spec free_run = {.temperature = 0, .n_predict = 40, .prompt = "Once upon a time"};
        out_rec o_free;
        submit(s, m, &free_run, &o_free, WICK_SPEC_OFF);
        run_all(s);
        int k = -1; /* the first token from the fourth on that did not come before */
        for (int i = 3; i < o_free.n && k < 0; i++) {
            bool seen = false;
            for (int j = 0; j < i; j++) seen = seen || o_free.ids[j] == o_free.ids[i];
            if (!seen) k = i;
        }
        CHECK(k > 0);
        if (k < 0) break;
        wick_grammar *g = compile(m, WICK_GRAMMAR_REGEX, "[0-9]{3}");
        const int32_t trig = o_free.ids[k], absent = 0 /* <unk>: never sampled */;
        for (int t = 0; t < 2; t++) {
            int32_t ids[64];
            wick_error err;
            const int n = wick_tokenize(m, free_run.prompt, strlen(free_run.prompt), true, ids, 64, &err);
            out_rec o;
            memset(&o, 0, sizeof o);
            wick_request r = {.prompt = ids, .n_prompt = n, .n_predict = 40, .grammar = g,
                              .grammar_triggers = t == 0 ? &trig : &absent, .n_grammar_triggers = 1,
                              .on_token = on_token, .on_done = on_done, .user = &o, .logprobs = -1};
            r.sampling = wick_sampling_default();
            r.sampling.temperature = 0;
            CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
            run_all(s);
            if (t == 0) {
                CHECK_MSG(o.n > k && memcmp(o.ids, o_free.ids, (size_t)(k + 1) * sizeof *o.ids) == 0,
                          "lazy (lookup %d): the output up to the trigger is the free run's", lookup);
                CHECK_MSG(o.res.finish == WICK_FINISH_STOP && pcre_whole("[0-9]{3}", o.text + strlen(o.text) - 3),
                          "lazy (lookup %d): three digits after the trigger, then the end: \"%s\" (%s)", lookup, o.text, o.error);
                CHECK_MSG(o.n == k + 4, "lazy (lookup %d): %d tokens after the trigger, not 3 digits", lookup, o.n - k - 1);
            } else {
                CHECK_MSG(o.n == o_free.n && memcmp(o.ids, o_free.ids, (size_t)o.n * sizeof *o.ids) == 0,
                          "lazy (lookup %d): a trigger never sampled leaves the output free", lookup);
            }
        }
        /* bad triggers */
        wick_error err;
        int32_t ids[8] = {1, 2, 3};
        int32_t bad = -5;
        wick_request r = {.prompt = ids, .n_prompt = 3, .n_predict = 4, .grammar = g, .grammar_triggers = &bad,
                          .n_grammar_triggers = 1, .on_done = on_done, .logprobs = -1};
        r.sampling = wick_sampling_default();
        CHECK(wick_sched_submit(s, &r, &err) < 0 && strstr(err.msg, "trigger"));
        r.grammar = NULL, r.grammar_triggers = ids;
        CHECK(wick_sched_submit(s, &r, &err) < 0 && strstr(err.msg, "trigger"));
        wick_grammar_free(g);
        wick_sched_free(s);
        wick_context_free(c);
    }
}

static wick_model *M;
static void t_regex(void) { regex_outputs_match(M); }
static void t_choice_schema(void) { choice_and_schema(M); }
static void t_batch(void) { batch_invariance(M); }
static void t_matcher(void) { matcher_api(M); }
static void t_errors(void) { errors(M); }
static void t_lazy(void) { lazy_trigger(M); }

int main(void) {
    wick_error err;
    M = wick_model_load(model_path(), NULL, &err);
    CHECK_MSG(M != NULL, "%s: %s", model_path(), err.msg);
    if (M) {
        RUN(t_regex);
        RUN(t_choice_schema);
        RUN(t_batch);
        RUN(t_matcher);
        RUN(t_errors);
        RUN(t_lazy);
    }
    wick_model_free(M);
    return check_summary("test_grammar_sched");
}
