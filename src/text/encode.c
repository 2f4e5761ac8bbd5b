/* encode.c — text to ids (tok_encode, tok_encode_limit) and the facts that a
 * limit on the ids relies on (tok_limit_setup).
 *
 * The text is cut at added tokens, matched in the raw text; each run of text
 * between them goes through the normalizer steps, the added tokens matched in
 * normalized text, the pre-tokenizer steps and the model. A run is taken in
 * parts: raw text is normalized up to a cut where normalization starts afresh
 * (TOK_NORM_CUT_*), then the normalized text is encoded up to a cut where
 * pre-tokenization and merging start afresh (TOK_RUN_CUT_*); the text past the
 * last such cut waits for the next part. Every cut is exact, so the ids are
 * those of the whole text. With a limit, the ids so far plus a lower bound for
 * the rest (its bytes over the most bytes one id stands for) are checked as the
 * text is read, so an over-long text costs about what the limit allows, not
 * what the text holds; an O(1) check of the whole length comes first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/buf.h"
#include "core/error.h"
#include "text/tok_internal.h"

#define CHUNK_DEFAULT ((size_t)16 << 10) /* raw bytes normalized per part */
#define MAX_REGEX_CTX 64                 /* characters of context kept for a lookbehind */

/* ------------------------------------------------------------ characters */

/* Unicode White_Space (what Hugging Face's lstrip/rstrip remove). */
static bool is_uspace(uint32_t cp) {
    return (cp >= 9 && cp <= 13) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

/* A word character as the regex \w of Hugging Face's single_word check: a
 * letter, mark, decimal digit, letter-number, connector punctuation ('_') or
 * a joiner (ZWNJ/ZWJ). */
static bool is_word_cp(uint32_t cp) {
    if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
    if (cp == 0x200C || cp == 0x200D) return true;
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC: return true;
    default: return false;
    }
}

/* Start of the character that ends at s[end) (s valid UTF-8, end > 0). */
static size_t char_start_before(const char *s, size_t end) {
    size_t i = end - 1;
    while (i > 0 && end - i < 4 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    return i;
}

static uint32_t cp_at(const char *s, size_t i, size_t n) {
    uint32_t cp;
    tok_utf8_decode(s + i, n - i, &cp);
    return cp;
}

bool tok_norm_safe_start(uint32_t cp) {
    return cp < 0x80 || (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7) || /* Latin */
           (cp >= 0x391 && cp <= 0x3A9) || (cp >= 0x3B1 && cp <= 0x3C9) ||         /* Greek */
           (cp >= 0x410 && cp <= 0x44F) ||                                           /* Cyrillic */
           (cp >= 0x621 && cp <= 0x64A) ||                                           /* Arabic */
           (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FA) ||     /* kana */
           (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7A3);        /* CJK, Hangul */
}

/* ---------------------------------------------------------- added tokens */

/* A left-to-right search for added tokens, as Hugging Face's AddedVocabulary
 * cuts text: leftmost-longest matches, not overlapping; a single_word token
 * next to a word character is no match (the search goes on after it);
 * lstrip/rstrip take adjacent Unicode whitespace into the token (lstrip never
 * past the plain text's start). normalized: the TF_NORMALIZED tokens
 * (normalized content) instead of the others. parse_special false: only
 * user-defined (non-special) tokens. It advances on demand (scan_to), so a run
 * of text can be encoded before the next token is found. */
typedef struct added_scan {
    const char *s;
    size_t len;
    bool normalized, parse_special;
    size_t pos, frag; /* next position to try; start of the plain text before it */
    bool found;       /* the token [a, b) with id ends the plain text [frag, a) */
    size_t a, b;
    int32_t id;
} added_scan;

static void scan_init(added_scan *sc, const char *s, size_t len, bool normalized, bool parse_special) {
    memset(sc, 0, sizeof *sc);
    sc->s = s;
    sc->len = len;
    sc->normalized = normalized;
    sc->parse_special = parse_special;
}

/* Try the positions before `until` (or up to the first match). */
static void scan_to(const tokenizer *t, added_scan *sc, size_t until) {
    const char *s = sc->s;
    size_t len = sc->len;
    const int *start = sc->normalized ? t->nspecial_start : t->special_start;
    if (until > len) until = len;
    while (!sc->found && sc->pos < until) {
        size_t pos = sc->pos;
        unsigned char c = (unsigned char)s[pos];
        int32_t match = -1;
        size_t mlen = 0;
        for (int k = start[c]; k < start[c + 1]; k++) {
            int32_t id = sc->normalized ? t->nspecials[k] : t->specials[k];
            if (!sc->parse_special && t->type[id] != TT_USER) continue;
            const char *txt = sc->normalized ? t->nspecial_text[k] : tok_text(t, id);
            size_t tl = sc->normalized ? t->nspecial_len[k] : t->len[id];
            if (tl <= len - pos && memcmp(s + pos, txt, tl) == 0) {
                match = id;
                mlen = tl;
                break;
            }
        }
        if (match < 0) {
            sc->pos++;
            continue;
        }
        size_t a = pos, b = pos + mlen;
        uint8_t fl = t->flags[match];
        if ((fl & TF_SINGLE_WORD) &&
            ((a > 0 && is_word_cp(cp_at(s, char_start_before(s, a), len))) || (b < len && is_word_cp(cp_at(s, b, len))))) {
            sc->pos = b; /* not a single word: no match here, and none inside it */
            continue;
        }
        if (fl & TF_LSTRIP) {
            while (a > sc->frag) {
                size_t p = char_start_before(s, a);
                if (!is_uspace(cp_at(s, p, len))) break;
                a = p;
            }
        }
        if (fl & TF_RSTRIP) {
            while (b < len) {
                uint32_t cp;
                int k = tok_utf8_decode(s + b, len - b, &cp);
                if (!is_uspace(cp)) break;
                b += (size_t)k;
            }
        }
        sc->found = true;
        sc->a = a;
        sc->b = b;
        sc->id = match;
    }
}

/* After the plain text before the token found and the token itself: go on after it. */
static void scan_next(added_scan *sc) {
    sc->pos = sc->frag = sc->b;
    sc->found = false;
}

/* ------------------------------------------------------------ the bounds */

/* The most input bytes per output byte of each Unicode normalization form and of
 * lowercasing, as numerator / denominator: over every code point and every
 * composition in utf8proc's tables (NFC: U+1FBE U+0308 U+0301, 7 bytes -> U+0390,
 * 2 bytes; NFKC: U+1D42E U+0308 U+0304, 8 bytes -> U+01D6, 2 bytes; lowercase:
 * the Kelvin sign, 3 bytes -> 'k'). tests/test_tokenize_limit.c recomputes them. */
void tok_norm_shrink(tok_norm_kind kind, uint32_t *num, uint32_t *den) {
    *num = *den = 1;
    switch (kind) {
    case NORM_NFC: *num = 7, *den = 2; break;
    case NORM_NFD: *num = 3; break;
    case NORM_NFKC: *num = 4; break;
    case NORM_NFKD: *num = 4; break;
    case NORM_LOWERCASE: *num = 3; break;
    default: break;
    }
}

static bool is_added_id(const tokenizer *t, int32_t id) {
    uint8_t ty = t->type[id];
    return (ty == TT_CONTROL || ty == TT_USER || ty == TT_UNKNOWN) && t->len[id] > 0;
}

/* t->max_run_bytes (L: the most normalized bytes one id stands for) and
 * t->max_bytes_per_id (B: the most input bytes), both 0 when some step can
 * delete text or one id can stand for a run of any length. Input bytes per
 * normalized byte are at most the product F of the normalizer steps' shrink
 * factors; the pre-tokenizer steps only add text (Metaspace, prefix space) or
 * delete it (Split "Removed"); the model's ids stand for their token's text (the
 * bytes it maps for byte-level BPE), a byte (byte fallback), a character (an
 * unknown one), or nothing (a character it cannot represent: dropped). An added
 * token matched in raw text stands for its own text. So B = max(L * F, longest
 * raw-matched added token), and a text of n bytes needs at least n / B ids. */
static void limit_bounds(tokenizer *t) {
    t->max_bytes_per_id = t->max_run_bytes = 0;
    if (t->kind == TOK_KIND_WPM) return; /* drops characters; one [UNK] for a long word */
    uint64_t fn = 1, fd = 1;
    for (int i = 0; i < t->n_norms; i++) {
        const tok_norm *n = &t->norms[i];
        uint32_t a, b;
        switch (n->kind) {
        case NORM_STRIP: return;
        case NORM_REPLACE:
            if (!n->alen) break;
            if (!n->blen) return;
            if (n->alen > n->blen) fn *= n->alen, fd *= n->blen;
            break;
        default:
            tok_norm_shrink(n->kind, &a, &b);
            fn *= a, fd *= b;
            break;
        }
        if (fn > (1u << 16) || fd > (1u << 16)) return;
    }
    for (int i = 0; i < t->n_pres; i++)
        if (t->pres[i].kind == PRE_SPLIT && t->pres[i].behavior == SPLIT_REMOVED) return;
    /* the bytes that valid UTF-8 holds (the text is repaired first) all have tokens? */
    bool all_bytes = true;
    for (int b = 0; b < 0xF5; b++)
        if (t->byte_ids[b] < 0 && b != 0xC0 && b != 0xC1) all_bytes = false;
    size_t L = 0;
    if (t->byte_level) {
        if (!all_bytes) return; /* a byte without a token is dropped */
    } else if (t->model == MODEL_BPE_SCORE) {
        if (!all_bytes && t->unk < 0) return; /* a byte with neither a token nor <unk> is dropped */
        L = 1;
    } else if (!(t->byte_fallback && all_bytes)) {
        if (t->unk < 0 || t->fuse_unk) return; /* dropped, or one <unk> for a run of them */
        L = 4;                                 /* one <unk> per character */
    }
    for (int32_t id = 0; id < t->n_vocab; id++) {
        if (t->type[id] == TT_UNUSED || !t->len[id]) continue;
        size_t cover = t->len[id];
        if (t->byte_level) {
            cover = tok_byte_level_unmap(tok_text(t, id), t->len[id], NULL, 0);
            if (is_added_id(t, id) && t->len[id] > cover) cover = t->len[id];
        }
        if (cover > L) L = cover;
    }
    for (int k = 0; k < t->n_nspecials; k++) {
        if (t->flags[t->nspecials[k]] & (TF_LSTRIP | TF_RSTRIP)) return; /* takes any whitespace run */
        if (t->nspecial_len[k] > L) L = t->nspecial_len[k];
    }
    size_t S = 0;
    for (int k = 0; k < t->n_specials; k++) {
        int32_t id = t->specials[k];
        if (t->flags[id] & (TF_LSTRIP | TF_RSTRIP)) return;
        if (t->len[id] > S) S = t->len[id];
    }
    if (!L) return;
    uint64_t B = ((uint64_t)L * fn + fd - 1) / fd;
    if (B < S) B = S;
    if (B > (1u << 30)) return;
    t->max_run_bytes = L;
    t->max_bytes_per_id = (size_t)B;
}

static bool single_char(const char *s, size_t n) {
    return n > 0 && (size_t)tok_utf8_len((unsigned char)s[0]) == n && tok_utf8_valid_prefix(s, n) == n;
}

int tok_limit_setup(tokenizer *t, wick_error *err) {
    (void)err;
    limit_bounds(t);

    int nc = TOK_NORM_CUT_ANY;
    for (int i = 0; i < t->n_norms && nc != TOK_NORM_CUT_NONE; i++) {
        const tok_norm *n = &t->norms[i];
        switch (n->kind) {
        case NORM_NFC:
        case NORM_NFD:
        case NORM_NFKC:
        case NORM_NFKD: nc = TOK_NORM_CUT_SAFE; break;
        case NORM_LOWERCASE:
        case NORM_PREPEND: break;
        case NORM_REPLACE: /* one character for another: a cut between characters splits no match */
            if (n->alen && (!n->blen || !single_char(n->a, n->alen))) nc = TOK_NORM_CUT_NONE;
            break;
        case NORM_STRIP: nc = TOK_NORM_CUT_NONE; break; /* what is stripped depends on the whole */
        }
    }
    t->norm_cut = (uint8_t)nc;

    t->lstrip_added = false;
    for (int k = 0; k < t->n_specials; k++)
        if (t->flags[t->specials[k]] & TF_LSTRIP) t->lstrip_added = true;

    /* a Split that removes text may leave a later Metaspace "first" without its first piece */
    bool removes = false, metaspace = false;
    for (int i = 0; i < t->n_pres; i++) {
        if (t->pres[i].kind == PRE_SPLIT && t->pres[i].behavior == SPLIT_REMOVED) removes = true;
        if (t->pres[i].kind == PRE_METASPACE) metaspace = true;
    }
    bool joint = t->chunking && !t->ignore_merges && !t->byte_level;
    int rc = TOK_RUN_CUT_NONE;
    t->regex_ctx = 0;
    if (t->n_nspecials || (removes && metaspace)) {
        rc = TOK_RUN_CUT_NONE;
    } else if (t->kind == TOK_KIND_WPM) {
        rc = TOK_RUN_CUT_WORD;
    } else if (t->n_pres == 0) {
        rc = joint ? TOK_RUN_CUT_JOINT : TOK_RUN_CUT_NONE;
    } else {
        const tok_pre *p = &t->pres[0];
        switch (p->kind) {
        case PRE_SPLIT:
        case PRE_DIGITS:
        case PRE_BYTELEVEL:
            if (p->re) {
                uint32_t lb = 0;
                if (pcre2_pattern_info(p->re, PCRE2_INFO_MAXLOOKBEHIND, &lb) == 0 && lb < MAX_REGEX_CTX) {
                    rc = TOK_RUN_CUT_REGEX;
                    t->regex_ctx = (uint8_t)(lb ? lb : 1); /* one at least: ^ and \A must not match there */
                }
            }
            break;
        case PRE_METASPACE:
            if (single_char(p->pattern, strlen(p->pattern)))
                rc = p->split ? TOK_RUN_CUT_SPACE : (t->n_pres == 1 && joint ? TOK_RUN_CUT_JOINT : TOK_RUN_CUT_NONE);
            break;
        }
    }
    t->run_cut = (uint8_t)rc;
    return 0;
}

size_t tok_max_bytes_per_id(const tokenizer *t) { return t ? t->max_bytes_per_id : 0; }

/* --------------------------------------------------------------- encoding */

typedef struct enc {
    const tokenizer *t;
    tok_scratch s;
    const char *src; /* the text, invalid UTF-8 repaired */
    size_t len;
    bool parse_special;
    size_t eos;     /* 1 when an EOS id follows the text */
    size_t max_ids; /* SIZE_MAX: no limit */
    size_t chunk;
    tok_ids out;
    /* the normalized text of the current run not yet encoded: p[ctx..plen), after ctx
     * bytes of the run's text just before it (TOK_RUN_CUT_REGEX) */
    char *p;
    size_t plen, pcap, ctx;
    size_t lower; /* once over the limit: a lower bound on the ids (> max_ids) */
    tok_encode_stats st;
} enc;

static size_t sat_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

/* ceil(p / L + r / B) without overflow (L, B <= 2^30) */
static size_t lower_ids(size_t p, size_t L, size_t r, size_t B) {
    size_t q = sat_add(p / L, r / B);
    uint64_t frac = (uint64_t)(p % L) * B + (uint64_t)(r % B) * L, lb = (uint64_t)L * B;
    return sat_add(q, (size_t)((frac + lb - 1) / lb));
}

/* Is the text known to need more than max_ids ids, given `pending` normalized bytes
 * not yet encoded and `rest` raw bytes after them? (Each id stands for at most L of
 * the former and B of the latter, so together they need pending / L + rest / B.) */
static bool over_limit(enc *e, size_t pending, size_t rest) {
    if (e->max_ids == SIZE_MAX) return false;
    size_t n = e->out.n + e->eos;
    size_t L = e->t->max_run_bytes, B = e->t->max_bytes_per_id;
    if (L && B) n = sat_add(n, lower_ids(pending, L, rest, B));
    if (n <= e->max_ids) return false;
    e->lower = n;
    return true;
}

/* Encode the pieces the pre-tokenizer left in s->a; 1 once over the limit. */
static int encode_pieces(enc *e, wick_error *err) {
    const tokenizer *t = e->t;
    tok_scratch *s = &e->s;
    for (size_t i = 0; i < s->a.n; i++) {
        size_t po = s->a.p[2 * i], pl = s->a.p[2 * i + 1];
        if (pl == 0) continue;
        if (over_limit(e, pl, 0)) return 1; /* this piece alone would pass it */
        if (tok_bpe_encode_piece(t, s, s->a.buf + po, pl, &e->out, err)) return -1;
        if (over_limit(e, 0, 0)) return 1;
    }
    return 0;
}

/* Encode text[ctx..len) of a run as one part (see tok_pretokenize_part). */
static int encode_part(enc *e, const char *text, size_t len, size_t ctx, bool first, bool cont, bool more,
                       size_t *used, bool *started, wick_error *err) {
    if (e->t->kind == TOK_KIND_WPM) {
        *used = len - ctx;
        *started = len > ctx;
        if (tok_wpm_encode(e->t, &e->s, text + ctx, len - ctx, &e->out, err)) return -1;
        return over_limit(e, 0, 0) ? 1 : 0;
    }
    if (tok_pretokenize_part(e->t, text, len, ctx, first, cont, more, &e->s, used, started, err)) return -1;
    return encode_pieces(e, err);
}

/* A whole run with added tokens matched in its normalized text. */
static int encode_with_nspecials(enc *e, const char *text, size_t len, bool first, wick_error *err) {
    added_scan sc;
    scan_init(&sc, text, len, true, e->parse_special);
    for (;;) {
        scan_to(e->t, &sc, len);
        size_t end = sc.found ? sc.a : len, used;
        bool started;
        if (end > sc.frag) {
            int rc = encode_part(e, text + sc.frag, end - sc.frag, 0, first && sc.frag == 0, false, false, &used,
                                 &started, err);
            if (rc) return rc;
        }
        if (!sc.found) return 0;
        if (tok_ids_push(&e->out, sc.id)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
        if (over_limit(e, 0, 0)) return 1;
        scan_next(&sc);
    }
}

/* TOK_RUN_CUT_SPACE: the last position in p[1..n) before ' ' or the Metaspace
 * replacement, where the pre-tokenizer starts a piece; 0 if none. */
static size_t cut_space(const tokenizer *t, const char *p, size_t n) {
    const char *rep = t->pres[0].pattern;
    size_t rl = strlen(rep);
    for (size_t q = n; q-- > 1;)
        if (p[q] == ' ' || (p[q] == rep[0] && q + rl <= n && memcmp(p + q, rep, rl) == 0)) return q;
    return 0;
}

/* The code point the model sees for the character at p (Metaspace maps ' '). */
static uint32_t model_cp(const tokenizer *t, const char *p, size_t n, const char **bytes, size_t *k) {
    uint32_t cp;
    *k = (size_t)tok_utf8_decode(p, n, &cp);
    *bytes = p;
    if (cp == ' ' && t->n_pres && t->pres[0].kind == PRE_METASPACE) {
        *bytes = t->pres[0].pattern;
        *k = strlen(*bytes);
        tok_utf8_decode(*bytes, *k, &cp);
    }
    return cp;
}

/* TOK_RUN_CUT_JOINT: the last position in p[1..n) between two characters that are
 * tokens and that no token holds together: no merge can join them (bpe.c cuts long
 * pieces there too); 0 if none. */
static size_t cut_joint(const tokenizer *t, const char *p, size_t n) {
    if (n < 2) return 0;
    size_t q = char_start_before(p, n); /* the last character has no known right neighbour */
    const char *b;
    size_t k;
    uint32_t right = model_cp(t, p + q, n - q, &b, &k);
    bool right_known = t->model == MODEL_BPE_SCORE || tok_find_n(t, b, k) >= 0;
    while (q > 0) {
        size_t l = char_start_before(p, q);
        uint32_t left = model_cp(t, p + l, n - l, &b, &k);
        bool left_known = t->model == MODEL_BPE_SCORE || tok_find_n(t, b, k) >= 0;
        if (left_known && right_known && !tok_joint_has(t, left, right)) return q;
        q = l;
        right = left;
        right_known = left_known;
    }
    return 0;
}

/* TOK_RUN_CUT_WORD: the last position in p[1..n) before a space, tab or line break,
 * where WordPiece ends a word; 0 if none. */
static size_t cut_word(const char *p, size_t n) {
    for (size_t q = n; q-- > 1;)
        if (p[q] == ' ' || p[q] == '\t' || p[q] == '\n' || p[q] == '\r') return q;
    return 0;
}

/* Encode the pending normalized text, all of it unless more follows: then up to a
 * cut (TOK_RUN_CUT_*). *used: bytes encoded; *started: output was made (see
 * tok_pretokenize_part). first: the run starts the text; cont: its start was
 * encoded before. */
static int encode_pending(enc *e, bool first, bool cont, bool more, size_t *used, bool *started,
                          wick_error *err) {
    const tokenizer *t = e->t;
    const char *p = e->p;
    size_t ctx = e->ctx, live = e->plen - e->ctx;
    *used = 0;
    *started = false;
    if (!live) return 0;
    if (t->n_nspecials) {
        if (more) return 0;
        *used = live;
        *started = true;
        return encode_with_nspecials(e, p + ctx, live, first, err);
    }
    size_t q = live;
    bool part_more = false;
    if (more) {
        switch (t->run_cut) {
        case TOK_RUN_CUT_REGEX: part_more = true; break;
        case TOK_RUN_CUT_SPACE: q = cut_space(t, p + ctx, live); break;
        case TOK_RUN_CUT_JOINT: q = cut_joint(t, p + ctx, live); break;
        case TOK_RUN_CUT_WORD: q = cut_word(p + ctx, live); break;
        default: q = 0; break;
        }
        if (!q) return 0;
    }
    return encode_part(e, p, ctx + q, ctx, first, cont, part_more, used, started, err);
}

static int reserve_p(enc *e, size_t need) {
    return GROW_ARRAY(e->p, need, &e->pcap) ? 0 : -1;
}

/* Drop the first `used` pending bytes (after `prefix` bytes of ByteLevel prefix space
 * the pre-tokenizer put before them), keeping the last t->regex_ctx characters of the
 * run's text as context. The context is at most the old one plus what is dropped, so
 * the text grows by the prefix at most: the byte reserve_p always adds. */
static void consume(enc *e, size_t used, size_t prefix) {
    const tokenizer *t = e->t;
    size_t K = t->run_cut == TOK_RUN_CUT_REGEX ? t->regex_ctx : 0;
    size_t ctx = e->ctx, live = e->plen - ctx;
    if (!used && !prefix) return;
    char cat[8 * MAX_REGEX_CTX + 8];
    size_t cl = 0, st = 0;
    if (K) {
        /* old context + prefix + the consumed text's last 4K bytes (K characters at least) */
        memcpy(cat, e->p, ctx);
        cl = ctx;
        if (prefix) cat[cl++] = ' ';
        size_t take = used < 4 * K ? used : 4 * K;
        memcpy(cat + cl, e->p + ctx + used - take, take);
        cl += take;
        st = cl;
        for (size_t k = 0; k < K && st > 0; k++) st = char_start_before(cat, st);
    }
    size_t nctx = cl - st;
    memmove(e->p + nctx, e->p + ctx + used, live - used);
    memcpy(e->p, cat + st, nctx);
    e->ctx = nctx;
    e->plen = nctx + live - used;
}

/* May raw text be cut at q (0 < q < len, a character boundary) to normalize it in parts? */
static bool norm_cut_ok(const enc *e, size_t q) {
    const tokenizer *t = e->t;
    const char *s = e->src;
    if (t->norm_cut == TOK_NORM_CUT_NONE) return false;
    /* an lstrip token found later must not reach back over text already normalized */
    if (t->lstrip_added && is_uspace(cp_at(s, char_start_before(s, q), e->len))) return false;
    if (t->norm_cut == TOK_NORM_CUT_ANY) return true;
    uint32_t cp = cp_at(s, q, e->len);
    if (!tok_norm_safe_start(cp)) return false;
    for (int i = 0; i < t->n_norms; i++) {
        const tok_norm *n = &t->norms[i];
        if (n->kind != NORM_REPLACE || !n->alen) continue;
        /* a replaced character could be anything for the normalizer after it: only
         * ASCII, which no step but the replacements changes to a non-ASCII character */
        uint32_t lc = cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
        if (cp >= 0x80 || (n->alen == 1 && ((unsigned char)n->a[0] == cp || (unsigned char)n->a[0] == lc)))
            return false;
    }
    return true;
}

/* The end of the next raw part of the run that began at sc->frag, from r: the first
 * good cut at least `step` bytes on, or the run's end (the next added token, found
 * on the way, or the text's end; *end set). */
static size_t next_cut(enc *e, added_scan *sc, size_t r, size_t step, bool *end) {
    const tokenizer *t = e->t;
    size_t q = step > e->len - r ? e->len : r + step;
    if (t->norm_cut == TOK_NORM_CUT_NONE) q = e->len;
    while (q < e->len && ((unsigned char)e->src[q] & 0xC0) == 0x80) q++;
    for (;;) {
        scan_to(t, sc, q);
        if (sc->found) {
            *end = true;
            return sc->a;
        }
        if (q >= e->len) {
            *end = true;
            return e->len;
        }
        if (norm_cut_ok(e, q)) {
            *end = false;
            return q;
        }
        q += (size_t)tok_utf8_len((unsigned char)e->src[q]);
    }
}

/* Encode the run of plain text that begins at sc->frag and ends at the next added
 * token (sc->found then) or the text's end. */
static int encode_run(enc *e, added_scan *sc, wick_error *err) {
    const tokenizer *t = e->t;
    const size_t a = sc->frag;
    const bool first = a == 0;
    bool cont = false, more = true;
    size_t r = a, step = e->chunk;
    e->plen = e->ctx = 0;
    while (more) {
        bool end;
        size_t q = next_cut(e, sc, r, step, &end);
        more = !end;
        if (q > r) {
            if (over_limit(e, e->plen - e->ctx, e->len - r)) return 1;
            if (tok_normalize_part(t, e->src + r, q - r, r == a, &e->s, err)) return -1;
            if (reserve_p(e, e->plen + e->s.nlen + 1)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
            memcpy(e->p + e->plen, e->s.nbuf, e->s.nlen);
            e->plen += e->s.nlen;
            e->st.raw_read += q - r;
            e->st.rounds++;
            if (e->plen > e->st.peak_pending) e->st.peak_pending = e->plen;
            r = q;
        }
        size_t used;
        bool started;
        const char *live = e->p + e->ctx;
        size_t prefix = 0;
        if (!cont && e->plen > e->ctx && t->n_pres && t->pres[0].kind == PRE_BYTELEVEL &&
            t->pres[0].add_prefix_space && live[0] != ' ')
            prefix = 1; /* the prefix space the first step puts before the run */
        int rc = encode_pending(e, first && !cont, cont, more, &used, &started, err);
        if (rc) return rc;
        if (started) {
            consume(e, used, prefix);
            cont = true;
        }
        /* no cut in the pending text yet: take more text at once next time, so that
         * the text rescanned from the last cut stays in proportion */
        size_t live_n = e->plen - e->ctx;
        step = used ? e->chunk : (live_n > step ? live_n : step);
        if (more && over_limit(e, live_n, e->len - r)) return 1;
    }
    return 0;
}

static size_t scratch_bytes(const enc *e) {
    const tok_scratch *s = &e->s;
    return e->pcap + s->a.cap + s->a.pcap * 2 * sizeof(size_t) + s->b.cap + s->b.pcap * 2 * sizeof(size_t) + s->ncap +
           s->ncap2 + s->syms_cap * sizeof(bpe_sym) + s->heap_cap * sizeof(bpe_entry) + s->mcap +
           s->seg_cap * 3 * sizeof(size_t) + e->out.cap * sizeof(int32_t);
}

int tok_encode_limit(const tokenizer *t, const char *text, size_t len, bool add_special, bool parse_special,
                     size_t max_ids, size_t chunk, int32_t **ids, size_t *n_ids, tok_encode_stats *stats,
                     wick_error *err) {
    *ids = NULL;
    *n_ids = 0;
    if (stats) memset(stats, 0, sizeof *stats);
    if (!text && len) return wick_fail(err, "tok_encode: NULL text");
    size_t bos = add_special && tok_adds_bos(t), eos = add_special && tok_adds_eos(t);
    /* the O(1) check: len bytes need len / B ids at least (repairing UTF-8 only adds bytes) */
    if (max_ids != SIZE_MAX && t->max_bytes_per_id) {
        size_t need = sat_add(len / t->max_bytes_per_id + (len % t->max_bytes_per_id != 0), bos + eos);
        if (need > max_ids) {
            *n_ids = need;
            return 1;
        }
    }
    enc e;
    memset(&e, 0, sizeof e);
    e.t = t;
    e.parse_special = parse_special;
    e.eos = eos;
    e.max_ids = max_ids;
    e.chunk = chunk ? chunk : CHUNK_DEFAULT;
    e.s.id_limit = max_ids == SIZE_MAX ? 0 : max_ids + 1 - eos;
    char *fixed = NULL;
    e.src = text ? text : "";
    e.len = len;
    if (len && tok_utf8_valid_prefix(e.src, len) != len) {
        fixed = tok_utf8_sanitize(e.src, len, &e.len);
        if (!fixed) return wick_fail_code(err, WICK_E_NO_MEMORY, "tok_encode: out of memory");
        e.src = fixed;
    }
    int rc = 0;
    if (bos && tok_ids_push(&e.out, t->bos)) rc = -1;
    added_scan sc;
    scan_init(&sc, e.src, e.len, false, parse_special);
    while (rc == 0) {
        rc = encode_run(&e, &sc, err);
        if (rc || !sc.found) break;
        if (tok_ids_push(&e.out, sc.id)) rc = -1;
        else if (over_limit(&e, 0, e.len - sc.b)) rc = 1;
        scan_next(&sc);
    }
    if (rc == 0 && eos && tok_ids_push(&e.out, t->eos)) rc = -1;
    if (rc == 0 && max_ids != SIZE_MAX && e.out.n > max_ids) { /* BOS/EOS alone, without a byte bound */
        e.lower = e.out.n;
        rc = 1;
    }
    if (stats) {
        e.st.work_bytes = scratch_bytes(&e) + (fixed ? e.len + 1 : 0);
        *stats = e.st;
    }
    tok_scratch_free(&e.s);
    free(e.p);
    free(fixed);
    if (rc) {
        free(e.out.v);
        if (rc == 1) {
            *n_ids = e.lower;
            return 1;
        }
        if (err && !err->msg[0]) wick_fail_code(err, WICK_E_NO_MEMORY, "tok_encode: out of memory");
        return -1;
    }
    if (!e.out.v) {
        e.out.v = malloc(sizeof(int32_t)); /* a valid pointer even for no ids */
        if (!e.out.v) return wick_fail_code(err, WICK_E_NO_MEMORY, "tok_encode: out of memory");
    }
    *ids = e.out.v;
    *n_ids = e.out.n;
    return 0;
}

int tok_encode(const tokenizer *t, const char *text, size_t len, bool add_special, bool parse_special,
               int32_t **ids, size_t *n_ids, wick_error *err) {
    return tok_encode_limit(t, text, len, add_special, parse_special, SIZE_MAX, 0, ids, n_ids, NULL, err);
}
