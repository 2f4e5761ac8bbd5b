/* testmodel.h — deterministic random-weight models of real shapes, written as
 * GGUF or as an HF directory, for tests and benchmarks (`wick make-test-model`).
 *
 * Weights are drawn per tensor from a PRNG seeded by (seed, role, layer), in
 * the HF (rotate-half) layout; GGUF llama/mistral files get the q/k rows
 * permuted to the interleaved layout exactly as llama.cpp's converter does.
 * So the same seed gives the same model in both formats. Each arch's features
 * are on (testmodel.c's profiles): Granite's multipliers, Gemma's soft-caps,
 * post-norms and sliding layers, Phi-3's fused projections, windows shorter
 * than a test prompt in the small shapes. Mixture-of-experts archs get
 * routers and experts (GGUF: 3-D stacks, expert e's slice equal to the HF
 * file's expert e). Tensors are generated while the file is written, one at
 * a time, so even the many-GB qwen3-moe shape needs little memory. */
#ifndef WICK_CLI_TESTMODEL_H
#define WICK_CLI_TESTMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "wick.h"

typedef struct test_model_params {
    const char *arch;          /* llama | mistral | qwen2 | qwen3 | granite | gemma2 | gemma3 | phi3 |
                                  qwen2moe | qwen3moe | mixtral */
    const char *format;        /* gguf | hf */
    const char *shape;         /* tiny | tiny256 | qwen2.5-0.5b | qwen3-0.6b | qwen3-moe (MoE archs: tiny, tiny256, qwen3-moe) */
    const char *dtype;         /* any type quantize_row writes (K-quants, IQ4_XS: tiny256 or larger) */
    const char *rope_scaling;  /* none | linear | llama3 | longrope (phi3) (NULL = the arch's default:
                                  none, gemma3 linear) */
    const char *tokenizer_dir; /* NULL = a small synthetic byte-level BPE */
    uint64_t seed;
    const char *out;           /* .gguf file or HF directory (created) */
    bool split_experts;        /* GGUF: one 2-D tensor per expert (blk.N.ffn_gate.E.weight), not 3-D stacks */
    const char *mlp_only_layers; /* HF MoE: comma-separated layers that keep a dense FFN (config mlp_only_layers) */
} test_model_params;

int make_test_model(const test_model_params *p, wick_error *err);

/* "tiny, tiny256, qwen2.5-0.5b, qwen3-0.6b" */
const char *test_model_shapes(void);

#endif
