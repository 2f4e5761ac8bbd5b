/* usage.c — the text of `wick help`, and each subcommand's usage cut from
 * it: a command's part is its line in the command list and the indented lines
 * under it. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char HELP[] =
    "wick — local LLM inference on the CPU\n"
    "\n"
    "usage: wick <command> [options]     (wick <command> --help: that command's usage)\n"
    "\n"
    "commands:\n"
    "  generate   -m MODEL (-p TEXT | -f FILE) [-n N] [--temp T] [--top-k K] [--top-p P]\n"
    "             [--min-p P] [--repeat-penalty R] [--repeat-last-n N] [--presence-penalty P]\n"
    "             [--frequency-penalty P] [--seed S] [--stop STRING]... [--stream-every K]\n"
    "             [-t THREADS] [--ctx N] [--prefill-chunk N] [--kv-type f32|f16]\n"
    "             [--dtype TYPE] [--json]\n"
    "             [--chat [--system TEXT] [--template NAME]]\n"
    "             Generate text from a prompt, streaming only the new text to stdout.\n"
    "             -n N: tokens to generate (default 128; -1 = until the context is full).\n"
    "             Sampling order: repetition/presence/frequency penalties over the last\n"
    "             --repeat-last-n tokens (default 64), temperature, top-k, top-p, min-p,\n"
    "             then a seeded draw. --temp 0 is greedy and deterministic. Defaults: the\n"
    "             model's generation_config.json, else temp 0.8, top-k 40, top-p 0.95,\n"
    "             min-p 0.05, penalties off. --stop STRING (repeatable) ends generation\n"
    "             before the string (matched across tokens, not printed). --stream-every K\n"
    "             writes text every K tokens instead of every token.\n"
    "             --prefill-chunk N: prompt tokens per forward pass (default 128,\n"
    "             0 = whole prompt; env WICK_PREFILL_CHUNK). --ctx N: context size\n"
    "             (default min(model's, 4096)). -t: threads (default: all cores).\n"
    "             --kv-type: KV cache element type (default f32). --dtype: convert the\n"
    "             weight matrices at load (e.g. run a BF16 checkpoint as Q8_0; env\n"
    "             WICK_DTYPE does the same for every command): f32, f16, bf16, q8_0,\n"
    "             q6_k, q5_k, q5_1, q5_0, q4_k, q4_1, q4_0, iq4_nl, iq4_xs, q3_k, q2_k; a\n"
    "             matrix whose rows are not whole blocks of the type falls back as\n"
    "             llama-quantize does (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K/\n"
    "             Q3_K -> Q4_0, IQ4_XS -> IQ4_NL, else F16).\n"
    "             --json: print one JSON object (text, tokens, prompt_tokens,\n"
    "             finish_reason, timings) instead of streaming. --chat applies the\n"
    "             model's chat template to the prompt as one user message.\n"
    "             Span request: [--prefix TEXT] --span FILE [--span FILE]... -p QUESTION\n"
    "             [--anchor prefix|bos|none] [--positions sequential|shared]\n"
    "             [--blend-first-k K] [--no-span-cache]: each FILE is a document whose KV is\n"
    "             computed after its anchor, cached by content and placed\n"
    "             (docs/caching.md); --json adds segments, cached_tokens, span_cached_tokens.\n"
    "             Speculative decoding: --draft MODEL (same vocabulary) | --draft-layers N\n"
    "             (the model's first N layers) | --lookup N (n-grams of the prompt and\n"
    "             output), [--draft-max K] (1-32, default 8): greedy output unchanged,\n"
    "             sampling keeps the model's distribution; --json adds speculative.\n"
    "             Structured output (docs/grammar.md): --json-schema FILE [--strict]\n"
    "             [--json-ws] | --json-object [--json-ws] | --regex RE | --grammar FILE\n"
    "             (llama.cpp GBNF) | --choice TEXT...: every token is sampled from those\n"
    "             the grammar allows, and the output ends only where it is complete.\n"
    "             --strict: objects without additionalProperties take no other keys;\n"
    "             --json-ws: whitespace where JSON allows it (default: compact).\n"
    "  grammar    -m MODEL (--json-schema FILE [--strict] [--json-ws] | --json-object\n"
    "             | --regex RE | --grammar FILE | --choice TEXT...) [--check FILE.jsonl]\n"
    "             [--json]\n"
    "             Compile a structured-output grammar for the model's vocabulary and print\n"
    "             the compile time. --check: each line's text (a line that is a JSON string:\n"
    "             its content; else the line as written), tokenized as the model would, is\n"
    "             fed token by token: accepted, or rejected at a byte and token; then the\n"
    "             token-mask times (p50/p90/p99/max/mean us, one thread).\n"
    "  chat       -m MODEL [--system TEXT] [--template NAME] [--enable-thinking true|false]\n"
    "             [-n N] [--stop STRING]... [sampling options as for generate] [-t N]\n"
    "             [--ctx N] [--prefill-chunk N] [--kv-type T] [--dtype T] [-v]\n"
    "             Interactive multi-turn chat with the model's chat template: each\n"
    "             stdin line is a user message; /exit ends. Each turn reuses the KV\n"
    "             cache and prefills only its new tokens (-v prints the counts).\n"
    "  tokenize   -m MODEL (-p TEXT | -f FILE | --jsonl FILE) [--no-special]\n"
    "             Print the token ids as a JSON array (with BOS if the model adds one,\n"
    "             unless --no-special). Special-token text like <|im_start|> is recognized.\n"
    "             --jsonl FILE: every line of FILE is a JSON string; print one array per line.\n"
    "             MODEL may also be a tokenizer alone (see below).\n"
    "  detokenize -m MODEL (--ids 1,2,3 | --jsonl FILE) [--skip-special]\n"
    "             Print the text of token ids exactly (a newline follows only on a\n"
    "             terminal). --skip-special leaves out control tokens (BOS, EOS, ...).\n"
    "             --jsonl FILE: every line is a JSON array of ids; print one JSON string\n"
    "             per line.\n"
    "  logits     -m MODEL (-p TEXT | -f FILE) [-t N] [--ctx N] [--prefill-chunk N] [--kv-type T]\n"
    "             [--dtype T] [--no-special]\n"
    "             Print {\"tokens\": [...], \"logits\": [...]} for the last position.\n"
    "  info       -m MODEL [--tensors] [--dtype T] [--dump TENSOR]\n"
    "             Architecture, hyperparameters, tensor types, tokenizer, chat template.\n"
    "             --dump TENSOR: that tensor of the file, dequantized, as JSON (name, type,\n"
    "             shape, values).\n"
    "  bench      -m MODEL [-p 512] [-n 128] [-d 0] [-t N] [-r 3] [--chunk 0,128,256,512,1024]\n"
    "             [--prefill-chunk N] [--ctx N] [--kv-type f32|f16] [--dtype T]\n"
    "             [--membw-mib 1024] [--probe-every 32] [--json]\n"
    "             Speed table: prefill (ppP) and decode (tgN, after -d D prefilled\n"
    "             tokens) tok/s and time to first token (median ± sd over -r\n"
    "             repeats), the prefill chunk sweep, memory\n"
    "             read bandwidth (probed every --probe-every decode steps) and the\n"
    "             decode ceiling it implies, decode's share of it, peak RSS.\n"
    "             --dtype TYPE converts the matrices at load (as for generate; also\n"
    "             env WICK_DTYPE for every command). WICK_PROFILE=1: per-op times.\n"
    "             --prefix-cache [-p N] [--suffix 16] [--cache-dir DIR]: TTFT with a\n"
    "             cached prefix against cold. --spans [--span-words 10,100,500,1000]:\n"
    "             spnl's span-cache protocol (cold, warm, prefix-hit floor).\n"
    "             --span-quality [--trials 8] [--docs 3] [--doc-tokens 64]: each span\n"
    "             mode's KL / top-1 / greedy match against an ordinary prefill.\n"
    "             --draft MODEL | --draft-layers N | --lookup N [--draft-max K] [-n 128]\n"
    "             [--spec-prompt TEXT] [--temp T]: speculative against plain decoding in\n"
    "             one run (tok/s, acceptance rate, tokens per target pass).\n"
    "             --verify-cost [-d D]: a pass over 1 + k tokens (k = 0..8) in decode steps.\n"
    "  quantize   IN OUT TYPE [-t N] [--pure] [--output-type T] [--embd-type T] [-v]\n"
    "             Write OUT (GGUF) from IN (a GGUF file or an HF directory) with TYPE, a\n"
    "             llama-quantize file type: Q2_K, Q2_K_S, Q3_K_S, Q3_K_M (Q3_K), Q3_K_L,\n"
    "             Q4_K_S, Q4_K_M (Q4_K), Q5_K_S, Q5_K_M (Q5_K), Q6_K, IQ4_NL, IQ4_XS, Q4_0,\n"
    "             Q4_1, Q5_0, Q5_1, Q8_0, F16, BF16 or F32. Per-tensor types follow\n"
    "             llama-quantize's rules (output Q6_K, attn_v/ffn_down more bits in the\n"
    "             _M mixes, fallbacks where rows are not whole blocks); --pure gives every\n"
    "             matrix the base type; --output-type/--embd-type set output.weight's and\n"
    "             token_embd.weight's. -t: threads (default all cores); -v: one line per tensor.\n"
    "  convert    HF_DIR OUT.gguf [--outtype f32|f16|bf16|auto] [-t N] [-v]\n"
    "             An HF safetensors model of any arch wick runs (MoE experts stacked,\n"
    "             Gemma 3's multimodal checkpoint's text model) to GGUF without quantizing\n"
    "             (auto: each tensor keeps its type), with llama.cpp's names, keys,\n"
    "             tokenizer and chat template.\n"
    "  make-test-model --arch llama|mistral|qwen2|qwen3|granite|gemma2|gemma3|phi3|qwen2moe|\n"
    "             qwen3moe|mixtral --format gguf|hf --out PATH\n"
    "             [--shape tiny|tiny256|qwen2.5-0.5b|qwen3-0.6b|qwen3-moe] [--dtype TYPE]\n"
    "             [--seed N] [--tokenizer DIR] [--rope-scaling none|linear|llama3|longrope]\n"
    "             [--split-experts] [--mlp-only-layers L,L] [--script TEXT [--after TEXT]]...\n"
    "             Write a deterministic random-weight model of a real shape, with its\n"
    "             arch's features on (longrope: phi3). --dtype: f32, f16, bf16, q8_0, q6_k,\n"
    "             q5_k, q5_1, q5_0, q4_k, q4_1, q4_0, iq4_nl, iq4_xs, q3_k, q2_k (the K-quants\n"
    "             and iq4_xs need tiny256 or larger).\n"
    "             With --script (repeatable; qwen2, qwen3 or llama, GGUF, f32, f16 or\n"
    "             bf16): a one-layer model whose greedy output is scripted, checked.\n"
    "             --script TEXT: what greedy decoding writes, then the end-of-turn token.\n"
    "             --after TEXT: the prompt's ending it follows (default: the generation prompt).\n"
    "  template   -m SRC -i CONVERSATION.json [--no-generation-prompt]\n"
    "             [--enable-thinking true|false] [--template NAME]\n"
    "             Print the prompt the chat template makes of a conversation ({\"messages\":\n"
    "             [...], \"tools\": [...], ...}), exactly. SRC: a model, a tokenizer\n"
    "             directory or a vocab-only GGUF; --template uses a built-in template\n"
    "             (chatml, llama3, llama2, mistral, or one of llama.cpp's names).\n"
    "  serve      [-m MODEL]... [--models-dir DIR] [--host H] [--port P] [--api-key KEY]\n"
    "             [--parallel N] [--ctx N] [--kv-mb MB] [--max-queue N] [-v] [...]\n"
    "             HTTP server with OpenAI- and Ollama-compatible APIs, /health and\n"
    "             /metrics, over continuous batching (`wick serve --help` lists all).\n"
    "             Takes llama-server's flags where they mean the same (-c, -n, --temp,\n"
    "             --alias, --chat-template-file, ...; see docs/serving.md).\n"
    "  version\n"
    "             Print the version and build (also: wick --version).\n"
    "  help       [COMMAND]\n"
    "             This text, or COMMAND's usage (the same as wick COMMAND --help).\n"
    "\n"
    "MODEL is a .gguf file or a Hugging Face directory (config.json, *.safetensors,\n"
    "tokenizer.json). For tokenize and detokenize it may also be a tokenizer alone: a\n"
    "vocab-only .gguf, or a directory holding tokenizer.json (+ tokenizer_config.json)\n"
    "or vocab.json + merges.txt. Without -m, generate, chat, logits, info, bench and\n"
    "serve use $WICK_MODEL, else the built-in demo model (models/stories260K).\n";

const char *cli_help_text(void) { return HELP; }

/* The paragraph after the command list: what MODEL and SRC may be. */
static const char *models_note(void) {
    const char *p = strstr(HELP, "\nMODEL is ");
    return p ? p + 1 : "";
}

int cli_usage(const char *cmd) {
    const size_t n = strlen(cmd);
    const char *p = strstr(HELP, "\ncommands:\n");
    if (!p) return -1;
    for (p = strchr(p + 1, '\n') + 1; *p && *p != '\n'; p = strchr(p, '\n') + 1) {
        /* a command's line: two spaces, its name, then its arguments or nothing */
        if (strncmp(p, "  ", 2) || strncmp(p + 2, cmd, n) || (p[2 + n] != ' ' && p[2 + n] != '\n')) continue;
        const char *args = p + 2 + n;
        while (*args == ' ') args++;
        const char *end = strchr(args, '\n');
        bool takes_model = false;
        printf("usage: wick %s%s%.*s\n", cmd, end > args ? " " : "", (int)(end - args), args);
        /* the lines under it, up to the next command or the blank line */
        for (const char *q = end + 1; !strncmp(q, "             ", 13); q = strchr(q, '\n') + 1) {
            const char *e = strchr(q, '\n');
            printf("    %.*s\n", (int)(e - q - 13), q + 13);
            takes_model |= memmem(q, (size_t)(e - q), "MODEL", 5) || memmem(q, (size_t)(e - q), "SRC", 3);
        }
        takes_model |= memmem(args, (size_t)(end - args), "MODEL", 5) || memmem(args, (size_t)(end - args), "SRC", 3);
        if (takes_model) printf("\n%s", models_note());
        return 0;
    }
    return -1;
}
