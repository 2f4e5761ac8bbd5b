/* test_tokenize_limit.c — encoding with a limit on the ids (tok_encode_limit,
 * wick_tokenizer_encode_max) and the byte bound, for every tokenizer in
 * ../shared, the synthetic one, and tokenizer.json variants that exercise each
 * normalizer, pre-tokenizer and added-token rule.
 *
 * For each text of the conformance corpus, the llama.cpp vocab test inputs and
 * random texts (mixed scripts, combining marks, long whitespace runs,
 * special-token text, invalid UTF-8):
 *  - the ids are the same whether each run of text between added tokens is
 *    encoded whole, in the default parts, or in the smallest parts (cut
 *    wherever the pipeline allows: every cut point is exercised);
 *  - with max_ids = n-1, n, n+1, SIZE_MAX (n the full count) the result is
 *    1 / 0 / 0 / 0, the ids of the 0 cases are the full ones, and a 1 comes
 *    with a lower bound in (max_ids, n]; also for max_ids 0 and n/2;
 *  - no encoding has more input bytes per id than tok_max_bytes_per_id.
 * Then an 8 MB prompt with max_ids 2048 is rejected having read little of it
 * (counted work, no clocks), and the constants behind the bound are
 * recomputed from utf8proc's tables. */
#include <cJSON.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

#include "check.h"
#include "core/fileio.h"
#include "text/tok_internal.h"
#include "wick.h"

/* ------------------------------------------------------------- texts */

typedef struct texts {
    char **s;
    size_t *n;
    int count, cap;
} texts;

static void texts_add(texts *ts, const char *s, size_t n) {
    if (ts->count == ts->cap) {
        ts->cap = ts->cap ? ts->cap * 2 : 256;
        ts->s = realloc(ts->s, (size_t)ts->cap * sizeof *ts->s);
        ts->n = realloc(ts->n, (size_t)ts->cap * sizeof *ts->n);
    }
    char *c = malloc(n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    ts->s[ts->count] = c;
    ts->n[ts->count++] = n;
}

static void texts_free(texts *ts) {
    for (int i = 0; i < ts->count; i++) free(ts->s[i]);
    free(ts->s);
    free(ts->n);
    memset(ts, 0, sizeof *ts);
}

/* tests/data/tokenizer_corpus.jsonl: one JSON string a line */
static void add_corpus(texts *ts) {
    size_t n;
    char *all = file_read_all("tests/data/tokenizer_corpus.jsonl", &n, NULL);
    if (!all) {
        SKIP_PART("the corpus: tests/data/tokenizer_corpus.jsonl not readable (run from the repository root)");
        return;
    }
    char *p = all, *end = all + n;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        *nl = 0;
        cJSON *j = cJSON_Parse(p);
        if (cJSON_IsString(j)) texts_add(ts, j->valuestring, strlen(j->valuestring));
        cJSON_Delete(j);
        p = nl + 1;
    }
    free(all);
}

/* the inputs of the llama.cpp vocab tests (strings separated by a marker line) */
static void add_vocab_inputs(texts *ts) {
    static const char *const V[] = {"llama-spm", "gpt-2", "falcon", "deepseek-llm", "deepseek-coder", "mpt", "phi-3",
                                    "refact", "starcoder", "bert-bge", "qwen2", "llama-bpe", "command-r"};
    static const char SEP[] = "\n__ggml_vocab_test__\n";
    int missing = 0;
    for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tokenizers/llama.cpp-vocab/ggml-vocab-%s.gguf.inp", V[v]);
        const char *p = shared_path(rel);
        size_t n;
        char *all = p ? file_read_all(p, &n, NULL) : NULL;
        if (!all) {
            missing++;
            continue;
        }
        size_t pos = 0;
        for (;;) {
            char *s = memmem(all + pos, n - pos, SEP, sizeof SEP - 1);
            if (!s) break;
            texts_add(ts, all + pos, (size_t)(s - (all + pos)));
            pos = (size_t)(s - all) + sizeof SEP - 1;
        }
        free(all);
    }
    if (missing)
        SKIP_PART("the test strings of %d of the %d llama.cpp vocabularies: their .inp files not found in the shared "
                  "folder", missing, (int)(sizeof V / sizeof V[0]));
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint32_t rng(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* Bits of text that stress the rules: characters that normalization composes or
 * shrinks (decomposed accents, the Kelvin sign, a mathematical letter with marks,
 * Hangul jamo, kana with a voicing mark, halfwidth forms), many scripts, the
 * SentencePiece space, digits, code, added-token text, line breaks of every kind,
 * control characters and invalid UTF-8. */
static const char *const BITS[] = {
    "the", " the", "Once", " upon", "a", "time", ",", ".", "!?", "'s", "'T", "don't", "I'm",
    "caf\xc3\xa9", "cafe\xcc\x81", "A\xcc\x8a", "\xe2\x84\xab", "\xe2\x84\xaa", "\xce\xb9\xcc\x88\xcc\x81",
    "\xe1\xbe\xbe\xcc\x88\xcc\x81", "\xf0\x9d\x90\xae\xcc\x88\xcc\x84", "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8",
    "\xea\xb0\x80", "\xea\xb0\x80\xe1\x86\xa8", "\xe3\x81\x8b\xe3\x82\x99", "\xef\xbd\xb6\xef\xbe\x9e",
    "\xcc\x81", "\xe3\x82\x99", "\xe1\x85\xa1", "\xef\xbc\xa1\xef\xbd\x82", "\xc4\xb0", "\xce\xa3\xce\x91",
    "\xe4\xb8\xad\xe6\x96\x87", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82",
    "\xce\x9a\xce\xb1\xce\xbb\xce\xb7", "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7",
    "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87", "\xe0\xb8\xaa\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\xaa",
    "\xf0\x9f\x98\x80", "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", "\xe2\x96\x81", "\xe2\x96\x81\xe2\x96\x81", "12345", "3.14",
    "1,000,000", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "[MASK]",
    "<think>", "<0x41>", "\t", "\n", "\r\n", "\r", "\xc2\xa0", "\xe3\x80\x80", "\xe2\x80\xa8", "\x0b", "\x0c",
    "\xc2\x85", "\x01", "\xff", "\xe4\xb8", "\xc0\xaf", "\xed\xa0\x80", "\xf0\x9f\x98", "==", "----", "{}", "();",
    "http://x.y/z?a=1&b=2", "__init__", "$", "^", "\\", "'", "ab", "cab", "x", "y\n", "a\n",
};

/* A random text of up to max bytes: bits, runs of whitespace (up to 300) or of one
 * letter or digit (up to 400), random bytes. */
static size_t random_text(char *buf, size_t max) {
    size_t n = 0, want = rng() % max;
    while (n < want) {
        uint32_t r = rng() % 16;
        if (r < 10) {
            const char *b = BITS[rng() % (sizeof BITS / sizeof BITS[0])];
            size_t l = strlen(b);
            if (n + l > max) break;
            memcpy(buf + n, b, l);
            n += l;
        } else if (r < 12) {
            static const char *const WS[] = {" ", "\t", "\n", "\r\n", "\xc2\xa0", "\xe3\x80\x80"};
            const char *w = WS[rng() % 6];
            size_t l = strlen(w), k = 1 + rng() % 300;
            bool mixed = rng() & 1;
            for (size_t i = 0; i < k && n + 4 <= max; i++) {
                if (mixed) w = WS[rng() % 6], l = strlen(w);
                memcpy(buf + n, w, l);
                n += l;
            }
        } else if (r < 13) {
            char c = (char)((rng() & 1) ? 'a' + rng() % 26 : '0' + rng() % 10);
            for (size_t k = 1 + rng() % 400; k-- && n < max;) buf[n++] = c;
        } else if (r < 14) {
            buf[n++] = (char)(rng() & 0xff);
        } else {
            buf[n++] = (char)(' ' + rng() % 95);
        }
    }
    return n;
}

static void add_random(texts *ts, int count, size_t max) {
    char *buf = malloc(max + 8);
    for (int i = 0; i < count; i++) texts_add(ts, buf, random_text(buf, max));
    free(buf);
}

/* ----------------------------------------------------------- checking */

typedef struct res {
    int rc;
    int32_t *ids;
    size_t n;
    tok_encode_stats st;
} res;

static res enc(const tokenizer *t, const char *s, size_t n, bool add, size_t max_ids, size_t chunk) {
    res r;
    wick_error e = {0};
    r.rc = tok_encode_limit(t, s, n, add, true, max_ids, chunk, &r.ids, &r.n, &r.st, &e);
    if (r.rc < 0) fprintf(stderr, "encode failed: %s\n", e.msg);
    return r;
}

static bool same_ids(res a, res b) {
    return a.n == b.n && (a.n == 0 || memcmp(a.ids, b.ids, a.n * sizeof(int32_t)) == 0);
}

static void show(const char *name, const char *what, const char *s, size_t n) {
    fprintf(stderr, "%s: %s for text (%zu bytes):", name, what, n);
    for (size_t i = 0; i < n && i < 96; i++) fprintf(stderr, " %02x", (unsigned char)s[i]);
    fprintf(stderr, "%s\n", n > 96 ? " ..." : "");
}

/* All the checks of the header on one text; returns the number of failures. */
static int check_text(const tokenizer *t, const char *name, const char *s, size_t len, bool add) {
    int bad = 0;
    res ref = enc(t, s, len, add, SIZE_MAX, SIZE_MAX); /* each run whole */
    if (ref.rc != 0) {
        show(name, "whole encode failed", s, len);
        return 1;
    }
    size_t n = ref.n;
    static const size_t CHUNKS[] = {0, 1};
    for (int c = 0; c < 2; c++) {
        res r = enc(t, s, len, add, SIZE_MAX, CHUNKS[c]);
        if (r.rc != 0 || !same_ids(r, ref)) {
            if (bad++ < 1) show(name, CHUNKS[c] ? "smallest parts differ" : "default parts differ", s, len);
        }
        free(r.ids);
    }
    /* the byte bound */
    size_t B = tok_max_bytes_per_id(t);
    size_t extra = (add && tok_adds_bos(t)) + (add && tok_adds_eos(t));
    if (B && (len + B - 1) / B + extra > n) {
        if (bad++ < 1) show(name, "more bytes per id than the bound", s, len);
        fprintf(stderr, "  %zu bytes, %zu ids, bound %zu\n", len, n, B);
    }
    /* limits */
    size_t maxes[6] = {n ? n - 1 : 0, n, n + 1, SIZE_MAX, 0, n / 2};
    for (int m = 0; m < 6; m++) {
        for (int c = 0; c < (m < 2 ? 2 : 1); c++) { /* the smallest parts at the edge of the limit */
            size_t mx = maxes[m];
            res r = enc(t, s, len, add, mx, CHUNKS[c]);
            bool ok;
            if (n > mx) ok = r.rc == 1 && !r.ids && r.n > mx && r.n <= n;
            else ok = r.rc == 0 && same_ids(r, ref);
            if (!ok && bad++ < 1) {
                show(name, "a limit went wrong", s, len);
                fprintf(stderr, "  max_ids %zu chunk %zu: rc %d, n %zu (full count %zu)\n", mx, CHUNKS[c], r.rc, r.n, n);
            }
            free(r.ids);
        }
    }
    free(ref.ids);
    return bad;
}

static int check_texts(const tokenizer *t, const char *name, const texts *ts, int stride) {
    int bad = 0;
    for (int i = 0; i < ts->count; i += stride) bad += check_text(t, name, ts->s[i], ts->n[i], (i & 1) != 0);
    return bad;
}

static texts CORPUS, RANDOM;

static const char *const SOURCES[] = {
    "models/stories260K/hf",
    "models/stories260K/stories260K-f32.gguf",
    "models/aidreams260K/aidreams260K-f32.gguf",
    "tokenizers/qwen3",
    "tokenizers/qwen2.5",
    "tokenizers/llama.cpp-vocab/ggml-vocab-llama-spm.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-falcon.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-deepseek-llm.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-deepseek-coder.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-mpt.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-phi-3.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-refact.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-starcoder.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-gpt-neox.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-baichuan.gguf",
    "tokenizers/llama.cpp-vocab/ggml-vocab-bert-bge.gguf",
};

static tokenizer *load(const char *rel) {
    const char *p = shared_path(rel);
    if (!p) return NULL;
    wick_error e = {0};
    tokenizer *t = wick_tokenizer_load(p, &e);
    CHECK_MSG(t != NULL, "%s: %s", rel, e.msg);
    return t;
}

/* ------------------------------------------------------ a long prompt */

/* English text of len bytes: the corpus strings, again and again. */
static char *long_text(size_t len) {
    char *s = malloc(len + 1);
    size_t o = 0;
    for (int i = 0; o < len; i = (i + 1) % (CORPUS.count ? CORPUS.count : 1)) {
        const char *c = CORPUS.count ? CORPUS.s[i] : "All work and no play makes Jack a dull boy.";
        size_t l = strlen(c);
        if (l > len - o) l = len - o;
        memcpy(s + o, c, l);
        o += l;
        if (o < len) s[o++] = '\n';
    }
    s[len] = 0;
    return s;
}

/* An 8 MB prompt with max_ids 2048 is rejected having read only about what 2048
 * ids take: before reading anything when the byte bound already tells, else
 * after a few parts. Work is counted (bytes normalized, buffer capacity). */
static void check_long_prompt(const tokenizer *t, const char *name, const char *big, size_t len) {
    const size_t LIMIT = 2048;
    size_t B = tok_max_bytes_per_id(t);
    res r = enc(t, big, len, true, LIMIT, 0);
    CHECK_MSG(r.rc == 1 && r.n > LIMIT, "%s: rc %d n %zu", name, r.rc, r.n);
    if (B) CHECK_MSG(r.st.raw_read == 0 && r.st.work_bytes == 0, "%s: read %zu bytes", name, r.st.raw_read);
    else CHECK_MSG(r.st.raw_read <= (64u << 10) && r.st.work_bytes <= (1u << 20), "%s: read %zu bytes, %zu of buffers",
                   name, r.st.raw_read, r.st.work_bytes);
    /* a limit the bound cannot settle: the text is read only up to about the limit's worth */
    size_t lim2 = B ? len / B + 16 : LIMIT;
    r = enc(t, big, len, true, lim2, 0);
    size_t allow = lim2 * 16 + (64u << 10); /* English: under 16 bytes per id */
    CHECK_MSG(r.rc == 1 && r.n > lim2 && r.st.raw_read <= allow && r.st.peak_pending <= allow &&
                  r.st.work_bytes <= 4 * allow,
              "%s: limit %zu: rc %d, read %zu, pending %zu, buffers %zu", name, lim2, r.rc, r.st.raw_read,
              r.st.peak_pending, r.st.work_bytes);
    /* a text that passes the byte check and is one piece for the pre-tokenizer: the
     * pending piece is given up once its bytes alone need more ids than allowed */
    if (B) {
        size_t n = (LIMIT * B) / 4 * 3;
        char *one = malloc(n);
        memset(one, 'a', n);
        r = enc(t, one, n, false, LIMIT, 0);
        size_t cap = 2 * (LIMIT + 1) * t->max_run_bytes + 3 * (16u << 10);
        CHECK_MSG((r.rc == 1 && r.st.raw_read <= cap) || (r.rc == 0 && r.n <= LIMIT), "%s: %zu letters: rc %d, read %zu",
                  name, n, r.rc, r.st.raw_read);
        free(r.ids);
        free(one);
    }
}

/* Every shared tokenizer over the corpus (all of it for the two the serving tests
 * use, every fifth string for the others) and the random texts, then an 8 MB prompt. */
static void test_shared_tokenizers(void) {
    const size_t MB8 = (size_t)8 << 20;
    char *big = long_text(MB8);
    int found = 0, missing = 0;
    for (size_t i = 0; i < sizeof SOURCES / sizeof SOURCES[0]; i++) {
        missing += !shared_path(SOURCES[i]);
        tokenizer *t = load(SOURCES[i]);
        if (!t) continue;
        found++;
        int stride = (i == 0 || i == 3) ? 1 : 5;
        int bad = check_texts(t, SOURCES[i], &CORPUS, stride) + check_texts(t, SOURCES[i], &RANDOM, 1);
        CHECK_MSG(bad == 0, "%s: %d texts failed", SOURCES[i], bad);
        check_long_prompt(t, SOURCES[i], big, MB8);
        tok_free(t);
    }
    free(big);
    wick_error e = {0};
    tokenizer *t = tok_make_synthetic(300, &e);
    CHECK_MSG(t != NULL, "%s", e.msg);
    if (t) {
        int bad = check_texts(t, "synthetic", &CORPUS, 5) + check_texts(t, "synthetic", &RANDOM, 1);
        CHECK_MSG(bad == 0, "synthetic: %d texts failed", bad);
        tok_free(t);
    }
    if (!found) SKIP("no shared tokenizers");
    if (missing) SKIP_PART("%d of the %d shared tokenizers not found", missing, (int)(sizeof SOURCES / sizeof SOURCES[0]));
}

/* -------------------------------------------- tokenizer.json variants */

static char tmp_root[256];

static void make_tmp_root(void) {
    if (!tmp_root[0]) {
        snprintf(tmp_root, sizeof tmp_root, "/tmp/wick-toklimit-XXXXXX");
        if (!mkdtemp(tmp_root)) tmp_root[0] = 0;
    }
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* A tokenizer.json from base (the path of one) with its normalizer,
 * pre_tokenizer and added-token flags replaced (JSON texts; NULL keeps the base's).
 * added_flags: fields set on every added token; model_fields: on the model. */
static tokenizer *variant(const char *base, const char *norm, const char *pre, const char *added_flags,
                          const char *model_fields) {
    char bp[1024];
    snprintf(bp, sizeof bp, "%s", base);
    size_t n;
    char *txt = file_read_all(bp, &n, NULL);
    cJSON *j = txt ? cJSON_ParseWithLength(txt, n) : NULL;
    free(txt);
    if (!j) return NULL;
    if (norm) cJSON_ReplaceItemInObject(j, "normalizer", cJSON_Parse(norm));
    if (pre) cJSON_ReplaceItemInObject(j, "pre_tokenizer", cJSON_Parse(pre));
    if (model_fields) {
        cJSON *fields = cJSON_Parse(model_fields), *f, *model = cJSON_GetObjectItem(j, "model");
        cJSON_ArrayForEach(f, fields) cJSON_ReplaceItemInObject(model, f->string, cJSON_Duplicate(f, true));
        cJSON_Delete(fields);
    }
    if (added_flags) {
        cJSON *flags = cJSON_Parse(added_flags), *it, *f;
        cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "added_tokens")) {
            cJSON_ArrayForEach(f, flags) cJSON_ReplaceItemInObject(it, f->string, cJSON_Duplicate(f, true));
        }
        cJSON_Delete(flags);
    }
    char *out = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    make_tmp_root();
    char path[512];
    snprintf(path, sizeof path, "%s/tokenizer.json", tmp_root);
    tokenizer *t = NULL;
    wick_error e = {0};
    if (out && write_text(path, out) == 0) t = tok_load_hf_dir(tmp_root, &e);
    free(out);
    unlink(path);
    CHECK_MSG(t != NULL, "variant %s / %s / %s: %s", norm ? norm : "-", pre ? pre : "-", added_flags ? added_flags : "-",
              e.msg);
    return t;
}

#define MS "\\u2581"
#define SPLIT(rx, beh, inv) \
    "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"" rx "\"},\"behavior\":\"" beh "\",\"invert\":" inv "}"

static void run_variant(const char *base, const char *norm, const char *pre, const char *flags, int *n_variants) {
    tokenizer *t = variant(base, norm, pre, flags, NULL);
    if (!t) return;
    (*n_variants)++;
    char name[1024];
    snprintf(name, sizeof name, "%.300s [%s | %s | %s]", base, norm ? norm : "-", pre ? pre : "-", flags ? flags : "-");
    int bad = check_texts(t, name, &CORPUS, 17) + check_texts(t, name, &RANDOM, 2);
    CHECK_MSG(bad == 0, "%s: %d texts failed", name, bad);
    tok_free(t);
}

/* Each normalizer, pre-tokenizer and added-token rule: over stories260K's vocabulary
 * (BPE with byte fallback: every text encodes), and the regex splits over the
 * synthetic byte-level one written as tokenizer.json (merges of English words,
 * spaces included: a piece cut in the wrong place shows in the ids) and Qwen3's. */
static void test_variants(void) {
    char st[1024], qw[1024], sy[1024], dir[600];
    const char *p = shared_path("models/stories260K/hf/tokenizer.json");
    if (!p) SKIP("stories260K tokenizer.json not found");
    snprintf(st, sizeof st, "%s", p);
    p = shared_path("tokenizers/qwen3/tokenizer.json");
    snprintf(qw, sizeof qw, "%s", p ? p : "");
    make_tmp_root();
    int nv = 0;
    static const char *const NORMS[] = {
        "{\"type\":\"NFKC\"}",
        "{\"type\":\"NFD\"}",
        "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFC\"},{\"type\":\"Lowercase\"},{\"type\":\"Prepend\","
        "\"prepend\":\"" MS "\"},{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"" MS "\"}]}",
        "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"a\"},\"content\":"
        "\"\\u0301\"},{\"type\":\"NFKC\"}]}",
        "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true},"
        "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"" MS "\"}]}",
        "{\"type\":\"Replace\",\"pattern\":{\"String\":\"th\"},\"content\":\"X\"}",
        "{\"type\":\"Replace\",\"pattern\":{\"String\":\"e\"},\"content\":\"\"}",
    };
    for (size_t i = 0; i < sizeof NORMS / sizeof NORMS[0]; i++) run_variant(st, NORMS[i], NULL, NULL, &nv);
    static const char *const META[] = {
        "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"always\",\"split\":true}",
        "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"first\",\"split\":true}",
        "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"always\",\"split\":false}",
        "{\"type\":\"Metaspace\",\"replacement\":\"" MS "\",\"prepend_scheme\":\"never\",\"split\":false}",
        "{\"type\":\"Sequence\",\"pretokenizers\":[" SPLIT("\\\\s+", "MergedWithNext", "false") ",{\"type\":\"Metaspace\","
        "\"replacement\":\"" MS "\",\"prepend_scheme\":\"first\",\"split\":true},{\"type\":\"Digits\","
        "\"individual_digits\":true}]}",
        "{\"type\":\"Digits\",\"individual_digits\":false}",
    };
    for (size_t i = 0; i < sizeof META / sizeof META[0]; i++) run_variant(st, "{\"type\":\"NFC\"}", META[i], NULL, &nv);
    static const char *const FLAGS[] = {
        "{\"lstrip\":true}",
        "{\"rstrip\":true}",
        "{\"single_word\":true}",
        "{\"normalized\":true}",
        "{\"normalized\":true,\"lstrip\":true,\"rstrip\":true}",
    };
    for (size_t i = 0; i < sizeof FLAGS / sizeof FLAGS[0]; i++) run_variant(st, NULL, NULL, FLAGS[i], &nv);
    /* no byte fallback: unknown characters become <unk>, a run of them one <unk> (fuse_unk) */
    tokenizer *t = variant(st, NULL, NULL, NULL, "{\"byte_fallback\":false}");
    if (t) {
        nv++;
        int bad = check_texts(t, "stories260K without byte fallback", &CORPUS, 17) +
                  check_texts(t, "stories260K without byte fallback", &RANDOM, 2);
        CHECK_MSG(bad == 0, "stories260K without byte fallback: %d texts failed", bad);
        tok_free(t);
    }
    /* the synthetic byte-level tokenizer, written as tokenizer.json */
    wick_error e = {0};
    t = tok_make_synthetic(300, &e);
    snprintf(dir, sizeof dir, "%s/synthetic", tmp_root);
    mkdir(dir, 0755);
    CHECK_MSG(t && tok_write_hf(t, dir, &e) == 0, "synthetic tokenizer.json: %s", e.msg);
    tok_free(t);
    snprintf(sy, sizeof sy, "%s/tokenizer.json", dir);
#define BL ",{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}]}"
#define SEQ "{\"type\":\"Sequence\",\"pretokenizers\":["
    static const char *const SPLITS[] = {
        SEQ SPLIT("\\\\s+", "Isolated", "false") BL,
        SEQ SPLIT("\\\\s+", "Removed", "false") BL,
        SEQ SPLIT("\\\\s", "MergedWithPrevious", "false") BL,
        SEQ SPLIT("\\\\s", "MergedWithNext", "false") BL,
        SEQ SPLIT("\\\\p{L}", "Contiguous", "false") BL,
        SEQ SPLIT("\\\\p{L}+", "Isolated", "true") BL,
        /* lookbehind, word boundary and anchors: they look at the text before a part */
        SEQ SPLIT("(?<=a)b|\\\\bc|^\\\\s+|\\\\s+$|(?m)^x|y$", "Isolated", "false") BL,
        /* "$" before a final line break: the end of a part is not the end of the text */
        SEQ SPLIT("\\\\w$", "Removed", "false") BL,
        SEQ SPLIT("\\\\s+$|\\\\w+", "Isolated", "false") ",{\"type\":\"ByteLevel\",\"add_prefix_space\":true,"
        "\"use_regex\":false}]}",
        "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":true}",
    };
    for (size_t i = 0; i < sizeof SPLITS / sizeof SPLITS[0]; i++)
        run_variant(sy, i == 8 ? "{\"type\":\"NFKD\"}" : NULL, SPLITS[i], NULL, &nv);
    run_variant(sy, NULL, NULL, "{\"lstrip\":true,\"rstrip\":true}", &nv);
    unlink(sy);
    snprintf(sy, sizeof sy, "%s/tokenizer_config.json", dir);
    unlink(sy);
    rmdir(dir);
    if (qw[0]) {
        run_variant(qw, NULL, SPLITS[6], NULL, &nv);
        run_variant(qw, NULL, SPLITS[9], "{\"lstrip\":true,\"rstrip\":true}", &nv);
    } else {
        SKIP_PART("the regex splits over Qwen3's vocabulary: tokenizers/qwen3 not found in the shared folder");
    }
    CHECK(nv >= 30);
}

/* The public API and the model-level call on a long prompt. */
static void test_public_api(void) {
    const size_t MB8 = (size_t)8 << 20, LIMIT = 2048;
    char *big = long_text(MB8);
    const char *p = shared_path("tokenizers/qwen3");
    if (p) {
        wick_error e = {0};
        wick_tokenizer *t = wick_tokenizer_load(p, &e);
        if (t) {
            int32_t *ids = (int32_t *)1;
            size_t n = 0, bad = 7;
            CHECK_INT(wick_tokenizer_encode_max(t, big, MB8, true, LIMIT, &ids, &n, &bad, &e), 1);
            CHECK(ids == NULL && n > LIMIT && bad == 0);
            CHECK(wick_tokenizer_max_bytes_per_id(t) > 0);
            const char text[] = "Hello \xff world";
            CHECK_INT(wick_tokenizer_encode_max(t, text, sizeof text - 1, false, 100, &ids, &n, &bad, &e), 0);
            int32_t *ref = NULL;
            size_t nref = 0;
            CHECK_INT(wick_tokenizer_encode(t, text, sizeof text - 1, false, &ref, &nref, NULL, &e), 0);
            CHECK(n == nref && !memcmp(ids, ref, n * sizeof *ids) && bad == 1);
            free(ids);
            free(ref);
            CHECK_INT(wick_tokenizer_encode_max(t, text, sizeof text - 1, false, 1, &ids, &n, NULL, &e), 1);
            CHECK(ids == NULL && n >= 2 && n <= nref);
            CHECK_INT(wick_tokenizer_encode_max(NULL, text, 3, false, 1, &ids, &n, NULL, &e), -1);
            wick_tokenizer_free(t);
        }
    } else {
        SKIP_PART("wick_tokenizer_encode_max on Qwen3: tokenizers/qwen3 not found in the shared folder");
    }
    p = shared_path("models/stories260K/stories260K-f32.gguf");
    if (p) {
        wick_error e = {0};
        wick_model *m = wick_model_load(p, NULL, &e);
        CHECK_MSG(m != NULL, "%s", e.msg);
        if (m) {
            int32_t out[64];
            const char *s = "Once upon a time, there was a little girl named Lily.";
            int n = wick_tokenize(m, s, strlen(s), true, out, 64, &e);
            CHECK_INT(n, 16);
            CHECK_INT(out[0], 1);
            CHECK_INT(out[1], 403);
            int k = wick_tokenize(m, s, strlen(s), true, out, 4, &e);
            CHECK(k > 4 && k <= n);
            CHECK(wick_tokenize(m, big, MB8, true, out, 64, &e) > 64);
            wick_model_free(m);
        }
    }
    free(big);
    if (!p) SKIP("stories260K not found");
}

/* ------------------------------------------------ the bound's constants */

static int u8len(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

/* For a normalization form: each input character's bytes spread over the
 * characters of its decomposition; w(d) the most any decomposed character d gets.
 * An output character is a decomposed one, or (composing forms) a composite
 * made of the characters of its canonical decomposition; F is the most of their
 * w per output byte. Input bytes <= F * output bytes for every text. */
static void test_shrink_constants(void) {
    static double w[0x110000];
    struct {
        tok_norm_kind kind;
        int opt;
        bool compose;
    } F[] = {{NORM_NFD, UTF8PROC_DECOMPOSE, false},
             {NORM_NFKD, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, false},
             {NORM_NFC, UTF8PROC_DECOMPOSE, true},
             {NORM_NFKC, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, true}};
    for (int f = 0; f < 4; f++) {
        memset(w, 0, sizeof w);
        for (uint32_t c = 0; c < 0x110000; c++) {
            if (c >= 0xD800 && c < 0xE000) continue;
            utf8proc_int32_t d[32];
            int last = 0;
            utf8proc_ssize_t n = utf8proc_decompose_char((utf8proc_int32_t)c, d, 32, (utf8proc_option_t)F[f].opt, &last);
            if (n <= 0 || n > 32) continue;
            double a = (double)u8len(c) / (double)n;
            for (utf8proc_ssize_t k = 0; k < n; k++)
                if (a > w[d[k]]) w[d[k]] = a;
        }
        double worst = 0;
        for (uint32_t o = 0; o < 0x110000; o++) {
            if (o >= 0xD800 && o < 0xE000) continue;
            double sum = w[o];
            if (F[f].compose) {
                utf8proc_int32_t d[32];
                int last = 0;
                utf8proc_ssize_t n = utf8proc_decompose_char((utf8proc_int32_t)o, d, 32, UTF8PROC_DECOMPOSE, &last);
                sum = 0;
                for (utf8proc_ssize_t k = 0; k < n; k++) sum += w[d[k]];
            }
            if (sum / u8len(o) > worst) worst = sum / u8len(o);
        }
        uint32_t num, den;
        tok_norm_shrink(F[f].kind, &num, &den);
        CHECK_MSG(worst <= (double)num / den + 1e-9, "normalization %d shrinks by %.3f, constant %u/%u", f, worst, num, den);
    }
    double worst = 0;
    for (uint32_t c = 0; c < 0x110000; c++) {
        if (c >= 0xD800 && c < 0xE000) continue;
        double r = (double)u8len(c) / u8len((uint32_t)utf8proc_tolower((utf8proc_int32_t)c));
        if (r > worst) worst = r;
    }
    uint32_t num, den;
    tok_norm_shrink(NORM_LOWERCASE, &num, &den);
    CHECK_MSG(worst <= (double)num / den, "lowercase shrinks by %.3f", worst);
}

/* tok_norm_safe_start: every character it accepts, and every first character of
 * the images of those under the four forms and lowercasing (closed over), is a
 * starter that is no later element of any canonical decomposition: nothing
 * before it can reorder or compose with it, so normalizing a text cut just
 * before it gives the normalized whole. */
static void test_safe_starts(void) {
    static uint8_t second[0x110000 / 8 + 1], seen[0x110000 / 8 + 1];
    for (uint32_t c = 0; c < 0x110000; c++) {
        if (c >= 0xD800 && c < 0xE000) continue;
        utf8proc_int32_t d[32];
        int last = 0;
        utf8proc_ssize_t n = utf8proc_decompose_char((utf8proc_int32_t)c, d, 32, UTF8PROC_DECOMPOSE, &last);
        for (utf8proc_ssize_t k = 1; k < n; k++) second[d[k] >> 3] |= (uint8_t)(1 << (d[k] & 7));
    }
    static uint32_t stack[0x110000];
    size_t sp = 0;
    int n_safe = 0, bad = 0;
    for (uint32_t c = 0; c < 0x110000; c++)
        if (tok_norm_safe_start(c) && !(c >= 0xD800 && c < 0xE000)) {
            stack[sp++] = c;
            seen[c >> 3] |= (uint8_t)(1 << (c & 7));
            n_safe++;
        }
    static const int OPTS[] = {UTF8PROC_DECOMPOSE, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, UTF8PROC_COMPOSE,
                               UTF8PROC_COMPOSE | UTF8PROC_COMPAT}; /* as normalize.c, with STABLE */
    while (sp) {
        uint32_t c = stack[--sp];
        if (utf8proc_get_property((utf8proc_int32_t)c)->combining_class != 0 || (second[c >> 3] & (1 << (c & 7)))) {
            if (bad++ < 4) fprintf(stderr, "U+%04X is no safe start\n", (unsigned)c);
            continue;
        }
        uint32_t next[5];
        for (int f = 0; f < 4; f++) {
            utf8proc_uint8_t in[4], *out = NULL;
            utf8proc_ssize_t k = utf8proc_encode_char((utf8proc_int32_t)c, in);
            utf8proc_ssize_t n = utf8proc_map(in, k, &out, (utf8proc_option_t)(OPTS[f] | UTF8PROC_STABLE));
            utf8proc_int32_t first = (utf8proc_int32_t)c;
            if (n > 0) utf8proc_iterate(out, n, &first);
            free(out);
            next[f] = (uint32_t)first;
        }
        next[4] = (uint32_t)utf8proc_tolower((utf8proc_int32_t)c);
        for (int f = 0; f < 5; f++) {
            uint32_t x = next[f];
            if (seen[x >> 3] & (1 << (x & 7))) continue;
            seen[x >> 3] |= (uint8_t)(1 << (x & 7));
            stack[sp++] = x;
        }
    }
    CHECK(n_safe > 20000);
    CHECK_MSG(bad == 0, "%d characters break the safe-start rule", bad);
}

int main(void) {
    add_corpus(&CORPUS);
    add_vocab_inputs(&CORPUS);
    add_random(&RANDOM, 150, 1500);
    add_random(&RANDOM, 4, 10000);
    RUN(test_shrink_constants);
    RUN(test_safe_starts);
    RUN(test_shared_tokenizers);
    RUN(test_variants);
    RUN(test_public_api);
    texts_free(&CORPUS);
    texts_free(&RANDOM);
    if (tmp_root[0]) rmdir(tmp_root);
    return check_summary("test_tokenize_limit");
}
