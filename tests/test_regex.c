/* test_regex.c — the derivative regex engine (src/grammar/regex*.c) against
 * PCRE2 as the independent reference: whole-string matches of fixed and
 * random patterns over random strings (ASCII and multi-byte characters);
 * errors named for constructs with no regular meaning; and the vocabulary
 * trie's token masks against matching every token's bytes one by one;
 * integer and decimal ranges against the numbers' values. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>

#include "check.h"
#include "core/error.h"
#include "grammar/int_range.h"
#include "grammar/num_range.h"
#include "grammar/regex.h"
#include "grammar/token_slices.h"
#include "grammar/token_trie.h"
#include "rng.h"

/* PCRE2's whole-string match of subject: 1, 0, or -1 when PCRE2 refuses the pattern. */
static int pcre_full(const char *pat, const char *subj, size_t n) {
    int ec;
    PCRE2_SIZE eo;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX); /* \u{...}, as ECMAScript */
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_ANCHORED | PCRE2_ENDANCHORED |
                                       PCRE2_DOLLAR_ENDONLY,
                                   &ec, &eo, cc);
    pcre2_compile_context_free(cc);
    if (!re) return -1;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    const int rc = pcre2_match(re, (PCRE2_SPTR)subj, n, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return rc >= 0;
}

static int wick_full(const char *pat, const char *subj, size_t n) {
    rx_store *s = rx_store_new();
    wick_error err = {0};
    const rx_id r = rx_parse(s, pat, strlen(pat), &err);
    const int m = r < 0 ? -1 : rx_matches(s, r, subj, n);
    rx_store_free(s);
    return m;
}

static void agree(const char *pat, const char *subj) {
    const int want = pcre_full(pat, subj, strlen(subj)), got = wick_full(pat, subj, strlen(subj));
    CHECK_MSG(want == got, "/%s/ on \"%s\": pcre2 %d, wick %d", pat, subj, want, got);
}

static void test_fixed(void) {
    static const char *pats[] = {
        "abc", "a|b|c", "a*", "a+b?", "(ab)*c", "[a-c]{2,3}", "[^a]*", "a{0}", "a{3}", "a{2,}", "(a|ab)(c|bcd)",
        "\\d+(\\.\\d+)?", "[\\w-]+@[\\w-]+\\.com", "\\s*x\\s*", "é+", "[à-ÿ]+", "中.文", "[^\"\\\\]*",
        "\\u00e9|\\x41", "\\u{1F600}", "^ab$", "(?:a|b)+", "(?<n>a)b", ".{2}", "[.]", "a\\.b", "x{,3}",
        "[\\d\\s]+", "[^\\d]", "\\D\\W\\S", "(a?){3}", "((a*)*b)*", "[a\\-z]", "[-a]", "[a-]", "[]a]"};
    static const char *subjs[] = {"", "a", "b", "abc", "aaa", "ab", "abcd", "abbcd", "12.5", "1.", "x@y.com",
                                  "  x ", "éé", "àÿ", "中a文", "中\n文", "q\"", "é", "A", "😀", "x{,3}", "1 2",
                                  "aa", "c", "\t", "a.b", "axb", "-", "]", "]a", "z", "a-", "ab", "bab",
                                  "aaab", "ababc", "x"};
    for (size_t i = 0; i < sizeof pats / sizeof *pats; i++)
        for (size_t j = 0; j < sizeof subjs / sizeof *subjs; j++) agree(pats[i], subjs[j]);
}

/* A random pattern over a small alphabet (so matches are frequent). */
static void rand_pattern(char *out, size_t cap, int depth) {
    static const char *atoms[] = {"a", "b", "c", "é", "[ab]", "[^a]", ".", "\\d", "1", "[a-cé]"};
    char l[256] = "", r[256] = "";
    const uint32_t k = depth > 3 ? rnd_u32() % 2 : rnd_u32() % 6;
    switch (k) {
    case 0: case 1: snprintf(out, cap, "%s", atoms[rnd_u32() % 10]); return;
    case 2:
        rand_pattern(l, sizeof l, depth + 1), rand_pattern(r, sizeof r, depth + 1);
        snprintf(out, cap, "%s%s", l, r);
        return;
    case 3:
        rand_pattern(l, sizeof l, depth + 1), rand_pattern(r, sizeof r, depth + 1);
        snprintf(out, cap, "(?:%s|%s)", l, r);
        return;
    case 4: {
        static const char *q[] = {"*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"};
        rand_pattern(l, sizeof l, depth + 1);
        snprintf(out, cap, "(?:%s)%s", l, q[rnd_u32() % 7]);
        return;
    }
    default:
        rand_pattern(l, sizeof l, depth + 1);
        snprintf(out, cap, "(%s)", l);
        return;
    }
}

static void rand_subject(char *out, size_t cap) {
    static const char *ch[] = {"a", "b", "c", "é", "1", "x", "\n"};
    const int n = (int)(rnd_u32() % 7);
    out[0] = 0;
    for (int i = 0; i < n; i++) strncat(out, ch[rnd_u32() % 7], cap - strlen(out) - 1);
}

static void test_random(void) {
    char pat[256], subj[64];
    int mism = 0;
    for (int i = 0; i < 400; i++) {
        rand_pattern(pat, sizeof pat, 0);
        rx_store *s = rx_store_new();
        const rx_id r = rx_parse(s, pat, strlen(pat), NULL);
        CHECK_MSG(r >= 0, "/%s/ refused", pat);
        for (int j = 0; j < 40 && r >= 0; j++) {
            rand_subject(subj, sizeof subj);
            const int want = pcre_full(pat, subj, strlen(subj)), got = rx_matches(s, r, subj, strlen(subj));
            if (want != got && mism++ < 10) fprintf(stderr, "/%s/ on \"%s\": pcre2 %d, wick %d\n", pat, subj, want, got);
            CHECK(want == got);
        }
        rx_store_free(s);
    }
}

static void refused(const char *pat, const char *what) {
    rx_store *s = rx_store_new();
    wick_error err = {0};
    const rx_id r = rx_parse(s, pat, strlen(pat), &err);
    CHECK_MSG(r < 0 && strstr(err.msg, what), "/%s/: %d, \"%s\" (want \"%s\")", pat, r, err.msg, what);
    rx_store_free(s);
}

static void test_errors(void) {
    refused("(a)\\1", "backreference");
    refused("a(?=b)", "lookaround");
    refused("a(?!b)", "lookaround");
    refused("(?<=a)b", "lookaround");
    refused("\\bword", "word boundar");
    refused("(?i)a", "flags");
    refused("*a", "nothing to repeat");
    refused("a**", "nothing to repeat");
    refused("a{2}{3}", "nothing to repeat");
    refused("a++", "possessive");
    refused("(ab", "missing )");
    refused("ab)", "unmatched )");
    refused("[ab", "unterminated");
    refused("[b-a]", "out of order");
    refused("a{3,2}", "out of order");
    refused("a^", "^");
    refused("\\p{L}", "property");
}

/* A vocabulary of random pieces (some multi-byte, some duplicated, some left out). */
typedef struct vocab {
    char piece[3000][8];
} vocab;

static bool vocab_bytes(void *ctx, int32_t id, uint8_t *buf, size_t cap, size_t *len) {
    const vocab *v = ctx;
    if (id % 97 == 5) return false; /* "special" */
    *len = strlen(v->piece[id]);
    if (*len > cap) return false;
    memcpy(buf, v->piece[id], *len);
    return true;
}

static void test_trie_masks(void) {
    static vocab v;
    static const char *ch[] = {"a", "b", "1", "2", "\"", " ", "{", "é"};
    for (int i = 0; i < 3000; i++) {
        v.piece[i][0] = 0;
        const int n = 1 + (int)(rnd_u32() % 3);
        for (int k = 0; k < n; k++) strcat(v.piece[i], ch[rnd_u32() % 8]);
    }
    token_trie *t = token_trie_new(3000, vocab_bytes, &v, NULL);
    CHECK(t != NULL);
    if (!t) return;
    static const char *pats[] = {"[ab]+", "\\d{1,3}", "\"[^\"]*\"", "\\{ *\"a\" *\\}", "é?1+", "(a|b1)*2"};
    uint64_t mask[token_mask_words(3000)];
    for (size_t i = 0; i < sizeof pats / sizeof *pats; i++) {
        rx_store *s = rx_store_new();
        const rx_id r = rx_parse(s, pats[i], strlen(pats[i]), NULL);
        token_trie_mask_regex(t, s, r, mask);
        int bad = 0, allowed = 0;
        for (int32_t id = 0; id < 3000; id++) {
            rx_id x = r;
            for (const char *p = v.piece[id]; *p && x != RX_NOTHING; p++) x = rx_deriv(s, x, (uint8_t)*p);
            const bool want = id % 97 != 5 && x != RX_NOTHING;
            bad += want != token_mask_has(mask, id);
            allowed += want;
        }
        CHECK_MSG(bad == 0, "/%s/: %d tokens wrong of %d allowed", pats[i], bad, allowed);
        CHECK(allowed > 0);
        rx_store_free(s);
    }
    token_trie_free(t);
    /* sliced masks are the same masks */
    static const char *slices[] = {"[ab]{1,2}", "[^\"]{1,3}", "[^{]+"};
    token_slices *ts = token_slices_new(3000, vocab_bytes, &v, slices, 3, NULL);
    t = token_trie_new(3000, vocab_bytes, &v, NULL);
    CHECK(ts != NULL && t != NULL);
    static const char *more[] = {"[ab]+", "[^\"]*\"", "[\\s\\S]*", "[ab1 ]*", "\\d{1,3}", "[^{]*", "a{0,2}b?"};
    uint64_t plain[token_mask_words(3000)];
    for (size_t i = 0; ts && t && i < sizeof more / sizeof *more; i++) {
        rx_store *s = rx_store_new();
        rx_id terms[3];
        const rx_id r = rx_parse(s, more[i], strlen(more[i]), NULL);
        CHECK(r >= 0 && token_slices_terms(ts, s, terms) == 0);
        token_trie_mask_regex(t, s, r, plain);
        token_slices_mask_regex(ts, s, terms, r, mask);
        CHECK_MSG(memcmp(plain, mask, sizeof mask) == 0, "/%s/: sliced mask differs", more[i]);
        rx_store_free(s);
    }
    /* containment */
    rx_store *s = rx_store_new();
    const rx_id a = rx_parse(s, "[a-c]+", 6, NULL), b = rx_parse(s, "[a-z]*", 6, NULL), c = rx_parse(s, "a{1,3}", 6, NULL);
    CHECK(rx_contains(s, b, a) && !rx_contains(s, a, b) && rx_contains(s, a, c) && !rx_contains(s, c, a));
    const rx_id q = rx_parse(s, "[a-z]*\"", 7, NULL);
    CHECK(!rx_contains(s, q, a) && rx_contains_prefixes(s, q, a) && !rx_contains_prefixes(s, c, a));
    rx_store_free(s);
    token_slices_free(ts);
    token_trie_free(t);
}

/* Random bytes as patterns: an expression or a named error, never a crash. */
static void test_garbage(void) {
    static const char alphabet[] = "ab()[]{}|*+?^$.\\-,0123dwsuxkpb:<>=!\xc3\xa9\xff";
    char pat[24];
    int errors = 0;
    for (int i = 0; i < 20000; i++) {
        const int n = (int)(rnd_u32() % sizeof pat);
        for (int k = 0; k < n; k++) pat[k] = alphabet[rnd_u32() % (sizeof alphabet - 1)];
        rx_store *s = rx_store_new();
        wick_error err = {0};
        const rx_id r = rx_parse(s, pat, (size_t)n, &err);
        if (r < 0) {
            errors++;
            CHECK(err.msg[0] != 0);
        } else {
            CHECK(rx_store_ok(s));
            (void)rx_matches(s, r, pat, (size_t)n);
        }
        rx_store_free(s);
    }
    CHECK(errors > 0 && errors < 20000);
}

/* Integer ranges against every integer near the bounds. */
static void test_int_ranges(void) {
    static const int64_t ends[] = {-1000, -101, -100, -99, -10, -9, -1, 0, 1, 9, 10, 99, 100, 101, 999, 1000, 12345};
    const int ne = (int)(sizeof ends / sizeof *ends);
    int wrong = 0;
    for (int i = -1; i < ne; i++)
        for (int j = -1; j < ne; j++) {
            const bool has_lo = i >= 0, has_hi = j >= 0;
            const int64_t lo = has_lo ? ends[i] : 0, hi = has_hi ? ends[j] : 0;
            rx_store *s = rx_store_new();
            const rx_id r = rx_int_range(s, has_lo, lo, has_hi, hi);
            for (int64_t v = -1300; v <= 13000; v += v > 1200 || v < -1200 ? 37 : 1) {
                char t[32];
                snprintf(t, sizeof t, "%lld", (long long)v);
                const bool want = (!has_lo || v >= lo) && (!has_hi || v <= hi);
                wrong += rx_matches(s, r, t, strlen(t)) != want;
            }
            static const char *never[] = {"-0", "01", "+1", "", "-", "00"};
            for (size_t k = 0; k < sizeof never / sizeof *never; k++) wrong += rx_matches(s, r, never[k], strlen(never[k]));
            rx_store_free(s);
        }
    CHECK_INT(wrong, 0);
    rx_store *s = rx_store_new(); /* far bounds */
    const rx_id big = rx_int_range(s, true, 5, false, 0), neg = rx_int_range(s, false, 0, true, -3);
    CHECK(rx_matches(s, big, "123456789012345678901234567890", 30) && !rx_matches(s, big, "4", 1));
    CHECK(rx_matches(s, neg, "-99999999999999999999999", 24) && !rx_matches(s, neg, "-2", 2));
    CHECK(rx_matches(s, rx_int_range(s, true, INT64_MIN, true, INT64_MAX), "-9223372036854775808", 20));
    rx_store_free(s);
}

/* A random JSON number text without exponent: sign, 1-4 integer digits (or
 * 0), maybe 1-4 fraction digits, drawn near small values. */
static void random_number(char *t, size_t cap) {
    const uint32_t r = rnd_u32();
    int k = 0;
    if (r & 1) t[k++] = '-';
    const int ni = (int)(r >> 1) % 4 + 1;
    if ((r >> 3) % 3 == 0) t[k++] = '0';
    else
        for (int i = 0; i < ni; i++) t[k++] = (char)('0' + (i == 0 ? 1 + rnd_u32() % 9 : rnd_u32() % 10));
    if ((r >> 5) % 2) {
        t[k++] = '.';
        const int nf = (int)(r >> 6) % 4 + 1;
        for (int i = 0; i < nf; i++) t[k++] = (char)('0' + rnd_u32() % 10);
    }
    t[k] = 0;
    (void)cap;
}

/* Number ranges against strtod: an accepted number always lies in the range
 * read as doubles; every number of the drawn shape inside it is accepted
 * (they are short enough that no two round to one double), -0 aside. */
static void test_num_ranges(void) {
    static const double ends[] = {-1000, -12.5, -1, -0.75, -0.1, 0, 0.001, 0.1, 0.5, 1, 2.25, 3, 9.99, 10, 99.5, 1000};
    const int ne = (int)(sizeof ends / sizeof *ends);
    int wrong_in = 0, wrong_out = 0;
    for (int i = -1; i < ne; i++)
        for (int j = -1; j < ne; j++)
            for (int strict = 0; strict < 4; strict++) {
                const bool has_lo = i >= 0, has_hi = j >= 0, ls = strict & 1, hs = strict & 2;
                const double lo = has_lo ? ends[i] : 0, hi = has_hi ? ends[j] : 0;
                rx_store *s = rx_store_new();
                const rx_id r = rx_num_range(s, has_lo, lo, ls, has_hi, hi, hs);
                for (int n = 0; n < 400; n++) {
                    char t[32];
                    random_number(t, sizeof t);
                    if (n < 2 * ne) snprintf(t, sizeof t, "%g", n < ne ? ends[n] : -ends[n - ne]); /* the bounds themselves */
                    const double v = strtod(t, NULL);
                    const bool in = (!has_lo || (ls ? v > lo : v >= lo)) && (!has_hi || (hs ? v < hi : v <= hi));
                    const bool got = r >= 0 && rx_matches(s, r, t, strlen(t));
                    const bool neg_zero = t[0] == '-' && v == 0;
                    if (got && !in) wrong_in++;
                    if (!got && in && !neg_zero) wrong_out++;
                }
                static const char *never[] = {"-0", "01", "+1", "", "-", "1.", ".5", "1e3", "00.5"};
                for (size_t k = 0; k < sizeof never / sizeof *never; k++) wrong_in += r >= 0 && rx_matches(s, r, never[k], strlen(never[k]));
                rx_store_free(s);
            }
    CHECK_INT(wrong_in, 0);
    CHECK_INT(wrong_out, 0);
    rx_store *s = rx_store_new(); /* strict bounds at the next double; tiny and far numbers */
    const rx_id pos = rx_num_range(s, true, 0, true, false, 0, false);
    CHECK(rx_matches(s, pos, "0.5", 3) && !rx_matches(s, pos, "0", 1) && !rx_matches(s, pos, "0.000", 5));
    CHECK(!rx_matches(s, pos, "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001", 326));
    CHECK(rx_matches(s, pos, "123456789012345678901234567890.5", 32));
    CHECK(rx_num_range(s, true, 1e300, false, false, 0, false) == -1);
    CHECK(rx_num_range(s, true, 2, false, true, 1, false) == RX_NOTHING);
    rx_store_free(s);
}

/* Does every string of small's of at most 6 units (of a, b, c, é) lead big
 * to a live state? (Enough to decide the patterns below, whose bounded
 * repeats are at most 5 units.) */
static bool prefixes_by_enumeration(rx_store *s, rx_id big, rx_id small) {
    static const char *units[] = {"a", "b", "c", "é"};
    for (int len = 0; len <= 6; len++) {
        int idx[6] = {0};
        for (;;) {
            char str[32] = "";
            for (int k = 0; k < len; k++) strcat(str, units[idx[k]]);
            if (rx_matches(s, small, str, strlen(str))) {
                rx_id r = big;
                for (size_t k = 0; k < strlen(str) && r != RX_NOTHING; k++) r = rx_deriv(s, r, (uint8_t)str[k]);
                if (r == RX_NOTHING) return false;
            }
            int k = 0;
            while (k < len && ++idx[k] == 4) idx[k++] = 0;
            if (k == len) break;
        }
    }
    return true;
}

/* Prefix containment of a repeat of one character (a vocabulary slice) in
 * a string's terminal, answered from the terms' structure where it can be
 * (repeats, concatenations, alternations) and else by a walk a character
 * at a time, against enumeration. */
static void test_repeat_prefixes(void) {
    static const char *smalls[] = {"[a-c]{1,3}", "[a-c]{2,4}", "(é|a){1,3}", "[ab]{0,2}", "[a-c]+", "(é|a)*"};
    static const char *shapes[] = {"[a-zé]+\"", "[a-zé][a-zé]*\"", "(x|[a-zé]+)\"", "(ab|[a-zé]{0,3})\"",
                                   "[a-z]{2}[a-zé]*\"", "[a-c][a-zé]{0,2}", "(é[a-c]*|b)\"", "a[a-zé]*|[b-c]{0,5}",
                                   "([a-c][0-9])*", "(a[a-zé]*|[bc][a-zé]*)\"", "(a[a-zé]*|[bc][a-z]{0,2})\"",
                                   "(ab|[bcé])[a-zé]*", "(é|a)(é|a|b|c)*\"|[bc][a-c]{0,4}", "(a|bé)*\""};
    int wrong = 0, checked = 0;
    for (size_t i = 0; i < sizeof smalls / sizeof *smalls; i++) {
        for (int v = 0; v < 48 + (int)(sizeof shapes / sizeof *shapes); v++) {
            char big_pat[64];
            if (v < 48) { /* [a-zé]{lo,hi}, with a closing quote or not */
                const int lo = v / 12, hi = lo + v % 12 / 2, tail = v % 2;
                if (hi > 5) continue; /* longer than the enumeration decides */
                snprintf(big_pat, sizeof big_pat, "[a-zé]{%d,%d}%s", lo, hi, tail ? "\"" : "");
            } else {
                snprintf(big_pat, sizeof big_pat, "%s", shapes[v - 48]);
            }
            for (int derived = 0; derived < 2; derived++) { /* the pattern, and its derivative by 'a' */
                rx_store *s = rx_store_new();
                const rx_id small = rx_parse(s, smalls[i], strlen(smalls[i]), NULL);
                rx_id big = rx_parse(s, big_pat, strlen(big_pat), NULL);
                if (derived) big = rx_deriv(s, big, 'a');
                if (big != RX_NOTHING) {
                    const bool want = prefixes_by_enumeration(s, big, small);
                    const bool got = rx_contains_prefixes(s, big, small);
                    if (got != want) printf("  %s in %s%s: %d, want %d\n", smalls[i], big_pat, derived ? " after a" : "", got, want);
                    wrong += got != want;
                    checked++;
                }
                rx_store_free(s);
            }
        }
    }
    CHECK_MSG(wrong == 0, "%d of %d answers wrong", wrong, checked);
}

/* Equal alternations are one term however they were built, so the DFA of a
 * pattern with counted repeats stays small (a hostname's states, not the
 * million terms a store would fill with copies of equal alternations). */
static void test_hash_consing(void) {
    rx_store *s = rx_store_new();
    const rx_id a = rx_literal(s, "ab", 2), b = rx_literal(s, "cd", 2), c = rx_literal(s, "ef", 2);
    const rx_id ab = rx_or(s, a, b);
    (void)rx_or(s, a, c); /* other alternatives filed in between */
    CHECK_INT(rx_or(s, b, a), ab);
    CHECK_INT(rx_or(s, rx_or(s, b, c), a), rx_or(s, a, rx_or(s, c, b)));
    static const char pat[] = "[a-z]([a-z-]{0,61}[a-z])?(\\.[a-z]([a-z-]{0,61}[a-z])?){0,2}";
    const rx_id r = rx_parse(s, pat, strlen(pat), NULL);
    CHECK(r >= 0);
    rx_id seen[4096];
    int n = 0;
    seen[n++] = r;
    for (int i = 0; i < n && n < 4000; i++)
        for (int ch = 0; ch < 256; ch++) {
            const rx_id d = rx_deriv(s, seen[i], (uint8_t)ch);
            int k = 0;
            while (k < n && seen[k] != d) k++;
            if (k == n && n < 4096) seen[n++] = d;
        }
    CHECK_MSG(n < 1000, "%d states", n);
    CHECK(rx_store_ok(s) && rx_store_size(s) < 10000);
    rx_store_free(s);
}

int main(void) {
    RUN(test_fixed);
    RUN(test_random);
    RUN(test_errors);
    RUN(test_trie_masks);
    RUN(test_garbage);
    RUN(test_int_ranges);
    RUN(test_num_ranges);
    RUN(test_hash_consing);
    RUN(test_repeat_prefixes);
    return check_summary("test_regex");
}
