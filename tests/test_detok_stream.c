/* test_detok_stream.c — streaming detokenization never splits a UTF-8
 * character: emoji- and CJK-rich strings are tokenized with the real Qwen3
 * tokenizer (byte-level BPE, where a token may end inside a character) and
 * with stories260K (SentencePiece BPE with byte fallback, where every
 * non-ASCII character is several <0xXX> tokens), in both of its formats.
 * The token pieces (tok_piece) go through utf8_stream one token at a time
 * and one byte at a time; every emitted chunk must be complete, valid UTF-8,
 * and the concatenation must equal tok_decode's text (for SentencePiece, but
 * for the leading space of the first piece, which the decoder drops). */
#include <stdint.h>

#include "check.h"
#include "text/tokenizer.h"
#include "text/utf8_stream.h"

/* An independent UTF-8 check (RFC 3629): true if s[0..n) is complete and valid. */
static bool valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 2, cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 3, cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 4, cp = c & 0x07;
        } else {
            return false;
        }
        if (i + k > n) return false;
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += k;
    }
    return true;
}

static const char *const TEXTS[] = {
    "Hello 👋 world 🌍!",
    "今天天气很好，我们去公园散步吧。",
    "🧑‍💻 writes code; 👨‍👩‍👧‍👦 is a family; 🏳️‍🌈 and 🇯🇵🇺🇸 are flags; 👍🏽 has a skin tone.",
    "日本語のテキスト：こんにちは、世界！カタカナ。",
    "한국어 텍스트 😀 and Ελληνικά and Русский",
    "𠀀𠀁𪚥 rare CJK (4-byte) 𝄞 music 𓀀 hieroglyph",
    "emoji run 🔥🚀🎉🤖🦀🐍🍕🌈💯🫠🫶🏽",
    "mixed: 数学 math 🧮 123 ١٢٣ — “quotes” ‘single’ … end",
    "Tiếng Việt có dấu; e\xcc\x81 (NFD e-acute) and \xe2\x80\x8d joiner",
    "🙂",
    "中",
    " leading space 中文",
};

typedef struct stream_stats {
    int chunks, bad_chunks, pending_max;
} stream_stats;

/* Stream the pieces of ids; bytes_at_once 0 = a whole piece per push. Returns
 * the concatenated text (malloc'd) and its length. */
static char *stream(const tokenizer *t, const int32_t *ids, size_t n, size_t bytes_at_once,
                    size_t *out_len, stream_stats *st) {
    static utf8_stream u; /* large buffer: not on the stack */
    utf8_stream_init(&u);
    size_t cap = 256, len = 0;
    char *out = malloc(cap);
    for (size_t i = 0; i < n; i++) {
        char piece[512];
        int k = tok_piece(t, ids[i], piece, sizeof piece);
        if (k < 0 || k > (int)sizeof piece) {
            st->bad_chunks++;
            continue;
        }
        if (k == 0) continue;
        size_t step = bytes_at_once ? bytes_at_once : (size_t)k;
        for (size_t o = 0; o < (size_t)k; o += step) {
            size_t m = (size_t)k - o < step ? (size_t)k - o : step;
            size_t got = utf8_stream_push(&u, piece + o, m);
            if (u.n_pending > st->pending_max) st->pending_max = u.n_pending;
            if (got) {
                st->chunks++;
                if (!valid_utf8((const unsigned char *)u.out, got)) st->bad_chunks++;
            }
            while (len + got + 1 > cap) cap *= 2;
            out = realloc(out, cap);
            memcpy(out + len, u.out, got);
            len += got;
        }
    }
    size_t got = utf8_stream_finish(&u);
    while (len + got + 1 > cap) cap *= 2;
    out = realloc(out, cap);
    memcpy(out + len, u.out, got);
    len += got;
    out[len] = 0;
    *out_len = len;
    return out;
}

static void check_tokenizer(const tokenizer *t, const char *name) {
    bool spm = tok_get_kind(t) == TOK_KIND_SPM;
    int split_tokens = 0; /* tokens whose piece is not complete UTF-8 on its own */
    for (size_t k = 0; k < sizeof TEXTS / sizeof TEXTS[0]; k++) {
        const char *text = TEXTS[k];
        int32_t *ids = NULL;
        size_t n = 0;
        wick_error e = {0};
        if (tok_encode(t, text, strlen(text), false, true, &ids, &n, &e) != 0) {
            CHECK_MSG(false, "%s: encode failed: %s", name, e.msg);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            char piece[512];
            int pl = tok_piece(t, ids[i], piece, sizeof piece);
            if (pl > 0 && pl <= (int)sizeof piece && !valid_utf8((unsigned char *)piece, (size_t)pl))
                split_tokens++;
        }
        size_t dlen = 0;
        char *dec = tok_decode_len(t, ids, n, false, &dlen, &e);
        CHECK_MSG(dec != NULL, "%s: decode failed: %s", name, e.msg);
        for (size_t mode = 0; mode < 3 && dec; mode++) {
            size_t at_once = mode == 0 ? 0 : mode == 1 ? 1 : 2;
            stream_stats st = {0};
            size_t slen;
            char *s = stream(t, ids, n, at_once, &slen, &st);
            CHECK_MSG(st.bad_chunks == 0, "%s: \"%s\" (%zu bytes per push): %d chunks are not complete UTF-8",
                      name, text, at_once, st.bad_chunks);
            CHECK_MSG(st.pending_max <= 3, "%s: the stream held %d bytes", name, st.pending_max);
            /* SentencePiece: the first piece keeps its space in a stream; the decoder drops it */
            const char *cmp = s;
            size_t clen = slen;
            if (spm && clen == dlen + 1 && cmp[0] == ' ') cmp++, clen--;
            bool same = clen == dlen && memcmp(cmp, dec, dlen) == 0;
            CHECK_MSG(same, "%s: streamed \"%s\" != decoded \"%s\"", name, s, dec);
            CHECK_MSG(strstr(s, "\xef\xbf\xbd") == NULL, "%s: U+FFFD in the stream of \"%s\"", name, text);
            free(s);
        }
        free(dec);
        free(ids);
    }
    /* the test is only meaningful when some tokens do end inside a character */
    CHECK_MSG(split_tokens > 0, "%s: no token piece ends inside a character", name);
}

static tokenizer *load_hf(const char *rel) {
    const char *p = shared_path(rel);
    if (!p) return NULL;
    wick_error e = {0};
    tokenizer *t = tok_load_hf_dir(p, &e);
    CHECK_MSG(t != NULL, "load %s: %s", rel, e.msg);
    return t;
}

static void test_qwen3(void) {
    tokenizer *t = load_hf("tokenizers/qwen3");
    if (!t) SKIP("qwen3 tokenizer not found");
    check_tokenizer(t, "qwen3");
    tok_free(t);
}

static void test_stories_hf(void) {
    tokenizer *t = load_hf("models/stories260K/hf");
    if (!t) SKIP("stories260K hf not found");
    check_tokenizer(t, "stories260K hf");
    tok_free(t);
}

static void test_stories_gguf(void) {
    const char *p = shared_path("models/stories260K/stories260K-f32.gguf");
    if (!p) SKIP("stories260K gguf not found");
    wick_error e = {0};
    gguf_file *f = gguf_open(p, &e);
    CHECK_MSG(f != NULL, "%s", e.msg);
    if (!f) return;
    tokenizer *t = tok_load_gguf(f, &e);
    gguf_close(f);
    CHECK_MSG(t != NULL, "%s", e.msg);
    if (!t) return;
    check_tokenizer(t, "stories260K gguf");
    tok_free(t);
}

/* Random strings of multi-byte characters: the same properties. */
static uint64_t rs = 0x243F6A8885A308D3ull;
static uint32_t rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)rs;
}

static void test_random(void) {
    tokenizer *ts[2] = {load_hf("tokenizers/qwen3"), load_hf("models/stories260K/hf")};
    if (!ts[0] && !ts[1]) SKIP("shared tokenizers not found");
    if (!ts[0] && !shared_path("tokenizers/qwen3")) SKIP_PART("random strings through qwen3: tokenizers/qwen3 not found");
    if (!ts[1] && !shared_path("models/stories260K/hf"))
        SKIP_PART("random strings through stories260K: models/stories260K/hf not found");
    static const uint32_t ranges[][2] = {{0x4E00, 0x9FFF}, {0x1F300, 0x1FAFF}, {0x3040, 0x30FF},
                                         {0xAC00, 0xD7A3}, {0x0400, 0x04FF}, {0x20, 0x7E},
                                         {0x20000, 0x2A6DF}, {0x0300, 0x036F}};
    for (int it = 0; it < 200; it++) {
        char buf[400];
        size_t n = 0;
        int chars = 1 + (int)(rnd() % 40);
        for (int c = 0; c < chars; c++) {
            const uint32_t *r = ranges[rnd() % (sizeof ranges / sizeof ranges[0])];
            uint32_t cp = r[0] + rnd() % (r[1] - r[0] + 1);
            if (cp < 0x80) buf[n++] = (char)cp;
            else if (cp < 0x800) buf[n++] = (char)(0xC0 | (cp >> 6)), buf[n++] = (char)(0x80 | (cp & 0x3F));
            else if (cp < 0x10000)
                buf[n++] = (char)(0xE0 | (cp >> 12)), buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F)),
                buf[n++] = (char)(0x80 | (cp & 0x3F));
            else
                buf[n++] = (char)(0xF0 | (cp >> 18)), buf[n++] = (char)(0x80 | ((cp >> 12) & 0x3F)),
                buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F)), buf[n++] = (char)(0x80 | (cp & 0x3F));
        }
        for (int k = 0; k < 2; k++) {
            const tokenizer *t = ts[k];
            if (!t) continue;
            int32_t *ids = NULL;
            size_t m = 0;
            wick_error e = {0};
            if (tok_encode(t, buf, n, false, false, &ids, &m, &e) != 0) {
                CHECK_MSG(false, "encode: %s", e.msg);
                continue;
            }
            size_t dlen = 0, slen = 0;
            char *dec = tok_decode_len(t, ids, m, false, &dlen, &e);
            stream_stats st = {0};
            char *s = stream(t, ids, m, (size_t)(it % 3), &slen, &st);
            const char *cmp = s;
            if (k == 1 && slen == dlen + 1 && s[0] == ' ') cmp++, slen--;
            CHECK(st.bad_chunks == 0);
            CHECK(dec && slen == dlen && memcmp(cmp, dec, dlen) == 0);
            free(s);
            free(dec);
            free(ids);
        }
    }
    tok_free(ts[0]);
    tok_free(ts[1]);
}

int main(void) {
    RUN(test_qwen3);
    RUN(test_stories_hf);
    RUN(test_stories_gguf);
    RUN(test_random);
    return check_summary("test_detok_stream");
}
