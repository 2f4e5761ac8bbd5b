/* wordpiece.c — the WordPiece model (BERT; llama.cpp's "WPM"), for GGUF
 * vocabularies with tokenizer.ggml.model = "bert". Owns the BERT text rules
 * and the greedy longest-match-first search; the tokenizer object, the NFD
 * normalizer step and special-token matching live in tokenizer.c /
 * normalize.c.
 *
 * GGUF stores a word-initial piece with a leading U+2581 and a continuation
 * piece ("##xx" in the original vocabulary) bare. Over NFD text (a normalizer
 * step added by the loader), as Hugging Face's BertNormalizer +
 * BertPreTokenizer + WordPiece do it:
 *  - U+0000, U+FFFD and control/format/unassigned/private characters (category
 *    C*, except \t \n \r) are dropped; Unicode whitespace ends a word;
 *  - nonspacing marks (Mn) are dropped (strip accents), the rest lowercased;
 *  - punctuation (ASCII punctuation or category P*) and CJK ideographs are
 *    words of their own;
 *  - each word, U+2581 prefixed, is cut greedily into the longest vocabulary
 *    pieces from the left; a word that cannot be cut completely, or of more
 *    than 100 characters, becomes the unknown token.
 * Work per word is bounded by the longest token (t->wpm_max_len), so encoding
 * is linear in the text. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/buf.h"
#include "core/error.h"
#include "text/tok_internal.h"

#define WPM_MAX_WORD_CHARS 100 /* Hugging Face's max_input_chars_per_word */

static const char META[] = "\xe2\x96\x81"; /* U+2581 */

int tok_wpm_setup(tokenizer *t, wick_error *err) {
    if (t->unk < 0) return wick_fail(err, "WordPiece tokenizer has no unknown token");
    uint32_t m = 0;
    for (int32_t id = 0; id < t->n_vocab; id++)
        if (t->len[id] > m) m = t->len[id];
    t->wpm_max_len = m;
    return 0;
}

static bool is_space(uint32_t cp) {
    return (cp >= 9 && cp <= 13) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

/* The CJK ranges of BERT (as Hugging Face has them, 0x2B920 included). */
static bool is_cjk(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) ||
           (cp >= 0x2B920 && cp <= 0x2CEAF) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

static bool is_punct(uint32_t cp, utf8proc_category_t cat) {
    if (cp < 0x80)
        return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
    return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

static bool is_other(utf8proc_category_t cat) {
    return cat == UTF8PROC_CATEGORY_CN || cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
           cat == UTF8PROC_CATEGORY_CS || cat == UTF8PROC_CATEGORY_CO;
}

static int push(tok_ids *out, int32_t id, wick_error *err) {
    return tok_ids_push(out, id) ? wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory") : 0;
}

/* The word in w[0..len): U+2581 then n_chars characters. */
static int encode_word(const tokenizer *t, const char *w, size_t len, size_t n_chars, tok_ids *out,
                       wick_error *err) {
    if (n_chars == 0) return 0;
    if (n_chars > WPM_MAX_WORD_CHARS) return push(out, t->unk, err);
    size_t mark = out->n, start = 0;
    while (start < len) {
        size_t min_end = start == 0 ? 3 : start; /* the first piece holds a character after U+2581 */
        size_t end = len;
        if (end - start > t->wpm_max_len) {
            end = start + t->wpm_max_len;
            while (end > min_end && ((unsigned char)w[end] & 0xC0) == 0x80) end--;
        }
        int32_t id = -1;
        while (end > min_end) {
            id = tok_find_n(t, w + start, end - start);
            if (id >= 0) break;
            do end--;
            while (end > min_end && ((unsigned char)w[end] & 0xC0) == 0x80);
        }
        if (id < 0) {
            out->n = mark; /* the word as a whole is unknown */
            return push(out, t->unk, err);
        }
        if (push(out, id, err)) return -1;
        start = end;
    }
    return 0;
}

int tok_wpm_encode(const tokenizer *t, tok_scratch *s, const char *text, size_t len, tok_ids *out,
                   wick_error *err) {
    /* the word buffer (s->mbuf): U+2581 + up to WPM_MAX_WORD_CHARS + 1 characters */
    size_t need = 3 + 4 * (WPM_MAX_WORD_CHARS + 1);
    if (!GROW_ARRAY(s->mbuf, need, &s->mcap)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    char *w = s->mbuf;
    memcpy(w, META, 3);
    size_t wl = 3, nch = 0;
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        i += (size_t)tok_utf8_decode(text + i, len - i, &cp);
        if (cp == 0 || cp == 0xFFFD) continue;
        utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)cp);
        if (cp != '\t' && cp != '\n' && cp != '\r' && is_other(cat)) continue;
        if (is_space(cp)) {
            if (encode_word(t, w, wl, nch, out, err)) return -1;
            if (s->id_limit && out->n >= s->id_limit) return 0; /* over the caller's limit: stop */
            wl = 3, nch = 0;
            continue;
        }
        if (cat == UTF8PROC_CATEGORY_MN) continue;
        cp = (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp);
        bool alone = is_punct(cp, utf8proc_category((utf8proc_int32_t)cp)) || is_cjk(cp);
        if (alone) {
            if (encode_word(t, w, wl, nch, out, err)) return -1;
            wl = 3, nch = 0;
        }
        if (nch <= WPM_MAX_WORD_CHARS) wl += (size_t)tok_utf8_encode(cp, w + wl);
        nch++;
        if (alone) {
            if (encode_word(t, w, wl, nch, out, err)) return -1;
            wl = 3, nch = 0;
        }
    }
    return encode_word(t, w, wl, nch, out, err);
}
