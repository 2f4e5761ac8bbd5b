/* test_earley.c — the scannerless Earley parser (src/grammar/earley.c) on
 * a JSON grammar written as a cfg with regex terminals: random valid JSON
 * accepted (whole, and every prefix live), known invalid texts refused at
 * the first byte that makes them so, push/pop returning to the same state,
 * and its token masks against pushing each token's bytes one at a time. */
#include <stdint.h>

#include "check.h"
#include "grammar/cfg.h"
#include "grammar/earley.h"
#include "grammar/matcher.h"
#include "grammar/token_trie.h"
#include "rng.h"

static rx_id term(cfg *g, const char *re) { return rx_parse(g->rx, re, strlen(re), NULL); }

static cfg_sym lit(cfg *g, const char *s) { return cfg_terminal(rx_literal(g->rx, s, strlen(s))); }

static cfg *json_grammar(void) {
    cfg *g = cfg_new();
    const int32_t element = cfg_nonterm(g), value = cfg_nonterm(g), object = cfg_nonterm(g),
                  members = cfg_nonterm(g), member = cfg_nonterm(g), array = cfg_nonterm(g),
                  elements = cfg_nonterm(g);
    const cfg_sym ws = cfg_terminal(term(g, "[ \\t\\n\\r]*"));
    const cfg_sym str = cfg_terminal(term(g, "\"([^\"\\\\\\x00-\\x1f]|\\\\([\"\\\\/bfnrt]|u[0-9a-fA-F]{4}))*\""));
    const cfg_sym num = cfg_terminal(term(g, "-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?"));
    const cfg_sym lb = lit(g, "{"), rb = lit(g, "}"), ls = lit(g, "["), rs = lit(g, "]"), comma = lit(g, ","),
                  colon = lit(g, ":");
    cfg_add_rule(g, element, (cfg_sym[]){ws, value, ws}, 3);
    cfg_add_rule(g, value, (cfg_sym[]){object}, 1);
    cfg_add_rule(g, value, (cfg_sym[]){array}, 1);
    cfg_add_rule(g, value, (cfg_sym[]){str}, 1);
    cfg_add_rule(g, value, (cfg_sym[]){num}, 1);
    cfg_add_rule(g, value, (cfg_sym[]){lit(g, "true")}, 1);
    cfg_add_rule(g, value, (cfg_sym[]){lit(g, "false")}, 1);
    cfg_add_rule(g, value, (cfg_sym[]){lit(g, "null")}, 1);
    cfg_add_rule(g, object, (cfg_sym[]){lb, ws, rb}, 3);
    cfg_add_rule(g, object, (cfg_sym[]){lb, members, rb}, 3);
    cfg_add_rule(g, members, (cfg_sym[]){member}, 1);
    cfg_add_rule(g, members, (cfg_sym[]){members, comma, member}, 3);
    cfg_add_rule(g, member, (cfg_sym[]){ws, str, ws, colon, element}, 5);
    cfg_add_rule(g, array, (cfg_sym[]){ls, ws, rs}, 3);
    cfg_add_rule(g, array, (cfg_sym[]){ls, elements, rs}, 3);
    cfg_add_rule(g, elements, (cfg_sym[]){element}, 1);
    cfg_add_rule(g, elements, (cfg_sym[]){elements, comma, element}, 3);
    CHECK(cfg_finish(g, element, NULL) == 0);
    return g;
}

/* Pushes s; returns the bytes taken before the first refused one. */
static size_t feed(earley *e, const char *s, size_t n) {
    size_t i = 0;
    while (i < n && earley_push(e, (uint8_t)s[i])) i++;
    return i;
}

static void rand_json(char *out, size_t cap, int depth) {
    static const char *atoms[] = {"0", "-12.5e+3", "true", "false", "null", "\"\"", "\"a\\\"b\\u00e9\"", "\"é中\"", "7"};
    const uint32_t k = depth > 3 ? 0 : rnd_u32() % 4;
    const char *ws = rnd_u32() % 3 ? "" : " \n";
    if (k <= 1) {
        snprintf(out, cap, "%s%s%s", ws, atoms[rnd_u32() % 9], ws);
        return;
    }
    const int n = (int)(rnd_u32() % 4);
    size_t len = (size_t)snprintf(out, cap, "%s", k == 2 ? "[" : "{");
    for (int i = 0; i < n && len + 1 < cap; i++) {
        char sub[512];
        rand_json(sub, sizeof sub, depth + 1);
        len += (size_t)snprintf(out + len, cap - len, "%s%s%s%s", i ? "," : "", k == 3 ? "\"k\"" : "",
                                k == 3 ? ws : "", k == 3 ? ":" : "");
        if (len < cap) len += (size_t)snprintf(out + len, cap - len, "%s", sub);
    }
    if (len < cap) snprintf(out + len, cap - len, "%s", k == 2 ? "]" : "}");
}

static void test_json(void) {
    cfg *g = json_grammar();
    earley *e = earley_new(g, NULL, NULL);
    CHECK(e != NULL);
    if (!e) return;
    char doc[4096];
    for (int i = 0; i < 300; i++) {
        rand_json(doc, sizeof doc, 0);
        const size_t n = strlen(doc);
        const size_t took = feed(e, doc, n);
        CHECK_MSG(took == n && earley_accepting(e), "valid JSON refused at %zu: %s", took, doc);
        earley_pop(e, took);
        CHECK(earley_depth(e) == 0);
    }
    static const struct {
        const char *text;
        size_t bad_at; /* the first refused byte, or the length when only the end is wrong */
    } bad[] = {{"01", 1}, {"[1,]", 3}, {"{\"a\" 1}", 5}, {"tru", 3}, {"\"a\nb\"", 2}, {"[1 2]", 3},
               {"{,}", 1}, {"-", 1}, {"1.", 2}, {"\"\\x\"", 2}, {"[[]", 3}, {"nul1", 3}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const size_t n = strlen(bad[i].text), took = feed(e, bad[i].text, n);
        CHECK_MSG(took == bad[i].bad_at && !(took == n && earley_accepting(e)), "%s: took %zu", bad[i].text, took);
        earley_pop(e, took);
    }
    earley_free(e);
    cfg_free(g);
}

typedef struct vocab {
    char piece[2000][8];
} vocab;

static bool vocab_bytes(void *ctx, int32_t id, uint8_t *buf, size_t cap, size_t *len) {
    const vocab *v = ctx;
    *len = strlen(v->piece[id]);
    if (!*len || *len > cap) return false;
    memcpy(buf, v->piece[id], *len);
    return true;
}

static void test_masks(void) {
    static vocab v;
    static const char *ch[] = {"{", "}", "[", "]", "\"", "a", ",", ":", " ", "1", "0", "-", "t", "rue", "é"};
    for (int i = 0; i < 2000; i++) {
        v.piece[i][0] = 0;
        const int n = 1 + (int)(rnd_u32() % 3);
        for (int k = 0; k < n && strlen(v.piece[i]) + 3 < sizeof v.piece[i]; k++) strcat(v.piece[i], ch[rnd_u32() % 15]);
    }
    token_trie *t = token_trie_new(2000, vocab_bytes, &v, NULL);
    cfg *g = json_grammar();
    earley *e = earley_new(g, NULL, NULL);
    static const char *slice_res[] = {"[a1 ]{1,2}", "[^\"\\\\]{1,3}", "[^\"\\\\]+"};
    token_slices *ts = token_slices_new(2000, vocab_bytes, &v, slice_res, 3, NULL);
    rx_id terms[3];
    CHECK(t && e && ts && token_slices_terms(ts, g->rx, terms) == 0);
    if (!t || !e || !ts) return;
    static const char *prefixes[] = {"", "{", "{\"a", "{\"a\":", "[1", "[1,", "[t", "-", "{\"a\": [", "\"é"};
    uint64_t mask[token_mask_words(2000)];
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        const size_t n = strlen(prefixes[i]);
        CHECK(feed(e, prefixes[i], n) == n);
        earley_mask(e, t, mask);
        CHECK(earley_depth(e) == n);
        int wrong = 0, allowed = 0;
        for (int32_t id = 0; id < 2000; id++) {
            const size_t m = strlen(v.piece[id]), took = feed(e, v.piece[id], m);
            earley_pop(e, took);
            wrong += (took == m) != token_mask_has(mask, id);
            allowed += took == m;
        }
        CHECK_MSG(wrong == 0, "after \"%s\": %d tokens wrong (%d allowed)", prefixes[i], wrong, allowed);
        CHECK(allowed > 0);
        uint64_t sliced[token_mask_words(2000)];
        earley_mask_sliced(e, ts, terms, sliced);
        CHECK_MSG(memcmp(sliced, mask, sizeof mask) == 0, "after \"%s\": the sliced mask differs", prefixes[i]);
        for (int again = 0; again < 2; again++) { /* a plan made (second time), then used */
            earley_mask_sliced(e, ts, terms, sliced);
            CHECK_MSG(memcmp(sliced, mask, sizeof mask) == 0, "after \"%s\": the planned mask differs (%d)", prefixes[i],
                      again);
        }
        CHECK(earley_depth(e) == n);
        earley_pop(e, n);
    }
    /* random prefixes of random documents: the masks agree, walked or planned */
    char doc[4096];
    uint64_t planned[token_mask_words(2000)], sliced2[token_mask_words(2000)];
    int differ = 0;
    for (int i = 0; i < 150; i++) {
        rand_json(doc, sizeof doc, 0);
        const size_t n = rnd_u32() % (strlen(doc) + 1);
        CHECK(feed(e, doc, n) == n);
        earley_mask(e, t, mask);
        earley_mask_sliced(e, ts, terms, sliced2);
        earley_mask_sliced(e, ts, terms, planned);
        differ += memcmp(mask, sliced2, sizeof mask) != 0 || memcmp(mask, planned, sizeof mask) != 0;
        CHECK(earley_depth(e) == n);
        earley_pop(e, n);
    }
    CHECK_INT(differ, 0);
    earley_free(e);
    cfg_free(g);
    token_trie_free(t);
    token_slices_free(ts);
}

/* Random walks by token: allowed tokens are accepted, forbidden ones refused
 * with nothing changed, and a rollback gives back the earlier masks. */
static void test_matcher(void) {
    static vocab v;
    static const char *ch[] = {"{", "}", "[", "]", "\"", "a", ",", ":", " ", "1", "0", "-", "t", "rue", "é", "null"};
    for (int i = 0; i < 2000; i++) {
        v.piece[i][0] = 0;
        const int n = 1 + (int)(rnd_u32() % 2);
        for (int k = 0; k < n; k++) strcat(v.piece[i], ch[rnd_u32() % 16]);
    }
    token_trie *t = token_trie_new(2000, vocab_bytes, &v, NULL);
    static const char *slice_res[] = {"[^\"\\\\]{1,3}"};
    token_slices *ts = token_slices_new(2000, vocab_bytes, &v, slice_res, 1, NULL);
    cfg *g = json_grammar();
    rx_id terms[1];
    CHECK(t && ts && token_slices_terms(ts, g->rx, terms) == 0);
    enum { STEPS = 24, W = (2000 + 63) / 64 };
    static uint64_t masks[STEPS + 1][W];
    int wrong = 0, wrong_ref = 0;
    /* each matcher starts from the store and plans the one before left, as
     * a grammar's matchers do; every mask is checked against a plain walk */
    rx_store *chain = NULL;
    earley_plans *plans = NULL;
    for (int walk = 0; walk < 40 && t && ts; walk++) {
        grammar_matcher *m = grammar_matcher_new(g, chain, plans, t, ts, terms, NULL);
        rx_store *ref_rx = rx_store_clone(g->rx);
        earley *ref = ref_rx ? earley_new(g, ref_rx, NULL) : NULL;
        CHECK(m && ref);
        if (!m || !ref) break;
        uint64_t plain[W];
        size_t fed[STEPS + 1] = {0}; /* bytes fed to ref after each step */
        int steps = 0;
        for (; steps < STEPS; steps++) {
            grammar_matcher_mask(m, masks[steps]);
            earley_mask(ref, t, plain);
            wrong_ref += memcmp(plain, masks[steps], sizeof plain) != 0;
            int32_t allowed[2000], na = 0;
            for (int32_t id = 0; id < 2000; id++)
                if (token_mask_has(masks[steps], id)) allowed[na++] = id;
            const int32_t bad = (int32_t)(rnd_u32() % 2000);
            if (!token_mask_has(masks[steps], bad)) {
                wrong += grammar_matcher_accept(m, bad);
                uint64_t again[W];
                grammar_matcher_mask(m, again);
                wrong += memcmp(again, masks[steps], sizeof again) != 0;
            }
            if (!na) break;
            const int32_t id = allowed[rnd_u32() % (uint32_t)na];
            wrong += !grammar_matcher_accept(m, id);
            const size_t len = strlen(v.piece[id]);
            wrong += feed(ref, v.piece[id], len) != len;
            fed[steps + 1] = fed[steps] + len;
        }
        if (steps == STEPS) grammar_matcher_mask(m, masks[steps]);
        const size_t back = rnd_u32() % (size_t)(steps + 1);
        grammar_matcher_rollback(m, back);
        CHECK((int)grammar_matcher_tokens(m) == steps - (int)back);
        uint64_t now[W];
        grammar_matcher_mask(m, now);
        wrong += memcmp(now, masks[steps - (int)back], sizeof now) != 0;
        earley_pop(ref, fed[steps] - fed[steps - (int)back]);
        earley_mask(ref, t, plain);
        wrong_ref += memcmp(plain, now, sizeof now) != 0;
        earley_free(ref);
        rx_store_free(ref_rx);
        rx_store_free(chain);
        earley_plans_release(plans);
        chain = grammar_matcher_free_keep_store(m, &plans);
    }
    rx_store_free(chain);
    earley_plans_release(plans);
    CHECK_INT(wrong_ref, 0);
    CHECK_INT(wrong, 0);
    cfg_free(g);
    token_slices_free(ts);
    token_trie_free(t);
}

int main(void) {
    RUN(test_json);
    RUN(test_masks);
    RUN(test_matcher);
    return check_summary("test_earley");
}
