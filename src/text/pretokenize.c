/* pretokenize.c — the pre-tokenizer steps (regex Split, ByteLevel, Metaspace,
 * Digits) that cut normalized text into pieces for the model, and the table of
 * llama.cpp pre-tokenizer regexes selected by GGUF tokenizer.ggml.pre.
 * Regexes are PCRE2 (UTF + UCP, JIT when available); each step runs on every
 * piece of the previous step separately, as in Hugging Face tokenizers.
 *
 * A run of text may also be pre-tokenized in parts as it arrives
 * (tok_pretokenize_part): the first step's regex then scans with PCRE2's hard
 * partial matching, which reports a match only when no further text could
 * change it, so the pieces made so far are exactly those of the whole run. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "text/tok_internal.h"

/* ------------------------------------------------------------ regex table */

const char *const TOK_REGEX_GPT2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
/* the Qwen2 regex as written in its tokenizer.json */
const char *const TOK_REGEX_QWEN2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const TOK_REGEX_LLAMA3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

#define RX_GPT2_LC "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define RX_CJK "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+"
#define RX_PORO " ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{964}\\x{6D4}\\x{60C})]+"
#define RX_LLAMA3_CPP                                                                      \
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" \
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RX_QWEN2_CPP                                                                       \
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" \
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RX_DEEPSEEK_LETTERS                                                         \
    "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}"                    \
    "\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}"        \
    "\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}"                  \
    "\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}"                \
    "\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}"          \
    "\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}"        \
    "\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}"        \
    "\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}"                   \
    "\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}"                  \
    "\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}"        \
    "\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"         \
    "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}"          \
    "\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}"                  \
    "\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}"                   \
    "\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}"         \
    "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}"        \
    "\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}"        \
    "\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}"                       \
    "\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}"                     \
    "\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+"

typedef struct pre_set {
    const char *names; /* '|'-separated GGUF tokenizer.ggml.pre names */
    const char *rx[7];
} pre_set;

static const pre_set PRE_SETS[] = {
    {"default|",
     {"[\\p{P}\\$\\+<=>\\^~\\|]+", RX_GPT2_LC, "\\p{N}+", "[0-9][0-9][0-9]"}},
    {"llama3|llama-v3|llama-bpe|falcon3|dbrx|smaug-bpe|chatglm-bpe|", {RX_LLAMA3_CPP}},
    {"deepseek-llm|",
     {"[\\r\\n]", RX_DEEPSEEK_LETTERS,
      "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
      "\\s+$", RX_CJK, "\\p{N}+"}},
    {"deepseek-v3|",
     {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
      " ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"deepseek-coder|", {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", RX_CJK, "\\p{N}"}},
    {"falcon|", {"[\\p{P}\\$\\+<=>\\^~\\|`]+", RX_GPT2_LC, "[0-9][0-9][0-9]"}},
    {"starcoder|refact|command-r|smollm|codeshell|exaone|minerva-7b|", {"\\p{N}", RX_GPT2_LC}},
    {"gpt-2|phi-2|jina-es|jina-de|gigachat|jina-v1-en|jina-v2-es|jina-v2-de|jina-v2-code|"
     "roberta-bpe|mpt|olmo|jais|",
     {RX_GPT2_LC}},
    {"qwen2|stablelm2|megrez|", {RX_QWEN2_CPP}},
    {"poro-chat|bloom|gpt3-finnish|", {RX_PORO}},
    {"viking|", {RX_PORO, "\\p{N}"}},
    {"tekken|",
     {"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"
      "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|"
      "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"chameleon|",
     {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
      "[\\p{P}!-/:-@\\[-`{-~]", RX_GPT2_LC}},
};

static bool name_in(const char *names, const char *name) {
    size_t n = strlen(name);
    for (const char *p = names; *p;) {
        const char *bar = strchr(p, '|');
        size_t k = bar ? (size_t)(bar - p) : strlen(p);
        if (k == n && memcmp(p, name, n) == 0) return true;
        if (!bar) break;
        p = bar + 1;
    }
    return false;
}

int tok_gguf_pre_regexes(const char *pre, const char **out, int max) {
    if (!pre || !*pre) pre = "default";
    for (size_t i = 0; i < sizeof PRE_SETS / sizeof PRE_SETS[0]; i++) {
        if (!name_in(PRE_SETS[i].names, pre)) continue;
        int n = 0;
        while (n < 7 && PRE_SETS[i].rx[n]) {
            if (n < max) out[n] = PRE_SETS[i].rx[n];
            n++;
        }
        return n < max ? n : max;
    }
    return 0;
}

const char *tok_gguf_pre_for_regex(const char *regex) {
    if (!regex) return NULL;
    if (!strcmp(regex, TOK_REGEX_QWEN2) || !strcmp(regex, RX_QWEN2_CPP)) return "qwen2";
    if (!strcmp(regex, TOK_REGEX_LLAMA3) || !strcmp(regex, RX_LLAMA3_CPP)) return "llama-bpe";
    if (!strcmp(regex, TOK_REGEX_GPT2) || !strcmp(regex, RX_GPT2_LC)) return "gpt-2";
    return NULL;
}

/* ------------------------------------------------------------ compile/free */

int tok_pre_compile(tok_pre *p, wick_error *err) {
    const char *src = NULL;
    uint32_t opts = PCRE2_UTF | PCRE2_UCP;
    switch (p->kind) {
    case PRE_SPLIT:
        src = p->pattern;
        if (!p->pattern_is_regex) opts = PCRE2_UTF | PCRE2_LITERAL;
        if (!src || !*src) return wick_fail(err, "tokenizer: empty Split pattern");
        break;
    case PRE_BYTELEVEL:
        if (p->use_regex) src = TOK_REGEX_GPT2;
        break;
    case PRE_DIGITS:
        src = p->individual_digits ? "\\p{N}" : "\\p{N}+";
        break;
    case PRE_METASPACE:
        if (!p->pattern || !*p->pattern) return wick_fail(err, "tokenizer: empty Metaspace replacement");
        break;
    }
    if (!src) return 0;
    int ec;
    PCRE2_SIZE eo;
    p->re = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
    if (!p->re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return wick_fail(err, "tokenizer: bad pre-tokenizer regex at offset %zu: %s", (size_t)eo,
                         (const char *)msg);
    }
    /* optional: the interpreter is the fallback; partial mode serves tok_pretokenize_part */
    pcre2_jit_compile(p->re, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD);
    return 0;
}

void tok_pre_free(tok_pre *p) {
    if (p->re) pcre2_code_free(p->re);
    free(p->pattern);
    p->re = NULL;
    p->pattern = NULL;
}

/* ------------------------------------------------------------ piece lists */

static int pl_reserve_buf(tok_piece_list *l, size_t need) {
    return GROW_ARRAY(l->buf, need, &l->cap) ? 0 : -1;
}

static int pl_push(tok_piece_list *l, size_t off, size_t len) {
    if (!grow_array(&l->p, 2 * sizeof *l->p, l->n + 1, &l->pcap)) return -1; /* (offset, length) pairs */
    l->p[2 * l->n] = off;
    l->p[2 * l->n + 1] = len;
    l->n++;
    return 0;
}

/* append bytes to l->buf */
static int pl_append(tok_piece_list *l, const char *s, size_t n) {
    if (pl_reserve_buf(l, l->len + n + 1)) return -1;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    return 0;
}

/* --------------------------------------------------------------- matching */

/* Find the next match of re in subject[start..n). Returns 1 with [*ms, *me), 0 for none, -1 on
 * error. partial: more text may follow subject[n); then 0 also when a match could use that text. */
static int next_match(const pcre2_code *re, tok_scratch *s, const char *subj, size_t n, size_t start,
                      bool partial, size_t *ms, size_t *me, wick_error *err) {
    if (!s->md) {
        s->md = pcre2_match_data_create(32, NULL);
        if (!s->md) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    }
    uint32_t opt = PCRE2_NO_UTF_CHECK | (partial ? PCRE2_PARTIAL_HARD : 0);
    int rc = pcre2_match(re, (PCRE2_SPTR)subj, n, start, opt, s->md, NULL);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(re, (PCRE2_SPTR)subj, n, start, opt | PCRE2_NO_JIT, s->md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL) return 0;
    if (rc < 0) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(rc, msg, sizeof msg);
        return wick_fail(err, "tokenizer: regex match failed: %s", (const char *)msg);
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
    *ms = ov[0];
    *me = ov[1];
    return 1;
}

static int push_seg(tok_scratch *s, size_t a, size_t b, bool is_match) {
    if (!grow_array(&s->seg, 3 * sizeof *s->seg, s->n_seg + 1, &s->seg_cap)) return -1; /* triples */
    s->seg[3 * s->n_seg] = a;
    s->seg[3 * s->n_seg + 1] = b;
    s->seg[3 * s->n_seg + 2] = is_match;
    s->n_seg++;
    return 0;
}

/* Where a subject that more text will follow ends for partial matching: before
 * its trailing line breaks, so that a "$" or "\Z" can never match before a
 * final newline that is not final in the whole text (PCRE2 10.42 reports a
 * partial match there itself; this does not depend on it). */
static size_t partial_end(const char *subj, size_t from, size_t n) {
    for (;;) {
        unsigned char c = n > from ? (unsigned char)subj[n - 1] : 0;
        if (c >= 0x0A && c <= 0x0D) n--;
        else if (n >= from + 2 && c == 0x85 && (unsigned char)subj[n - 2] == 0xC2) n -= 2; /* U+0085 */
        else if (n >= from + 3 && (c == 0xA8 || c == 0xA9) && (unsigned char)subj[n - 2] == 0x80 &&
                 (unsigned char)subj[n - 3] == 0xE2)
            n -= 3; /* U+2028, U+2029 */
        else return n;
    }
}

/* Split each piece of in by re with the given behavior (Hugging Face's
 * SplitDelimiterBehavior); the text is unchanged.
 * With ctx > 0 or more, in holds one piece, preceded in in->buf by ctx bytes of
 * the text before it (the subject starts there, so lookbehinds, \b and ^ see it).
 * more: text follows the piece; only the pieces that it cannot change are made,
 * and *used gets the bytes of the piece they cover (all of it without more). */
static int step_split(const pcre2_code *re, tok_split_behavior beh, bool invert, tok_piece_list *in,
                      tok_piece_list *out, tok_scratch *s, size_t ctx, bool more, size_t *used,
                      wick_error *err) {
    out->n = 0;
    out->len = 0;
    if (pl_append(out, in->buf, in->len)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    for (size_t i = 0; i < in->n; i++) {
        size_t po = in->p[2 * i], pn = in->p[2 * i + 1];
        const char *subj = in->buf + po - ctx;
        size_t n = ctx + pn, end = more ? partial_end(subj, ctx, n) : n;
        size_t base = po - ctx; /* subject offsets -> buffer offsets */
        /* 1. segments: gaps and matches, in order, each non-empty */
        s->n_seg = 0;
        size_t pos = ctx, start = ctx;
        while (start <= end) {
            size_t ms = 0, me = 0;
            int r = next_match(re, s, subj, end, start, more, &ms, &me, err);
            if (r < 0) return -1;
            if (r == 0) break;
            if (me == ms) { /* empty match: step over one character */
                if (ms >= end) break;
                start = ms + (size_t)tok_utf8_len((unsigned char)subj[ms]);
                continue;
            }
            if (ms > pos && push_seg(s, pos, ms, invert)) goto oom;
            if (push_seg(s, ms, me, !invert)) goto oom;
            pos = start = me;
        }
        /* the text after the last match: a gap, unless more text may extend it */
        if (!more && n > pos && push_seg(s, pos, n, invert)) goto oom;
        /* 2. combine them */
        size_t first = out->n;
        bool prev_match = false;
        for (size_t k = 0; k < s->n_seg; k++) {
            size_t a = s->seg[3 * k], b = s->seg[3 * k + 1];
            bool m = s->seg[3 * k + 2] != 0;
            bool extend = false; /* extend the last output piece of this input piece to b */
            switch (beh) {
            case SPLIT_REMOVED:
                if (m) {
                    prev_match = m;
                    continue;
                }
                break;
            case SPLIT_ISOLATED: break;
            case SPLIT_CONTIGUOUS: extend = m == prev_match && out->n > first; break;
            case SPLIT_MERGED_PREV: extend = m && !prev_match && out->n > first; break;
            case SPLIT_MERGED_NEXT:
                /* a match joins the following piece when that one is not a match */
                if (m && k + 1 < s->n_seg && !s->seg[3 * (k + 1) + 2]) {
                    s->seg[3 * (k + 1)] = a;
                    prev_match = m;
                    continue;
                }
                break;
            }
            if (extend)
                out->p[2 * (out->n - 1) + 1] = base + b - out->p[2 * (out->n - 1)];
            else if (pl_push(out, base + a, b - a))
                goto oom;
            prev_match = m;
        }
        size_t done = n;
        if (more) {
            /* every segment up to the last match is final; a behavior that joins
             * segments may still grow the last piece, so that one waits too */
            done = pos;
            if (beh != SPLIT_ISOLATED && beh != SPLIT_REMOVED) {
                done = ctx;
                if (out->n > first) done = out->p[2 * (--out->n)] - base;
            }
        }
        if (used) *used = done - ctx;
    }
    return 0;
oom:
    return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
}

/* Metaspace: ' ' -> replacement, prepend per scheme, optional split before each replacement.
 * cont: the one input piece continues a run whose start was pre-tokenized before (no prefix). */
static int step_metaspace(const tok_pre *p, bool first, bool cont, tok_piece_list *in, tok_piece_list *out,
                          wick_error *err) {
    const char *rep = p->pattern;
    size_t rl = strlen(rep);
    out->n = 0;
    out->len = 0;
    for (size_t i = 0; i < in->n; i++) {
        size_t po = in->p[2 * i], pn = in->p[2 * i + 1];
        const char *src = in->buf + po;
        size_t start = out->len;
        bool prepend = !cont && (p->prepend == PREPEND_ALWAYS || (p->prepend == PREPEND_FIRST && first && i == 0));
        /* no prefix when the piece already starts with the replacement (a leading
         * space becomes one) */
        if (prepend && !(pn >= rl && memcmp(src, rep, rl) == 0) && !(pn >= 1 && src[0] == ' ')) {
            if (pl_append(out, rep, rl)) goto oom;
        }
        for (size_t k = 0; k < pn; k++) {
            if (src[k] == ' ') {
                if (pl_append(out, rep, rl)) goto oom;
            } else if (pl_append(out, src + k, 1)) {
                goto oom;
            }
        }
        size_t end = out->len;
        if (!p->split) {
            if (end > start && pl_push(out, start, end - start)) goto oom;
            continue;
        }
        /* split so that every replacement starts a new piece */
        size_t ps = start;
        for (size_t k = start; k + rl <= end; k++) {
            if (k > ps && memcmp(out->buf + k, rep, rl) == 0) {
                if (pl_push(out, ps, k - ps)) goto oom;
                ps = k;
            }
        }
        if (end > ps && pl_push(out, ps, end - ps)) goto oom;
    }
    return 0;
oom:
    return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
}

/* ByteLevel add_prefix_space: prepend ' ' to every piece that does not start with one. */
static int step_prefix_space(tok_piece_list *in, tok_piece_list *out, wick_error *err) {
    out->n = 0;
    out->len = 0;
    for (size_t i = 0; i < in->n; i++) {
        size_t po = in->p[2 * i], pn = in->p[2 * i + 1];
        size_t start = out->len;
        if ((pn == 0 || in->buf[po] != ' ') && pl_append(out, " ", 1)) goto oom;
        if (pl_append(out, in->buf + po, pn)) goto oom;
        if (pl_push(out, start, out->len - start)) goto oom;
    }
    return 0;
oom:
    return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
}

static void swap_lists(tok_scratch *s) {
    tok_piece_list t = s->a;
    s->a = s->b;
    s->b = t;
}

int tok_pretokenize(const tokenizer *t, const char *text, size_t len, bool first, tok_scratch *s,
                    wick_error *err) {
    size_t used;
    bool started;
    return tok_pretokenize_part(t, text, len, 0, first, false, false, s, &used, &started, err);
}

int tok_pretokenize_part(const tokenizer *t, const char *text, size_t len, size_t ctx, bool first, bool cont,
                         bool more, tok_scratch *s, size_t *used, bool *started, wick_error *err) {
    if (ctx) cont = true; /* text before the part: the run began earlier */
    *used = more ? 0 : len - ctx;
    *started = !more && len > ctx;
    s->a.n = 0;
    s->a.len = 0;
    if (pl_append(&s->a, text, len) || pl_push(&s->a, ctx, len - ctx))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    if (more && t->n_pres == 0) goto none;
    for (int i = 0; i < t->n_pres; i++) {
        const tok_pre *p = &t->pres[i];
        /* the first step sees the run itself: context, continuation and partial text apply to it */
        size_t hctx = i == 0 ? ctx : 0;
        bool hmore = i == 0 && more, hcont = i == 0 && cont;
        size_t u = 0;
        switch (p->kind) {
        case PRE_SPLIT:
        case PRE_DIGITS:
            if (step_split(p->re, p->kind == PRE_DIGITS ? SPLIT_ISOLATED : p->behavior,
                           p->kind == PRE_SPLIT && p->invert, &s->a, &s->b, s, hctx, hmore, &u, err))
                return -1;
            swap_lists(s);
            if (hmore) {
                *used = u;
                *started = u > 0;
            }
            break;
        case PRE_BYTELEVEL: {
            size_t prefix = 0;
            if (p->add_prefix_space && !hcont) {
                size_t before = s->a.len;
                if (step_prefix_space(&s->a, &s->b, err)) return -1;
                swap_lists(s);
                prefix = s->a.len - before; /* the space put before the run, if any */
            }
            if (p->re) {
                if (step_split(p->re, SPLIT_ISOLATED, false, &s->a, &s->b, s, hctx, hmore, &u, err)) return -1;
                swap_lists(s);
                if (hmore) {
                    *used = u > prefix ? u - prefix : 0;
                    *started = u > 0;
                }
            } else if (hmore) {
                goto none; /* one piece as long as the run */
            }
            break;
        }
        case PRE_METASPACE:
            if (hmore) goto none; /* the caller cuts the run itself (tok_encode_limit) */
            if (step_metaspace(p, first, hcont, &s->a, &s->b, err)) return -1;
            swap_lists(s);
            break;
        }
    }
    return 0;
none:
    s->a.n = 0;
    return 0;
}
