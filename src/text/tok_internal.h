/* tok_internal.h — the tokenizer object shared by src/text/tok*.c, bpe.c,
 * pretokenize.c, normalize.c, byte_level.c, utf8.c, wordpiece.c. Not a public header.
 *
 * Invariants of a finalized tokenizer (tok_finalize):
 *  - ids are [0, n_vocab); every id has a type (TT_*); ids never given a string
 *    by the loader are TT_UNUSED with an empty string and are not in the map;
 *  - text of id i is arena[off[i] .. off[i]+len[i]) followed by a NUL;
 *  - the string map returns the highest id for a duplicated string;
 *  - merges (rank mode) map an id pair to (rank, result id); rank = insertion order;
 *  - specials[] lists the added tokens matched in raw text (control, unknown,
 *    user-defined, not TF_NORMALIZED), nspecials[] those matched in normalized text
 *    (by their normalized content); each grouped by first byte, longest first;
 *  - decs[] is never empty: the source's decoder, or one inferred from the model.
 * The encoding pipeline is data: normalizer steps, then pre-tokenizer steps, then
 * the model (byte-level BPE, rank BPE over chars with byte fallback, score BPE, or
 * WordPiece, which does its own BERT splitting instead of the pre-tokenizer steps).
 * encode.c runs it over a text in parts that end where each stage provably starts
 * afresh, so that a limit on the ids can stop it early. */
#ifndef WICK_TEXT_TOK_INTERNAL_H
#define WICK_TEXT_TOK_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "text/tokenizer.h"

/* GGUF token types (llama.cpp numbering). */
enum { TT_UNDEF = 0, TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER = 4, TT_UNUSED = 5,
       TT_BYTE = 6 };

/* per-token flags for added/special-token matching (Hugging Face AddedToken):
 * LSTRIP/RSTRIP take the whitespace on that side into the token; SINGLE_WORD
 * matches only with no word character (\w: letter, mark, number, '_') right
 * before or after; NORMALIZED matches in the normalized text against the
 * normalized content instead of in the raw text. */
enum { TF_LSTRIP = 1, TF_RSTRIP = 2, TF_SINGLE_WORD = 4, TF_NORMALIZED = 8 };

/* ---- normalizer steps ---- */
typedef enum tok_norm_kind {
    NORM_NFC,
    NORM_NFD,
    NORM_NFKC,
    NORM_NFKD,
    NORM_LOWERCASE,
    NORM_PREPEND, /* a = text to prepend to a non-empty string */
    NORM_REPLACE, /* every occurrence of a -> b (a non-empty) */
    NORM_STRIP,   /* strip whitespace: left if flag1, right if flag2 */
} tok_norm_kind;

typedef struct tok_norm {
    tok_norm_kind kind;
    char *a, *b;
    size_t alen, blen;
    bool flag1, flag2;
} tok_norm;

/* ---- pre-tokenizer steps ---- */
typedef enum tok_pre_kind {
    PRE_SPLIT,     /* regex split with a behavior */
    PRE_BYTELEVEL, /* optional prefix space + optional GPT-2 regex; marks byte-level */
    PRE_METASPACE, /* ' ' -> replacement, prepend per scheme, optional split */
    PRE_DIGITS,    /* isolate digits (individually or in runs) */
} tok_pre_kind;

typedef enum tok_split_behavior {
    SPLIT_ISOLATED,
    SPLIT_REMOVED,
    SPLIT_MERGED_PREV,
    SPLIT_MERGED_NEXT,
    SPLIT_CONTIGUOUS,
} tok_split_behavior;

typedef enum tok_prepend_scheme { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER } tok_prepend_scheme;

typedef struct tok_pre {
    tok_pre_kind kind;
    char *pattern; /* PRE_SPLIT: regex source (PCRE2 syntax); PRE_METASPACE: replacement */
    bool pattern_is_regex; /* PRE_SPLIT: false = literal string pattern */
    pcre2_code *re;
    tok_split_behavior behavior;
    bool invert;
    bool add_prefix_space; /* BYTELEVEL */
    bool use_regex;        /* BYTELEVEL */
    tok_prepend_scheme prepend; /* METASPACE */
    bool split;                 /* METASPACE */
    bool individual_digits;     /* DIGITS */
} tok_pre;

/* ---- decoder steps (Hugging Face decoders, run over the list of token strings) ---- */
typedef enum tok_dec_kind {
    DEC_REPLACE,       /* in every token string, a -> b */
    DEC_BYTE_FALLBACK, /* runs of <0xXX> tokens -> their bytes (one U+FFFD per byte if invalid) */
    DEC_FUSE,          /* join all into one string */
    DEC_STRIP,         /* from every string: up to start leading, stop trailing chars a */
    DEC_METASPACE,     /* a (U+2581) -> ' '; in the first string dropped when prepend */
    DEC_BYTE_LEVEL,    /* GPT-2 byte map undone over the joined strings, lossy UTF-8 */
} tok_dec_kind;

typedef struct tok_dec {
    tok_dec_kind kind;
    char *a, *b;
    size_t alen, blen;
    int start, stop; /* STRIP */
    bool prepend;    /* METASPACE: prepend_scheme is not "never" */
} tok_dec;

/* ---- the model ---- */
typedef enum tok_model {
    MODEL_BPE_RANK,  /* merges by rank over initial symbols (bytes or chars) */
    MODEL_BPE_SCORE, /* llama.cpp SPM: merge the adjacent pair whose string has the best score */
} tok_model;

struct wick_tokenizer {
    tok_kind kind;
    tok_model model;
    int n_vocab;

    /* token strings */
    char *arena;
    size_t arena_len, arena_cap;
    uint32_t *off, *len;
    float *scores; /* n_vocab; 0 unless the source had scores */
    uint8_t *type; /* TT_* */
    uint8_t *flags; /* TF_* */

    /* string -> id */
    int32_t *map_ids; /* -1 = empty; at most 3/4 full */
    uint32_t *map_hash;
    size_t map_cap; /* power of two */

    /* merges */
    int n_merges;
    size_t merges_cap;
    int32_t *merge_a, *merge_b, *merge_res; /* by rank */
    int32_t *mslots; /* pair (merge_a, merge_b) -> rank; -1 = empty; at most 3/4 full */
    size_t mcap;     /* power of two */

    /* special ids */
    int32_t bos, eos, unk, pad;
    bool add_bos, add_eos;
    char *chat_template;
    /* Streamed bytes of every token (tok_piece), built once by tok_finalize:
     * token id's piece is piece_buf[piece_off[id] .. piece_off[id + 1]). */
    char *piece_buf;
    uint32_t *piece_off;
    int32_t eog[8]; /* end-of-generation ids (tok_finalize) */
    int n_eog;

    /* tokens matched in raw text */
    int32_t *specials;
    int n_specials;
    int special_start[257]; /* specials of first byte c: [special_start[c], special_start[c+1]) */

    /* pipeline */
    tok_norm *norms;
    int n_norms;
    tok_pre *pres;
    int n_pres;
    bool byte_level;    /* model input is GPT-2 byte-mapped */
    bool byte_fallback; /* unknown chars -> <0xXX> tokens */
    bool fuse_unk;
    bool ignore_merges; /* a whole piece that is a token is emitted as is */

    /* tokens with TF_NORMALIZED, matched in normalized text: their content
     * normalized (tok_finalize), grouped by first byte, longest first */
    int32_t *nspecials;
    char **nspecial_text;
    size_t *nspecial_len;
    int n_nspecials;
    int nspecial_start[257];

    /* decoding: the decoder steps (tok_finalize fills the default chain
     * from byte_level / strip_leading_space when a loader set none) */
    tok_dec *decs;
    int n_decs;
    bool strip_leading_space; /* SentencePiece: the decoder drops one leading ' ' */
    bool clean_spaces;        /* informational (clean_up_tokenization_spaces) */

    /* GGUF facts kept for writers */
    char pre_name[48]; /* tokenizer.ggml.pre; "" if unknown */
    bool add_space_prefix; /* SPM: prefix ' ' (GGUF tokenizer.ggml.add_space_prefix) */

    int32_t byte_ids[256]; /* byte-level: id of the mapped char; SPM: <0xXX> id; -1 if none */

    /* Character bigrams that occur inside some token (non-byte-level only). Between two
     * characters whose bigram is not here no merge can ever happen, so a long piece is
     * cut there and each part merged alone (same result, bounded heap). */
    uint64_t *joints; /* key = (cp1 << 21 | cp2) + 1; 0 = empty */
    size_t joints_cap;
    bool chunking; /* the cut above is exact for this tokenizer */

    uint32_t wpm_max_len; /* WordPiece: the longest token in bytes (tok_wpm_setup) */

    /* Encoding with a limit (encode.c, tok_limit_setup). A bound of 0 means none is known
     * (some step may delete text). */
    size_t max_bytes_per_id;  /* the most input bytes one id stands for */
    size_t max_run_bytes;     /* the most normalized bytes one id stands for */
    uint8_t norm_cut;         /* where input may be cut to normalize it in parts: TOK_NORM_CUT_* */
    uint8_t run_cut;          /* how normalized text may be cut to encode it in parts: TOK_RUN_CUT_* */
    uint8_t regex_ctx;        /* TOK_RUN_CUT_REGEX: characters before a part its regex looks at */
    bool lstrip_added;        /* an added token takes the whitespace before it (lstrip) */
};

/* Where raw text between added tokens may be cut so that normalizing the parts
 * gives the normalized whole: nowhere; at any character; or before a character
 * that no Unicode normalization joins to what precedes it (tok_norm_safe_start). */
enum { TOK_NORM_CUT_NONE = 0, TOK_NORM_CUT_ANY = 1, TOK_NORM_CUT_SAFE = 2 };
/* Where normalized text may be cut so that pre-tokenizing and encoding the parts
 * gives the ids of the whole: nowhere; where the first pre-tokenizer regex
 * provably ends a piece (PCRE2 hard partial matching); before a space (Metaspace
 * with split); between two characters that no token joins (BPE with
 * t->chunking, when the whole run is one piece); after a word (WordPiece). */
enum { TOK_RUN_CUT_NONE = 0, TOK_RUN_CUT_REGEX, TOK_RUN_CUT_SPACE, TOK_RUN_CUT_JOINT, TOK_RUN_CUT_WORD };

/* ---- construction (tokenizer.c) ---- */
tokenizer *tok_new(tok_kind kind, wick_error *err);
/* Allocate per-id arrays for n ids (all TT_UNUSED, empty). Grows keep old entries. */
int tok_resize(tokenizer *t, int n, wick_error *err);
/* Set id's string, score, type. */
int tok_set_token(tokenizer *t, int32_t id, const char *s, size_t len, float score, int type,
                  wick_error *err);
/* Build the string -> id map (call after all tokens are set, before merges). */
int tok_build_map(tokenizer *t, wick_error *err);
int32_t tok_find_n(const tokenizer *t, const char *s, size_t len);
/* Append merge (a, b) -> res with the next rank. Duplicate pairs keep the first rank. */
int tok_add_merge(tokenizer *t, int32_t a, int32_t b, int32_t res, wick_error *err);
bool tok_joint_has(const tokenizer *t, uint32_t cp1, uint32_t cp2);
/* Look up a merge; returns rank or -1, *res gets the result id. */
int32_t tok_merge_lookup(const tokenizer *t, int32_t a, int32_t b, int32_t *res);
/* Add pipeline steps (copied). */
int tok_add_norm(tokenizer *t, const tok_norm *n, wick_error *err);
int tok_add_pre(tokenizer *t, const tok_pre *p, wick_error *err);
int tok_add_dec(tokenizer *t, const tok_dec *d, wick_error *err);
/* After tokens, merges, types and steps: byte ids, special list, regexes. */
int tok_finalize(tokenizer *t, wick_error *err);
char *tok_strdup(const char *s);
char *tok_strndup(const char *s, size_t n);
static inline const char *tok_text(const tokenizer *t, int32_t id) { return t->arena + t->off[id]; }

/* ---- growable buffers used while encoding ---- */
typedef struct tok_ids {
    int32_t *v;
    size_t n, cap;
} tok_ids;
int tok_ids_push(tok_ids *a, int32_t id);

typedef struct tok_piece_list {
    char *buf; /* working text */
    size_t len, cap;
    size_t *p; /* pairs (off, len) */
    size_t n, pcap;
} tok_piece_list;

typedef struct bpe_sym {
    int32_t id;
    int32_t prev, next;
    uint32_t off, n; /* bytes of the piece this symbol covers; n = 0 after being merged away */
} bpe_sym;

typedef struct bpe_entry {
    double key; /* smaller first: rank, or -score */
    int32_t left, right;
    uint32_t size;
    int32_t res;
} bpe_entry;

typedef struct tok_scratch {
    tok_piece_list a, b; /* pre-tokenizer ping-pong */
    char *nbuf;          /* normalizer output */
    size_t nlen, ncap;
    char *nbuf2;
    size_t ncap2;
    bpe_sym *syms;
    size_t syms_cap;
    bpe_entry *heap;
    size_t heap_n, heap_cap;
    char *mbuf; /* byte-level mapped piece (ignore_merges lookups) */
    size_t mcap;
    pcre2_match_data *md;
    size_t *seg; /* split segments: (start, end, is_match) triples */
    size_t n_seg, seg_cap;
    /* ids of short pieces already merged in this call (bpe.c): English text
     * repeats its words, and a piece's ids depend only on its bytes */
    struct bpe_cache_slot *cache;
    int32_t *cache_ids;
    size_t cache_ids_n, cache_ids_cap, pieces_seen;
    /* merging may stop once the output holds this many ids (0 = no limit): the
     * caller then knows the text is over its limit */
    size_t id_limit;
} tok_scratch;
void tok_scratch_free(tok_scratch *s);

/* ---- utf8.c ---- */
/* Length of the UTF-8 sequence starting with byte c (1 for invalid lead bytes). */
static inline int tok_utf8_len(unsigned char c) {
    return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
}
/* Returns the length of the valid prefix (== len if all valid). */
size_t tok_utf8_valid_prefix(const char *s, size_t len);
/* A malloc'd copy where each maximal subpart of an ill-formed sequence (a lone
 * invalid byte, or a valid lead byte with the continuation bytes that follow it,
 * cut short) is replaced by one U+FFFD, as Python, Rust and WHATWG decoders do. */
char *tok_utf8_sanitize(const char *s, size_t len, size_t *out_len);
/* The number of bytes of s that are not part of a valid UTF-8 sequence. */
size_t tok_utf8_count_invalid(const char *s, size_t len);
/* Decode one code point from a valid sequence; returns bytes consumed. */
int tok_utf8_decode(const char *s, size_t len, uint32_t *cp);
int tok_utf8_encode(uint32_t cp, char out[4]);

/* ---- byte_level.c ---- */
/* GPT-2's byte -> code point map and its inverse (-1 for code points that are no byte). */
uint32_t tok_byte_to_cp(unsigned char b);
int tok_cp_to_byte(uint32_t cp);
/* The UTF-8 of byte b's mapped code point into out (2 bytes max); returns length. */
int tok_byte_to_utf8(unsigned char b, char out[4]);
/* Append the raw bytes a byte-level token string stands for. Code points outside the
 * map are copied as UTF-8. Returns bytes written (up to cap, full length returned). */
size_t tok_byte_level_unmap(const char *s, size_t len, char *out, size_t cap);

/* ---- normalize.c ---- */
/* Apply t's normalizer steps to text into s->nbuf (s->nlen). */
int tok_normalize(const tokenizer *t, const char *text, size_t len, tok_scratch *s,
                  wick_error *err);
/* The same for a part of a text; start: the part begins the text (Prepend applies). */
int tok_normalize_part(const tokenizer *t, const char *text, size_t len, bool start, tok_scratch *s,
                       wick_error *err);

/* ---- pretokenize.c ---- */
/* Run t's pre-tokenizer steps over text; the result is s->a (pieces into s->a.buf).
 * first: this text starts the input (Metaspace prepend_scheme "first"). */
int tok_pretokenize(const tokenizer *t, const char *text, size_t len, bool first,
                    tok_scratch *s, wick_error *err);
/* The same for text[ctx..len), a part of a run of normalized text; text[0..ctx) is the
 * run's text just before it, which only the first step's regex looks at.
 * cont: the part continues a run whose beginning was pre-tokenized before (no prefix
 * space or Metaspace prefix). more: text follows the part; then only the pieces that
 * it cannot change are made (only a regex first step makes any): *used gets the
 * bytes after ctx that they cover and *started whether any output was made (a
 * ByteLevel prefix space may be all). Without more, *used = len - ctx. */
int tok_pretokenize_part(const tokenizer *t, const char *text, size_t len, size_t ctx, bool first, bool cont,
                         bool more, tok_scratch *s, size_t *used, bool *started, wick_error *err);
int tok_pre_compile(tok_pre *p, wick_error *err);
void tok_pre_free(tok_pre *p);
/* The llama.cpp pre-tokenizer regexes for a GGUF tokenizer.ggml.pre name: fills up to
 * max patterns, returns their count, 0 for an unknown name. */
int tok_gguf_pre_regexes(const char *pre, const char **out, int max);
/* The GGUF pre name whose regex list equals the given one (for writers), or NULL. */
const char *tok_gguf_pre_for_regex(const char *regex);
extern const char *const TOK_REGEX_GPT2;
extern const char *const TOK_REGEX_QWEN2;
extern const char *const TOK_REGEX_LLAMA3;

/* ---- bpe.c ---- */
/* Append the ids of one pre-tokenized piece. */
int tok_bpe_encode_piece(const tokenizer *t, tok_scratch *s, const char *p, size_t n, tok_ids *out,
                     wick_error *err);

/* ---- encode.c ---- */
/* After everything else in tok_finalize: the byte bounds and the cut rules above. */
int tok_limit_setup(tokenizer *t, wick_error *err);
/* Whether raw text may be cut before code point cp for every Unicode normalization
 * form and lowercasing (TOK_NORM_CUT_SAFE): it is a starter that composes with
 * nothing before it, and so are the first characters of its images. */
bool tok_norm_safe_start(uint32_t cp);
/* The most input bytes per output byte of normalizer step kind (NFC/NFD/NFKC/NFKD,
 * lowercase; 1 for the others) as *num / *den. */
void tok_norm_shrink(tok_norm_kind kind, uint32_t *num, uint32_t *den);

/* ---- wordpiece.c ---- */
/* After the tokens and t->unk are set: checks the unknown token, measures the longest token. */
int tok_wpm_setup(tokenizer *t, wick_error *err);
/* Append the WordPiece ids of normalized (NFD) text; uses s->mbuf. */
int tok_wpm_encode(const tokenizer *t, tok_scratch *s, const char *text, size_t len, tok_ids *out,
                   wick_error *err);

#endif
