/* tokenizer.h — text <-> token ids for the model families wick loads.
 *
 * Three algorithms:
 *  - byte-level BPE (GPT-2 / Qwen / Llama-3): regex pre-split, bytes mapped to
 *    printable code points, merges by rank. From tokenizer.json (model BPE
 *    without byte_fallback), vocab.json + merges.txt, or GGUF
 *    tokenizer.ggml.model = "gpt2" (pre-split regex chosen by tokenizer.ggml.pre).
 *  - SentencePiece-style BPE with byte fallback (Llama-2, Mistral,
 *    stories260K): spaces become U+2581, a leading U+2581 is prepended, pieces
 *    merge by score (GGUF "llama") or merge rank (tokenizer.json BPE with
 *    byte_fallback), unknown bytes become <0xXX> tokens.
 *  - WordPiece (BERT; GGUF tokenizer.ggml.model = "bert", wordpiece.c): NFD,
 *    accents stripped, lowercased, split at whitespace / punctuation / CJK,
 *    each word cut greedily longest-first; BOS/EOS are [CLS]/[SEP].
 * Added/special tokens are matched in the raw text before the algorithm runs
 * (the special ones only when parse_special), with Hugging Face's lstrip /
 * rstrip / single_word / normalized rules. BOS/EOS rules come from the tokenizer files:
 * tokenizer_config.json add_bos_token / the post_processor, GGUF
 * tokenizer.ggml.add_bos_token. */
#ifndef WICK_TEXT_TOKENIZER_H
#define WICK_TEXT_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/gguf.h"
#include "wick.h"

typedef struct wick_tokenizer tokenizer; /* public name: wick_tokenizer (wick.h) */

typedef enum tok_kind { TOK_KIND_BPE_BYTELEVEL = 0, TOK_KIND_SPM = 1, TOK_KIND_WPM = 2 } tok_kind;

/* A directory with tokenizer.json (+ tokenizer_config.json), or with
 * vocab.json + merges.txt (+ tokenizer_config.json). */
tokenizer *tok_load_hf_dir(const char *dir, wick_error *err);
/* The tokenizer.ggml.* keys of a GGUF file (a model or a vocab-only file). */
tokenizer *tok_load_gguf(const gguf_file *f, wick_error *err);
void tok_free(tokenizer *t);

tok_kind tok_get_kind(const tokenizer *t);
const char *tok_kind_name(const tokenizer *t); /* "byte-level BPE" / "SentencePiece BPE" / "WordPiece" */
int tok_n_vocab(const tokenizer *t);            /* ids are [0, n_vocab) */
int32_t tok_bos(const tokenizer *t);            /* -1 if none */
int32_t tok_eos(const tokenizer *t);            /* -1 if none */
bool tok_adds_bos(const tokenizer *t);          /* add BOS when add_special */
bool tok_adds_eos(const tokenizer *t);
bool tok_is_special(const tokenizer *t, int32_t id); /* control/special token */
/* The chat template from tokenizer_config.json / GGUF tokenizer.chat_template, or NULL. */
const char *tok_chat_template(const tokenizer *t);
/* Replace the chat template with a copy of tmpl (NULL = none); -1 when out of memory. */
int tok_set_chat_template(tokenizer *t, const char *tmpl);
/* Look up a token's id by its exact vocab string; -1 if absent. */
int32_t tok_find(const tokenizer *t, const char *text);
/* End of generation: the EOS id or a token whose text ends a turn
 * (<|im_end|>, <|endoftext|>, <|eot_id|>, <|eom_id|>, <|end|>, <end_of_turn>, <EOT>). */
bool tok_is_eog(const tokenizer *t, int32_t id);
/* The vocabulary string of id as stored (byte-level mapped, or with U+2581);
 * *len (if non-NULL) gets its length. NULL for an id out of range. */
const char *tok_token_text(const tokenizer *t, int32_t id, size_t *len);

/* Encode len bytes of UTF-8 text. add_special: add BOS/EOS per the rules
 * above. parse_special: text of special tokens (e.g. "<|im_start|>") maps to
 * their ids. *ids is malloc'd (caller frees). Returns 0 or -1 with err. */
int tok_encode(const tokenizer *t, const char *text, size_t len, bool add_special,
               bool parse_special, int32_t **ids, size_t *n_ids, wick_error *err);

/* Counters of one tok_encode_limit call, for tests and benchmarks. */
typedef struct tok_encode_stats {
    size_t raw_read;     /* bytes of the (UTF-8-repaired) text that were normalized */
    size_t peak_pending; /* the most normalized text held at once */
    size_t work_bytes;   /* the working buffers' capacity at the end (they only grow), the
                            fixed-size piece cache of bpe.c aside */
    size_t rounds;       /* parts of text normalized */
} tok_encode_stats;

/* tok_encode that gives up as soon as the text is known to need more than max_ids
 * ids (BOS/EOS included): returns 0 (the ids of tok_encode), 1 (too long: no ids,
 * *n_ids gets a lower bound > max_ids on their count) or -1 with err. The text is
 * read in parts of about chunk bytes (0 = the default; tests use 1 to cut it
 * wherever the pipeline allows and SIZE_MAX to take each run between added tokens
 * whole). stats may be NULL. tok_encode is this with max_ids = SIZE_MAX. */
int tok_encode_limit(const tokenizer *t, const char *text, size_t len, bool add_special, bool parse_special,
                     size_t max_ids, size_t chunk, int32_t **ids, size_t *n_ids, tok_encode_stats *stats,
                     wick_error *err);
/* The most input bytes one id can stand for, 0 if unbounded (tok_limit_setup). */
size_t tok_max_bytes_per_id(const tokenizer *t);

/* The raw bytes token `id` stands for: the decoder steps that act on one
 * token applied to it alone (byte-level unmapped, U+2581 -> ' ', <0xXX> -> the
 * byte; no first-token or whole-text rules, no U+FFFD). Writes up to cap bytes
 * into buf and returns the full length (which may exceed cap), or -1 for an
 * id out of range. Not NUL-terminated. */
int tok_piece(const tokenizer *t, int32_t id, char *buf, size_t cap);

/* Decode a whole sequence to text (malloc'd, NUL-terminated, valid UTF-8) with
 * the tokenizer's decoder chain as Hugging Face runs it over the token strings
 * (Replace, ByteFallback, Fuse, Strip, Metaspace, ByteLevel; e.g. SentencePiece
 * drops the leading space of the text); skip_special drops control tokens. */
char *tok_decode(const tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                 wick_error *err);
/* The same, with the length of the text (which may hold NUL bytes) in *len. */
char *tok_decode_len(const tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                     size_t *len, wick_error *err);

/* ---- writing (for test models) ---- */

/* Write the tokenizer.ggml.* keys (model, pre, tokens, scores, token_type,
 * merges, bos/eos ids, add_bos/add_eos, chat_template). The token list is
 * padded with unused [PAD<id>] entries up to n_rows (the embedding's rows). */
int tok_write_gguf(const tokenizer *t, int32_t n_rows, gguf_writer *w, wick_error *err);
/* Write tokenizer.json and tokenizer_config.json into dir. */
int tok_write_hf(const tokenizer *t, const char *dir, wick_error *err);
/* A small deterministic byte-level BPE tokenizer for random test models:
 * 256 byte tokens, n_merges merges learned from a built-in English sample,
 * then the special tokens <|endoftext|> (EOS), <|im_start|>, <|im_end|>, and a
 * ChatML chat template. */
tokenizer *tok_make_synthetic(int n_merges, wick_error *err);

#endif
