/* test_tokenizer.c — tokenizers against real files in ../shared: stories260K
 * (SentencePiece BPE, HF + GGUF), Qwen3 / Qwen2.5 (byte-level BPE), the
 * llama.cpp vocab test vectors, writer round trips, the synthetic tokenizer,
 * and hostile input. */
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "core/fileio.h"
#include "format/gguf.h"
#include "text/tokenizer.h"

/* ------------------------------------------------------------- helpers */

typedef struct ids_t {
    int32_t *v;
    size_t n;
} ids_t;

static ids_t enc(const tokenizer *t, const char *s, size_t len, bool add_special, bool parse_special) {
    ids_t r = {0};
    wick_error e = {{0}};
    if (tok_encode(t, s, len, add_special, parse_special, &r.v, &r.n, &e) != 0) {
        fprintf(stderr, "encode failed: %s\n", e.msg);
        r.v = NULL;
        r.n = (size_t)-1;
    }
    return r;
}

static bool ids_eq(ids_t a, const int32_t *b, size_t nb) {
    if (a.n != nb) return false;
    for (size_t i = 0; i < nb; i++)
        if (a.v[i] != b[i]) return false;
    return true;
}

static void print_ids(const char *what, const int32_t *v, size_t n) {
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n && i < 64; i++) fprintf(stderr, " %d", v[i]);
    fprintf(stderr, "\n");
}

#define CHECK_IDS(t, text, add, ...)                                                 \
    do {                                                                             \
        const int32_t exp_[] = {__VA_ARGS__};                                        \
        ids_t got_ = enc(t, text, strlen(text), add, true);                          \
        bool ok_ = ids_eq(got_, exp_, sizeof exp_ / sizeof exp_[0]);                 \
        CHECK_MSG(ok_, "encode(\"%s\")", text);                                      \
        if (!ok_) {                                                                  \
            print_ids("got", got_.v, got_.n == (size_t)-1 ? 0 : got_.n);            \
            print_ids("expected", exp_, sizeof exp_ / sizeof exp_[0]);               \
        }                                                                            \
        free(got_.v);                                                                \
    } while (0)

/* The llama.cpp vocab test vectors: .inp strings separated by
 * "\n__ggml_vocab_test__\n", .out one line of space-separated ids per string. */
typedef struct vocab_case {
    char *text;
    size_t len;
    int32_t *ids;
    size_t n;
} vocab_case;

static int load_vocab_cases(const char *inp_rel, const char *out_rel, vocab_case **out) {
    const char *pi = shared_path(inp_rel);
    if (!pi) return -1;
    char inp_path[1024];
    snprintf(inp_path, sizeof inp_path, "%s", pi);
    const char *po = shared_path(out_rel);
    if (!po) return -1;
    size_t ni, no;
    char *inp = file_read_all(inp_path, &ni, NULL);
    char *outs = file_read_all(po, &no, NULL);
    if (!inp || !outs) {
        free(inp);
        free(outs);
        return -1;
    }
    static const char SEP[] = "\n__ggml_vocab_test__\n";
    vocab_case *cases = NULL;
    int n = 0;
    size_t pos = 0;
    while (pos < ni) {
        char *s = memmem(inp + pos, ni - pos, SEP, sizeof SEP - 1);
        if (!s) break;
        cases = realloc(cases, (size_t)(n + 1) * sizeof *cases);
        size_t l = (size_t)(s - (inp + pos));
        cases[n].text = malloc(l + 1);
        memcpy(cases[n].text, inp + pos, l);
        cases[n].text[l] = 0;
        cases[n].len = l;
        cases[n].ids = NULL;
        cases[n].n = 0;
        n++;
        pos = (size_t)(s - inp) + sizeof SEP - 1;
    }
    /* .out lines */
    int line = 0;
    char *p = outs;
    while (line < n && p < outs + no) {
        char *nl = memchr(p, '\n', (size_t)(outs + no - p));
        char *e = nl ? nl : outs + no;
        while (p < e) {
            while (p < e && *p == ' ') p++;
            if (p >= e) break;
            long v = strtol(p, &p, 10);
            cases[line].ids = realloc(cases[line].ids, (cases[line].n + 1) * sizeof(int32_t));
            cases[line].ids[cases[line].n++] = (int32_t)v;
        }
        line++;
        p = e + 1;
    }
    free(inp);
    free(outs);
    if (line != n) {
        fprintf(stderr, "vocab test %s: %d strings but %d lines\n", inp_rel, n, line);
    }
    *out = cases;
    return n;
}

static void free_vocab_cases(vocab_case *c, int n) {
    for (int i = 0; i < n; i++) {
        free(c[i].text);
        free(c[i].ids);
    }
    free(c);
}

/* Returns the number of failing cases (printing the first few), or -1 if absent. */
static int run_vocab_cases(const tokenizer *t, const char *name, bool verbose) {
    char inp[256], out[256];
    snprintf(inp, sizeof inp, "tokenizers/llama.cpp-vocab/ggml-vocab-%s.gguf.inp", name);
    snprintf(out, sizeof out, "tokenizers/llama.cpp-vocab/ggml-vocab-%s.gguf.out", name);
    vocab_case *c;
    int n = load_vocab_cases(inp, out, &c);
    if (n < 0) return -1;
    int fails = 0;
    for (int i = 0; i < n; i++) {
        ids_t got = enc(t, c[i].text, c[i].len, false, false);
        if (!ids_eq(got, c[i].ids, c[i].n)) {
            if (verbose && fails < 4) {
                fprintf(stderr, "%s case %d \"%.60s\":\n", name, i, c[i].text);
                print_ids("got", got.v, got.n == (size_t)-1 ? 0 : got.n);
                print_ids("expected", c[i].ids, c[i].n);
            }
            fails++;
        }
        free(got.v);
    }
    free_vocab_cases(c, n);
    return fails;
}

static tokenizer *load_hf(const char *rel) {
    const char *p = shared_path(rel);
    if (!p) return NULL;
    wick_error e = {{0}};
    tokenizer *t = tok_load_hf_dir(p, &e);
    CHECK_MSG(t != NULL, "tok_load_hf_dir(%s): %s", rel, e.msg);
    return t;
}

static tokenizer *load_gguf_tok(const char *rel) {
    const char *p = shared_path(rel);
    if (!p) return NULL;
    wick_error e = {{0}};
    gguf_file *f = gguf_open(p, &e);
    CHECK_MSG(f != NULL, "gguf_open(%s): %s", rel, e.msg);
    if (!f) return NULL;
    tokenizer *t = tok_load_gguf(f, &e);
    CHECK_MSG(t != NULL, "tok_load_gguf(%s): %s", rel, e.msg);
    gguf_close(f);
    return t;
}

static const char *STORY = "Once upon a time, there was a little girl named Lily.";

static void check_stories(tokenizer *t) {
    CHECK_INT(tok_get_kind(t), TOK_KIND_SPM);
    CHECK_INT(tok_n_vocab(t), 512);
    CHECK_INT(tok_bos(t), 1);
    CHECK_INT(tok_eos(t), 2);
    CHECK(tok_adds_bos(t));
    CHECK(!tok_adds_eos(t));
    CHECK(tok_is_special(t, 1));
    CHECK(!tok_is_special(t, 346));
    CHECK_IDS(t, "Hello world", false, 346, 306, 414, 263, 304, 341);
    CHECK_IDS(t, "Hello world", true, 1, 346, 306, 414, 263, 304, 341);
    CHECK_IDS(t, STORY, false, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426);
    ids_t e = enc(t, "", 0, false, false);
    CHECK_INT(e.n, 0);
    free(e.v);
    e = enc(t, "", 0, true, false);
    CHECK(e.n == 1 && e.v[0] == 1);
    free(e.v);
    /* decoding */
    ids_t s = enc(t, STORY, strlen(STORY), true, false);
    wick_error err = {{0}};
    char *d = tok_decode(t, s.v, s.n, true, &err);
    CHECK_STR(d, STORY);
    free(d);
    d = tok_decode(t, s.v, s.n, false, &err);
    CHECK_STR(d, "<s> Once upon a time, there was a little girl named Lily.");
    free(d);
    free(s.v);
    char buf[16];
    int k = tok_piece(t, 403, buf, sizeof buf);
    CHECK(k == 5 && memcmp(buf, " Once", 5) == 0);
    CHECK_INT(tok_piece(t, 512, buf, sizeof buf), -1);
    /* byte fallback: a character not in the 512-token vocabulary */
    const char *emoji = "hi \xF0\x9F\x98\x80";
    ids_t b = enc(t, emoji, strlen(emoji), false, false);
    d = tok_decode(t, b.v, b.n, true, &err);
    CHECK_STR(d, emoji);
    free(d);
    free(b.v);
}

/* --------------------------------------------------------------- tests */

static void test_stories_hf(void) {
    tokenizer *t = load_hf("models/stories260K/hf");
    if (!t) SKIP("stories260K hf not found");
    check_stories(t);
    CHECK_STR(tok_kind_name(t), "SentencePiece BPE");
    tok_free(t);
}

static void test_stories_gguf(void) {
    tokenizer *t = load_gguf_tok("models/stories260K/stories260K-f32.gguf");
    if (!t) SKIP("stories260K gguf not found");
    check_stories(t);
    tok_free(t);
}

static void check_qwen(tokenizer *t) {
    CHECK_INT(tok_get_kind(t), TOK_KIND_BPE_BYTELEVEL);
    CHECK_STR(tok_kind_name(t), "byte-level BPE");
    CHECK_INT(tok_bos(t), -1);
    CHECK(!tok_adds_bos(t));
    CHECK_INT(tok_eos(t), 151645);
    CHECK_INT(tok_find(t, "<|im_start|>"), 151644);
    CHECK(tok_is_special(t, 151644));
    CHECK(!tok_is_special(t, 9707));
    CHECK(tok_chat_template(t) != NULL);
    CHECK_IDS(t, "Hello world", true, 9707, 1879);
    CHECK_IDS(t, "<|im_start|>user\nHi<|im_end|>", true, 151644, 872, 198, 13048, 151645);
    /* without parse_special the marker is plain text */
    ids_t p = enc(t, "<|im_start|>", 12, false, false);
    CHECK(p.n > 1);
    free(p.v);
    /* <tool_call> is a non-special added token: always matched */
    ids_t th = enc(t, "<tool_call>", 11, false, false);
    CHECK(th.n == 1 && th.v[0] == 151657);
    CHECK(!tok_is_special(t, 151657));
    free(th.v);
    int f = run_vocab_cases(t, "qwen2", true);
    if (f >= 0) CHECK_MSG(f == 0, "qwen2 vocab cases: %d failing", f);
    /* decoding */
    const char *txt = "Héllo wörld, 你好! \xF0\x9F\x98\x80\n  x";
    ids_t ids = enc(t, txt, strlen(txt), false, false);
    wick_error err = {{0}};
    char *d = tok_decode(t, ids.v, ids.n, false, &err);
    CHECK_STR(d, txt);
    free(d);
    free(ids.v);
}

static void test_qwen3_json(void) {
    tokenizer *t = load_hf("tokenizers/qwen3");
    if (!t) SKIP("qwen3 tokenizer not found");
    CHECK_INT(tok_n_vocab(t), 151669);
    check_qwen(t);
    tok_free(t);
}

static void test_qwen25_slow(void) {
    tokenizer *t = load_hf("tokenizers/qwen2.5");
    if (!t) SKIP("qwen2.5 tokenizer not found");
    CHECK_INT(tok_n_vocab(t), 151665);
    check_qwen(t);
    tok_free(t);
}

/* the vocab-only GGUFs of llama.cpp: those listed must pass all cases */
static void test_llama_cpp_vocabs(void) {
    static const struct {
        const char *name;
        bool must_pass;
    } V[] = {
        {"llama-spm", true},   {"gpt-2", true},    {"falcon", false},  {"deepseek-llm", false},
        {"deepseek-coder", false}, {"mpt", false}, {"phi-3", false},   {"refact", false},
        {"starcoder", false},  {"gpt-neox", false}, {"baichuan", false}, {"bert-bge", false},
    };
    int found = 0;
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tokenizers/llama.cpp-vocab/ggml-vocab-%s.gguf", V[i].name);
        const char *p = shared_path(rel);
        if (!p) continue;
        found++;
        wick_error e = {{0}};
        gguf_file *f = gguf_open(p, &e);
        CHECK_MSG(f != NULL, "%s: %s", rel, e.msg);
        if (!f) continue;
        tokenizer *t = tok_load_gguf(f, &e);
        gguf_close(f);
        if (!t) {
            if (V[i].must_pass) CHECK_MSG(t != NULL, "%s: %s", rel, e.msg);
            else fprintf(stderr, "note: %s: %s\n", V[i].name, e.msg);
            continue;
        }
        int fails = run_vocab_cases(t, V[i].name, V[i].must_pass);
        if (getenv("WICK_TOK_VERBOSE")) fprintf(stderr, "vocab %s: %d failing\n", V[i].name, fails);
        if (fails >= 0) {
            if (V[i].must_pass) CHECK_MSG(fails == 0, "%s: %d failing cases", V[i].name, fails);
            else fprintf(stderr, "note: %s: %d failing cases\n", V[i].name, fails);
        }
        tok_free(t);
    }
    if (!found) SKIP("llama.cpp vocab files not found");
}

int main(void) {
    RUN(test_stories_hf);
    RUN(test_stories_gguf);
    RUN(test_qwen3_json);
    RUN(test_qwen25_slow);
    RUN(test_llama_cpp_vocabs);
    return check_summary("test_tokenizer");
}
