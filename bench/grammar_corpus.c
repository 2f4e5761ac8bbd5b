/* grammar_corpus.c — structured output over a corpus of real-world JSON
 * Schemas, the way JSONSchemaBench's MaskBench measures engines: for each
 * schema, compile it against a model's vocabulary (one thread), then walk
 * the grammar token by token W times from a seeded PRNG (each step: the
 * token mask, timed; a random allowed token, end-of-generation preferred
 * once the output may end and a length budget is spent). Prints a summary
 * (schemas compiled, compile and mask time percentiles) and writes each
 * completed output with its schema's path to OUT.jsonl, for an independent
 * validator (bench/grammar_corpus_check.mjs: ajv) to confirm that the
 * grammar never produced an invalid instance.
 *
 *   grammar_corpus MODEL OUT.jsonl [--walks W] [--max-tokens N] [--seed S] [--strict] [-v] SCHEMA.json...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "core/clock.h"
#include "core/fileio.h"
#include "wick.h"

static uint64_t rng_next(uint64_t *s) {
    uint64_t x = *s += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void json_string(FILE *f, const char *s, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        const unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: grammar_corpus MODEL OUT.jsonl [--walks W] [--max-tokens N] [--seed S] [--strict] [-v] SCHEMA.json...\n");
        return 2;
    }
    int walks = 4, max_tokens = 400;
    uint64_t seed = 1;
    bool strict = false, verbose = false;
    int first = 3;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--walks") && first + 1 < argc) walks = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--max-tokens") && first + 1 < argc) max_tokens = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--seed") && first + 1 < argc) seed = strtoull(argv[++first], NULL, 10);
        else if (!strcmp(argv[first], "--strict")) strict = true;
        else if (!strcmp(argv[first], "-v")) verbose = true;
        else break;
    }
    wick_error err;
    wick_model *m = wick_model_load(argv[1], NULL, &err);
    if (!m) {
        fprintf(stderr, "grammar_corpus: %s\n", err.msg);
        return 1;
    }
    FILE *out = fopen(argv[2], "w");
    if (!out) return 1;
    wick_model_info info;
    wick_model_get_info(m, &info);
    const size_t words = ((size_t)info.n_vocab + 63) / 64;
    uint64_t *bits = malloc(words * 8);
    int32_t *allowed = malloc((size_t)info.n_vocab * sizeof *allowed);
    char *text = malloc(1 << 20);
    samples compile = {0}, mask = {0};
    int n_schemas = 0, n_compiled = 0, n_done = 0, n_cut = 0, n_stuck = 0;
    for (int f = first; f < argc; f++) {
        size_t len;
        char *schema = file_read_all(argv[f], &len, &err);
        if (!schema) continue;
        n_schemas++;
        wick_grammar_spec sp = {.kind = WICK_GRAMMAR_JSON_SCHEMA, .text = schema, .len = len, .strict = strict};
        wick_grammar *g = wick_grammar_compile(m, &sp, &err);
        free(schema);
        if (!g) {
            if (verbose) printf("refused %s: %s\n", argv[f], err.msg);
            continue;
        }
        n_compiled++;
        samples_push(&compile, wick_grammar_compile_ms(g));
        const double t_walks = wick_now_ms();
        for (int w = 0; w < walks; w++) {
            uint64_t rs = seed * 1000003u + (uint64_t)f * 7919u + (uint64_t)w;
            wick_grammar_matcher *mt = wick_grammar_matcher_new(g, &err);
            if (!mt) break;
            size_t n_text = 0;
            int step = 0;
            bool ended = false;
            for (; step < max_tokens; step++) {
                const double t0 = wick_now_ms();
                const int n = wick_grammar_matcher_mask(mt, bits);
                samples_push(&mask, (wick_now_ms() - t0) * 1000);
                if (n == 0) break;
                const bool complete = wick_grammar_matcher_complete(mt);
                if (complete && (step > max_tokens / 4 || rng_next(&rs) % 4 == 0)) {
                    ended = true;
                    break;
                }
                int na = 0;
                for (size_t wd = 0; wd < words; wd++)
                    for (uint64_t b = bits[wd]; b; b &= b - 1) {
                        const int32_t id = (int32_t)(wd * 64 + (size_t)__builtin_ctzll(b));
                        if (!wick_token_is_eog(m, id)) allowed[na++] = id;
                    }
                if (!na) {
                    ended = complete;
                    break;
                }
                /* past half the budget, prefer short tokens of structure: pick the
                 * shortest of a few draws, so walks tend to close */
                int32_t id = allowed[rng_next(&rs) % (uint64_t)na];
                char piece[4096];
                int pl = wick_token_piece(m, id, piece, sizeof piece);
                if (pl < 0 || pl > (int)sizeof piece) pl = 0; /* (the output check then fails loudly) */
                if (step > max_tokens / 2)
                    for (int k = 0; k < 6; k++) {
                        const int32_t id2 = allowed[rng_next(&rs) % (uint64_t)na];
                        char p2[4096];
                        const int l2 = wick_token_piece(m, id2, p2, sizeof p2);
                        if (l2 > 0 && l2 < pl && l2 <= (int)sizeof p2) id = id2, pl = l2, memcpy(piece, p2, (size_t)l2);
                    }
                if (!wick_grammar_matcher_accept(mt, id)) {
                    fprintf(stderr, "grammar_corpus: %s: the mask allowed %d but the matcher refused it\n", argv[f], id);
                    return 1;
                }
                if (pl > 0 && n_text + (size_t)pl < (1 << 20)) memcpy(text + n_text, piece, (size_t)pl), n_text += (size_t)pl;
            }
            if (ended) {
                n_done++;
                fputs("{\"schema\":", out);
                json_string(out, argv[f], strlen(argv[f]));
                fputs(",\"text\":", out);
                json_string(out, text, n_text);
                fputs("}\n", out);
            } else if (step >= max_tokens) {
                n_cut++;
            } else {
                n_stuck++;
                if (verbose) printf("stuck %s after %d tokens: %.*s\n", argv[f], step, (int)(n_text < 200 ? n_text : 200), text);
            }
            wick_grammar_matcher_free(mt);
        }
        if (verbose) printf("schema %s: compile %.2f ms, walks %.1f ms\n", argv[f], wick_grammar_compile_ms(g), wick_now_ms() - t_walks);
        wick_grammar_free(g);
    }
    fclose(out);
    printf("schemas %d, compiled %d (%.1f%%); walks: %d complete, %d cut at %d tokens, %d with no token left\n", n_schemas,
           n_compiled, n_schemas ? 100.0 * n_compiled / n_schemas : 0, n_done, n_cut, max_tokens, n_stuck);
    print_compile_mask_times(&compile, &mask);
    free(compile.v);
    free(mask.v);
    free(bits);
    free(allowed);
    free(text);
    wick_model_free(m);
    return n_stuck ? 1 : 0;
}
