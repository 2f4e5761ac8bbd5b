/* testmodel_script.c — scripted test models (see testmodel_script.h).
 *
 * Rules. Script s with after-text tokens A and script tokens S gives one rule
 * per position j = 0..|S|: context A + S[0..j) -> next S[j] (j = |S|: the end
 * token). A rule looks at the last min(|context|, W) tokens of its context,
 * its window; the smallest W (at least the longest after-text, at most
 * SCRIPT_MAX_WINDOW) is chosen for which no two rules with different next
 * tokens collide: equal windows, or a cut window (context longer than W)
 * ending with the whole, shorter context of another rule (a script that
 * starts after a text the other's window merely ends with). Rules with equal
 * windows merge. The longest rule whose window ends the context wins, so a
 * longer after-text takes precedence over a shorter one it ends with; with no
 * rule, the end token wins. Following a rule's next token the next position's
 * rule always matches, and the context a winning rule stands for grows by at
 * least one token per step, so greedy decoding from any prompt ends within
 * the longest script.
 *
 * Residual stream (n_embd = W·m + 1, rounded up to 32): region o (m dims,
 * o = 0..W-1) holds the ±1 code of the token o positions back, one dim holds
 * the constant 1 ("bias"). m = the bits that number the codes: one per token
 * of the scripts, after-texts and the end token, plus one that every other
 * token shares. Every embedding is code + bias, so every row has the same RMS
 * and the norms are constants (their weights undo them exactly).
 *
 * Attention: one KV head; k is a constant pattern built from the bias dim
 * (one unit pair per RoPE frequency), q of head d (d = 1..W-1) the same
 * rotated by -d·θ_i, so the score at distance Δ is c·Σ_i cos(θ_i(Δ - d)):
 * largest at Δ = d, below it by at least the smallest margin over the
 * context (computed here, scaled to exp(-24)-sharp softmax). v is region 0
 * (the token's code); head d's output goes to region d. qwen2 builds q and k
 * from its biases, qwen3 scales them with q_norm / k_norm.
 *
 * Feed-forward (SwiGLU, up = the bias dim = 1): a rule with window w of n
 * tokens scores s = Σ_o code(w[o])·region o, which is n·m when every token
 * matches and at most n·m - 2 otherwise. Two neurons, gates A(s - nm + 1.5)
 * and A(s - nm + 0.5) with opposite down columns, make a step of exactly 1
 * (silu is relu to within e^-16 there) that tolerates errors of s up to
 * ±0.4. Its down column is V·(code(next) - code(next of its parent)), the
 * parent being the longest rule whose window ends this one's (the root rule,
 * empty window, next = end token, always fires), so the rules that fire —
 * always one chain of windows, each ending the next — sum to
 * V·code(next of the longest). The logits read region 0 through the tied
 * embedding: the chosen token leads every other by at least 2V - 2m codes'
 * worth, many logits. */
#include "cli/testmodel_script.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/tensor.h"
#include "format/gguf.h"
#include "kernels/convert.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "template/chat_template.h"
#include "text/tokenizer.h"

#define HEAD_DIM 128
#define ROPE_THETA 1000000.0f
#define N_CTX 32768
#define GATE_A 32.0f    /* gate slope: silu(±16) is relu(±16) to within 2e-6 */
#define ATTN_MARGIN 24.0 /* softmax logits between the attended position and any other */
#define OUT_GAIN 5.0f   /* output_norm weight of region 0 */

typedef struct rule {
    const int32_t *ctx; /* the context's tokens (into its script's sequence) */
    int n_ctx;
    int32_t next;
    int script;         /* for messages */
    int parent;         /* index into rules, -1 = the root */
    bool dup;           /* merged into an earlier rule with the same window */
} rule;

typedef struct sbuild {
    const script_model_params *p;
    tokenizer *tok;
    const arch_desc *arch;
    int dtype;
    int32_t end;
    int32_t **seq;   /* per script: after tokens then script tokens */
    size_t *n_after, *n_script;
    rule *rules;
    int n_rules;
    int W;           /* window */
    int32_t *ids;    /* the distinct tokens with codes (index = code number; 0 = "other") */
    int n_codes, m;
    int D, F, n_head;
} sbuild;

/* ---- the chat template's texts ---- */

static char *token_text_dup(const tokenizer *t, int32_t id) {
    size_t len = 0;
    const char *s = id >= 0 ? tok_token_text(t, id, &len) : NULL;
    return s ? strndup(s, len) : NULL;
}

/* Render the template with conversation conv (JSON). NULL + err on failure. */
static char *render(const tokenizer *t, const char *conv, int add_gen, wick_error *err) {
    const char *tmpl = tok_chat_template(t);
    if (!tmpl) {
        wick_fail(err, "the tokenizer has no chat template: give --after for every --script");
        return NULL;
    }
    char *bos = token_text_dup(t, tok_bos(t)), *eos = token_text_dup(t, tok_eos(t));
    chat_template_opts o = {.add_generation_prompt = add_gen, .enable_thinking = -1, .bos_token = bos, .eos_token = eos};
    cJSON *ctx = chat_template_context(conv, &o, err);
    char *out = ctx ? chat_template_render_cjson(tmpl, ctx, NULL, err) : NULL;
    cJSON_Delete(ctx);
    free(bos);
    free(eos);
    return out;
}

/* The generation prompt: the template with and without it, the difference. */
static char *generation_prompt(const tokenizer *t, wick_error *err) {
    static const char CONV[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
    char *with = render(t, CONV, 1, err);
    char *without = with ? render(t, CONV, 0, err) : NULL;
    char *gp = NULL;
    if (with && without) {
        const size_t a = strlen(without), b = strlen(with);
        if (b > a && memcmp(with, without, a) == 0) gp = strdup(with + a);
        else wick_fail(err, "the chat template's generation prompt is not an ending of the prompt; give --after");
    }
    free(with);
    free(without);
    return gp;
}

/* The end-of-turn token: the first token after an assistant message's content
 * in the template when it ends generation, else the tokenizer's EOS. */
static int32_t end_token(const tokenizer *t) {
    static const char MARK[] = "WICKSCRIPTMARK";
    static const char CONV[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"},"
                               "{\"role\":\"assistant\",\"content\":\"WICKSCRIPTMARK\"}]}";
    int32_t end = tok_eos(t);
    wick_error e;
    char *txt = tok_chat_template(t) ? render(t, CONV, 0, &e) : NULL;
    const char *at = txt ? strstr(txt, MARK) : NULL;
    if (at) {
        at += sizeof MARK - 1;
        int32_t *ids = NULL;
        size_t n = 0;
        if (tok_encode(t, at, strlen(at), false, true, &ids, &n, &e) == 0 && n > 0 && tok_is_eog(t, ids[0])) end = ids[0];
        free(ids);
    }
    free(txt);
    return end;
}

/* ---- rules and windows ---- */

static int win_len(const rule *r, int W) { return r->n_ctx < W ? r->n_ctx : W; }
static const int32_t *win(const rule *r, int W) { return r->ctx + r->n_ctx - win_len(r, W); }

/* True when the last n tokens of a equal the last n of b. */
static bool same_tail(const int32_t *a, int na, const int32_t *b, int nb, int n) {
    return na >= n && nb >= n && memcmp(a + na - n, b + nb - n, (size_t)n * sizeof *a) == 0;
}

/* Whether window W keeps the rules apart; on a collision, *ra / *rb name it. */
static bool window_ok(const sbuild *b, int W, int *ra, int *rb) {
    for (int i = 0; i < b->n_rules; i++)
        for (int j = 0; j < b->n_rules; j++) {
            const rule *x = &b->rules[i], *y = &b->rules[j];
            if (i == j || x->next == y->next) continue;
            const int nx = win_len(x, W), ny = win_len(y, W);
            /* equal windows (i < j: once), or y's whole short context ending x's cut window */
            bool clash = (nx == ny && i < j && same_tail(win(x, W), nx, win(y, W), ny, nx)) ||
                         (x->n_ctx > W && y->n_ctx < W && same_tail(win(x, W), nx, y->ctx, y->n_ctx, y->n_ctx));
            if (clash) {
                *ra = i;
                *rb = j;
                return false;
            }
        }
    return true;
}

static int code_of(const sbuild *b, int32_t id) {
    for (int i = 1; i < b->n_codes; i++)
        if (b->ids[i] == id) return i;
    return 0;
}

/* The ±1 code of code number c, bit k. */
static float bit(int c, int k) { return (c >> k) & 1 ? 1.0f : -1.0f; }

static int add_code(sbuild *b, int32_t id, wick_error *err) {
    if (code_of(b, id) > 0) return 0;
    int32_t *n = realloc(b->ids, (size_t)(b->n_codes + 1) * sizeof *n);
    if (!n) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    b->ids = n;
    b->ids[b->n_codes++] = id;
    return 0;
}

static char *piece_text(const tokenizer *t, int32_t id, char *buf, size_t cap) {
    int n = tok_piece(t, id, buf, cap - 1);
    if (n < 0) n = 0;
    if ((size_t)n > cap - 1) n = (int)cap - 1;
    buf[n] = 0;
    for (int i = 0; i < n; i++)
        if (buf[i] == '\n') buf[i] = ' ';
    return buf;
}

static int build_rules(sbuild *b, wick_error *err) {
    const script_model_params *p = b->p;
    b->seq = calloc((size_t)p->n_scripts, sizeof *b->seq);
    b->n_after = calloc((size_t)p->n_scripts, sizeof *b->n_after);
    b->n_script = calloc((size_t)p->n_scripts, sizeof *b->n_script);
    if (!b->seq || !b->n_after || !b->n_script) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    char *gp = NULL;
    size_t total = 0;
    for (int s = 0; s < p->n_scripts; s++) {
        const char *after = p->afters ? p->afters[s] : NULL;
        if (!after) {
            if (!gp && !(gp = generation_prompt(b->tok, err))) return -1;
            after = gp;
        }
        int32_t *a = NULL, *x = NULL;
        size_t na = 0, nx = 0;
        if (tok_encode(b->tok, after, strlen(after), false, true, &a, &na, err) < 0 ||
            tok_encode(b->tok, p->scripts[s], strlen(p->scripts[s]), false, true, &x, &nx, err) < 0) {
            free(a);
            free(gp);
            return -1;
        }
        int rc = 0;
        if (na == 0) rc = wick_fail(err, "script %d: its --after text is empty", s + 1);
        for (size_t i = 0; rc == 0 && i < nx; i++)
            if (tok_is_eog(b->tok, x[i]))
                rc = wick_fail(err, "script %d: token %zu (id %d) ends generation; a script cannot hold one", s + 1, i, x[i]);
        if (rc == 0 && !(b->seq[s] = malloc((na + nx + 1) * sizeof(int32_t))))
            rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        if (rc == 0) {
            memcpy(b->seq[s], a, na * sizeof *a);
            if (nx) memcpy(b->seq[s] + na, x, nx * sizeof *x);
            b->n_after[s] = na;
            b->n_script[s] = nx;
            total += nx + 1;
        }
        free(a);
        free(x);
        if (rc < 0) {
            free(gp);
            return -1;
        }
    }
    free(gp);
    if (!(b->rules = calloc(total, sizeof *b->rules))) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    /* the codes: "other" first, then every token the rules name */
    if (add_code(b, -1, err) < 0 || add_code(b, b->end, err) < 0) return -1;
    int min_w = 1;
    for (int s = 0; s < p->n_scripts; s++) {
        const size_t na = b->n_after[s], nx = b->n_script[s];
        for (size_t i = 0; i < na + nx; i++)
            if (add_code(b, b->seq[s][i], err) < 0) return -1;
        for (size_t j = 0; j <= nx; j++)
            b->rules[b->n_rules++] = (rule){.ctx = b->seq[s], .n_ctx = (int)(na + j),
                                            .next = j < nx ? b->seq[s][na + j] : b->end, .script = s};
        if ((int)na > min_w) min_w = (int)na;
    }
    if (min_w > SCRIPT_MAX_WINDOW) min_w = SCRIPT_MAX_WINDOW;
    int ra = -1, rb = -1;
    for (b->W = min_w; b->W <= SCRIPT_MAX_WINDOW; b->W++)
        if (window_ok(b, b->W, &ra, &rb)) break;
    if (b->W > SCRIPT_MAX_WINDOW) {
        const rule *x = &b->rules[ra], *y = &b->rules[rb];
        char t1[64], t2[64];
        return wick_fail(err,
                         "the scripts need more than %d tokens of context to tell apart: script %d after %d tokens "
                         "continues with \"%s\", script %d after the same last tokens with \"%s\"; make the "
                         "--after texts or scripts differ sooner", SCRIPT_MAX_WINDOW, x->script + 1, x->n_ctx,
                         piece_text(b->tok, x->next, t1, sizeof t1), y->script + 1,
                         piece_text(b->tok, y->next, t2, sizeof t2));
    }
    /* merge equal windows, then each rule's parent: the longest window ending its own */
    const int W = b->W;
    for (int i = 0; i < b->n_rules; i++)
        for (int j = 0; j < i && !b->rules[i].dup; j++) {
            const rule *x = &b->rules[i], *y = &b->rules[j];
            const int n = win_len(x, W);
            if (!y->dup && win_len(y, W) == n && same_tail(win(x, W), n, win(y, W), n, n)) b->rules[i].dup = true;
        }
    for (int i = 0; i < b->n_rules; i++) {
        rule *x = &b->rules[i];
        x->parent = -1;
        if (x->dup) continue;
        const int n = win_len(x, W);
        int best = 0;
        for (int j = 0; j < b->n_rules; j++) {
            const rule *y = &b->rules[j];
            const int ny = win_len(y, W);
            if (j == i || y->dup || ny >= n || ny <= best) continue;
            if (same_tail(win(x, W), n, win(y, W), ny, ny)) {
                x->parent = j;
                best = ny;
            }
        }
    }
    b->m = 1;
    while ((1 << b->m) < b->n_codes) b->m++;
    return 0;
}

/* ---- weights ---- */

typedef struct tensors {
    float *embd, *attn_norm, *wq, *wk, *wv, *wo, *bq, *bk, *bv, *q_norm, *k_norm, *ffn_norm, *gate, *up, *down,
        *out_norm;
} tensors;

/* The smallest of Σ_i (1 - cos θ_i x) over distances x ≠ 0 a head can see:
 * the drop of a unit-amplitude score away from its peak. */
static double rope_margin(const float *theta, int half, int W) {
    double best = INFINITY;
    for (int x = -(W - 1); x < N_CTX; x++) {
        if (x == 0) continue;
        double s = 0;
        for (int i = 0; i < half; i++) s += 1.0 - cos((double)theta[i] * x);
        if (s < best) best = s;
    }
    return best;
}

static void put_pair(float *head, rope_style style, int i, float a, float b) {
    const int ia = style == ROPE_INTERLEAVED ? 2 * i : i, ib = style == ROPE_INTERLEAVED ? 2 * i + 1 : i + HEAD_DIM / 2;
    head[ia] = a;
    head[ib] = b;
}

static int make_weights(sbuild *b, const hparams *hp, tensors *t, wick_error *err) {
    const int D = b->D, F = b->F, m = b->m, W = b->W, H = b->n_head, half = HEAD_DIM / 2;
    const int qd = H * HEAD_DIM, bias = W * m;
    const int n_vocab = tok_n_vocab(b->tok);
    float *theta = malloc((size_t)half * sizeof *theta);
    t->embd = calloc((size_t)n_vocab * D, sizeof(float));
    t->attn_norm = calloc((size_t)D, sizeof(float));
    t->ffn_norm = calloc((size_t)D, sizeof(float));
    t->out_norm = calloc((size_t)D, sizeof(float));
    t->wq = calloc((size_t)qd * D, sizeof(float));
    t->wk = calloc((size_t)HEAD_DIM * D, sizeof(float));
    t->wv = calloc((size_t)HEAD_DIM * D, sizeof(float));
    t->wo = calloc((size_t)D * qd, sizeof(float));
    t->bq = calloc((size_t)qd, sizeof(float));
    t->bk = calloc(HEAD_DIM, sizeof(float));
    t->bv = calloc(HEAD_DIM, sizeof(float));
    t->q_norm = calloc(HEAD_DIM, sizeof(float));
    t->k_norm = calloc(HEAD_DIM, sizeof(float));
    t->gate = calloc((size_t)F * D, sizeof(float));
    t->up = calloc((size_t)F * D, sizeof(float));
    t->down = calloc((size_t)D * F, sizeof(float));
    if (!theta || !t->embd || !t->attn_norm || !t->ffn_norm || !t->out_norm || !t->wq || !t->wk || !t->wv || !t->wo ||
        !t->bq || !t->bk || !t->bv || !t->q_norm || !t->k_norm || !t->gate || !t->up || !t->down) {
        free(theta);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    /* embeddings: code + bias; every row has the RMS sqrt((m + 1) / D) */
    for (int v = 0; v < n_vocab; v++) {
        float *row = t->embd + (size_t)v * D;
        const int c = code_of(b, v);
        for (int k = 0; k < m; k++) row[k] = bit(c, k);
        row[bias] = 1.0f;
    }
    /* norms undo the constant RMS: attention and FFN inputs are ±1 and 1 */
    for (int i = 0; i < D; i++) {
        t->attn_norm[i] = sqrtf((float)(m + 1) / (float)D);
        t->ffn_norm[i] = sqrtf((float)(W * m + 1) / (float)D);
    }
    for (int k = 0; k < m; k++) t->out_norm[k] = OUT_GAIN;

    /* attention: scores c·Σ cos(θ_i (Δ - d)), scaled so the peak leads by ATTN_MARGIN */
    hparams_rope_inv_freq(hp, NULL, theta);
    const double margin = W > 1 ? rope_margin(theta, half, W) : 1.0;
    if (!(margin > 1e-3)) {
        free(theta);
        return wick_fail(err, "internal: RoPE margin %g too small", margin);
    }
    const float c = (float)sqrt(ATTN_MARGIN / margin / hp->attn_scale); /* |q| = |k| per pair */
    const rope_style style = b->arch->rope_gguf;
    const bool qk_bias = b->arch->qkv_bias, qk_norm = b->arch->qk_norm;
    /* qwen3: q and k rows have unit pairs (RMS sqrt(1/2)), q_norm / k_norm scale them to c */
    const float amp = qk_norm ? 1.0f : c;
    float kpat[HEAD_DIM] = {0};
    for (int i = 0; i < half; i++) put_pair(kpat, style, i, amp, 0.0f);
    for (int r = 0; r < HEAD_DIM; r++) {
        if (qk_bias) t->bk[r] = kpat[r];
        else t->wk[(size_t)r * D + bias] = kpat[r];
        t->q_norm[r] = t->k_norm[r] = c * sqrtf(0.5f);
    }
    for (int h = 0; h < H; h++) {
        const int d = h + 1;
        float qpat[HEAD_DIM] = {0};
        for (int i = 0; i < half; i++) {
            const double a = (double)d * theta[i];
            put_pair(qpat, style, i, amp * (float)cos(a), -amp * (float)sin(a));
        }
        for (int r = 0; r < HEAD_DIM; r++) {
            const size_t row = (size_t)h * HEAD_DIM + r;
            if (qk_bias) t->bq[row] = qpat[r];
            else t->wq[row * D + bias] = qpat[r];
        }
        /* head d's output (the token's code, from v) to region d */
        if (d < W)
            for (int k = 0; k < m; k++) t->wo[(size_t)(d * m + k) * qd + (size_t)h * HEAD_DIM + k] = 1.0f;
    }
    for (int k = 0; k < m; k++) t->wv[(size_t)k * D + k] = 1.0f; /* v = region 0 */

    /* feed-forward: a step of height 1 per rule (two neurons), the root's always on */
    const float V = 4.0f * (float)m, A = GATE_A;
    int nn = 0;
    for (int i = -1; i < b->n_rules; i++) {
        const rule *x = i >= 0 ? &b->rules[i] : NULL;
        if (x && x->dup) continue;
        const int32_t next = x ? x->next : b->end;
        const int32_t pnext = x ? (x->parent >= 0 ? b->rules[x->parent].next : b->end) : -2;
        if (next == pnext) continue; /* writes nothing */
        const int n = x ? win_len(x, W) : 0;
        const int32_t *w = x ? win(x, W) : NULL;
        float dv[64];
        const int cn = code_of(b, next), cp = pnext >= -1 ? code_of(b, pnext) : -1;
        for (int k = 0; k < m; k++) dv[k] = V * (bit(cn, k) - (cp >= 0 ? bit(cp, k) : 0.0f)) / A;
        for (int s = 0; s < 2; s++, nn++) {
            float *g = t->gate + (size_t)nn * D;
            for (int o = 0; o < n; o++) {
                const int cw = code_of(b, w[n - 1 - o]); /* offset o = o tokens back */
                for (int k = 0; k < m; k++) g[o * m + k] = A * bit(cw, k);
            }
            g[bias] = -A * ((float)(n * m) - (s == 0 ? 1.5f : 0.5f));
            t->up[(size_t)nn * D + bias] = 1.0f;
            for (int k = 0; k < m; k++) t->down[(size_t)k * F + nn] = s == 0 ? dv[k] : -dv[k];
        }
    }
    free(theta);
    return 0;
}

static int count_neurons(const sbuild *b) {
    int n = 2; /* the root */
    for (int i = 0; i < b->n_rules; i++) {
        const rule *x = &b->rules[i];
        if (x->dup) continue;
        const int32_t pnext = x->parent >= 0 ? b->rules[x->parent].next : b->end;
        if (x->next != pnext) n += 2;
    }
    return n;
}

static void free_tensors(tensors *t) {
    float **all[] = {&t->embd, &t->attn_norm, &t->wq, &t->wk, &t->wv, &t->wo, &t->bq, &t->bk, &t->bv,
                     &t->q_norm, &t->k_norm, &t->ffn_norm, &t->gate, &t->up, &t->down, &t->out_norm};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        free(*all[i]);
        *all[i] = NULL;
    }
}

/* Add tensor role (rows × cols; rows 1 = a vector, kept F32) in the file's type. */
static int add(sbuild *b, gguf_writer *w, tensor_role role, int rows, int cols, const float *x, wick_error *err) {
    char name[128];
    if (!arch_tensor_name(b->arch, name, sizeof name, FORMAT_GGUF, role, 0))
        return wick_fail(err, "internal: no GGUF name for tensor role %d", (int)role);
    const int type = rows == 1 ? WICK_F32 : b->dtype;
    const size_t row_bytes = dtype_row_bytes(type, cols), bytes = row_bytes * (size_t)rows;
    char *data = malloc(bytes);
    if (!data) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    for (int r = 0; r < rows; r++) quantize_row(type, x + (size_t)r * cols, data + (size_t)r * row_bytes, cols);
    const int64_t ne[2] = {cols, rows};
    const int rc = gguf_add_tensor(w, name, type, rows == 1 ? 1 : 2, ne, data, bytes, err);
    free(data);
    return rc;
}

static int write_model(sbuild *b, wick_error *err) {
    hparams hp;
    memset(&hp, 0, sizeof hp);
    hp.n_embd = b->D;
    hp.n_layer = 1;
    hp.n_head = b->n_head;
    hp.n_head_kv = 1;
    hp.head_dim = HEAD_DIM;
    hp.rot_dim = HEAD_DIM;
    hp.n_ff = b->F;
    hp.n_ctx_train = N_CTX;
    hp.rms_eps = 1e-6f;
    hp.rope_theta = ROPE_THETA;
    hp.rope_factor = 1.0f;
    hp.attn_scale = 1.0f / sqrtf((float)HEAD_DIM);
    hp.n_vocab = tok_n_vocab(b->tok);
    tensors t;
    memset(&t, 0, sizeof t);
    gguf_writer *w = gguf_writer_new();
    int rc = w ? make_weights(b, &hp, &t, err) : wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    if (rc == 0) {
        gguf_set_str(w, "general.architecture", b->arch->gguf_arch);
        gguf_set_str(w, "general.name", "wick scripted test model");
        gguf_set_u32(w, "general.alignment", 32);
        hparams_to_gguf(&hp, b->arch->gguf_arch, w);
        rc = tok_write_gguf(b->tok, hp.n_vocab, w, err);
    }
    const int D = b->D, F = b->F, qd = b->n_head * HEAD_DIM;
    if (rc == 0)
        rc = add(b, w, T_TOK_EMBD, hp.n_vocab, D, t.embd, err) < 0 || add(b, w, T_ATTN_NORM, 1, D, t.attn_norm, err) < 0 ||
                     add(b, w, T_ATTN_Q, qd, D, t.wq, err) < 0 || add(b, w, T_ATTN_K, HEAD_DIM, D, t.wk, err) < 0 ||
                     add(b, w, T_ATTN_V, HEAD_DIM, D, t.wv, err) < 0 || add(b, w, T_ATTN_O, D, qd, t.wo, err) < 0 ||
                     add(b, w, T_FFN_NORM, 1, D, t.ffn_norm, err) < 0 || add(b, w, T_FFN_GATE, F, D, t.gate, err) < 0 ||
                     add(b, w, T_FFN_UP, F, D, t.up, err) < 0 || add(b, w, T_FFN_DOWN, D, F, t.down, err) < 0 ||
                     add(b, w, T_OUTPUT_NORM, 1, D, t.out_norm, err) < 0
                 ? -1
                 : 0;
    if (rc == 0 && b->arch->qkv_bias)
        rc = add(b, w, T_ATTN_Q_BIAS, 1, qd, t.bq, err) < 0 || add(b, w, T_ATTN_K_BIAS, 1, HEAD_DIM, t.bk, err) < 0 ||
                     add(b, w, T_ATTN_V_BIAS, 1, HEAD_DIM, t.bv, err) < 0
                 ? -1
                 : 0;
    if (rc == 0 && b->arch->qk_norm)
        rc = add(b, w, T_ATTN_Q_NORM, 1, HEAD_DIM, t.q_norm, err) < 0 ||
                     add(b, w, T_ATTN_K_NORM, 1, HEAD_DIM, t.k_norm, err) < 0
                 ? -1
                 : 0;
    free_tensors(&t);
    if (rc == 0) rc = gguf_write(w, b->p->out, err);
    if (w) gguf_writer_free(w);
    return rc;
}

/* ---- the check ---- */

static int argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* Load the file back; for each script, a prompt of a few neutral tokens and
 * its after-text must continue greedily with the script and the end token. */
static int check_model(const sbuild *b, wick_error *err) {
    wick_model_params mp = {0};
    wick_model *m = wick_model_load(b->p->out, &mp, err);
    if (!m) return -1;
    wick_context_params cp = {.n_ctx = 2048, .n_seq = 1, .n_threads = 1, .prefill_chunk = 0, .no_prefix_cache = true};
    wick_context *c = wick_context_new(m, &cp, err);
    if (!c) {
        wick_model_free(m);
        return -1;
    }
    int32_t *filler = NULL, *buf = NULL;
    size_t n_filler = 0;
    int rc = tok_encode(b->tok, "Hello.", 6, true, true, &filler, &n_filler, err);
    const int n_vocab = tok_n_vocab(b->tok);
    for (int s = 0; rc == 0 && s < b->p->n_scripts; s++) {
        const size_t na = b->n_after[s], nx = b->n_script[s], n = n_filler + na;
        free(buf);
        if (!(buf = malloc((n + nx + 2) * sizeof *buf))) {
            rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
            break;
        }
        memcpy(buf, filler, n_filler * sizeof *buf);
        memcpy(buf + n_filler, b->seq[s], na * sizeof *buf);
        wick_seq_truncate(c, 0, 0);
        int32_t *pos = malloc(n * sizeof *pos), *seq = calloc(n, sizeof *seq);
        if (!pos || !seq) rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        for (size_t i = 0; rc == 0 && i < n; i++) pos[i] = (int32_t)i;
        wick_batch bt = {.n = (int)n, .tokens = buf, .pos = pos, .seq = seq};
        if (rc == 0 && wick_decode(c, &bt, err) < 0) rc = -1;
        free(pos);
        free(seq);
        for (size_t j = 0; rc == 0 && j <= nx; j++) {
            const int32_t got = argmax(wick_logits(c, 0), n_vocab);
            const int32_t want = j < nx ? b->seq[s][na + j] : b->end;
            if (got != want) {
                char t1[64], t2[64];
                rc = wick_fail(err, "check failed: script %d, token %zu: the model gives %d (\"%s\"), the script %d (\"%s\")",
                               s + 1, j, got, piece_text(b->tok, got, t1, sizeof t1), want,
                               piece_text(b->tok, want, t2, sizeof t2));
                break;
            }
            if (j == nx) break;
            const int32_t p1 = (int32_t)(n + j), s1 = 0;
            wick_batch one = {.n = 1, .tokens = &got, .pos = &p1, .seq = &s1};
            if (wick_decode(c, &one, err) < 0) rc = -1;
        }
    }
    free(buf);
    free(filler);
    wick_context_free(c);
    wick_model_free(m);
    return rc;
}

int make_script_model(const script_model_params *p, script_model_info *info, wick_error *err) {
    if (!p->out || !*p->out) return wick_fail(err, "no output path given (--out)");
    if (p->n_scripts <= 0) return wick_fail(err, "no --script given");
    sbuild b;
    memset(&b, 0, sizeof b);
    b.p = p;
    b.arch = arch_by_name(p->arch ? p->arch : "");
    if (!b.arch || (strcmp(b.arch->name, "qwen2") != 0 && strcmp(b.arch->name, "qwen3") != 0 &&
                    strcmp(b.arch->name, "llama") != 0))
        return wick_fail(err, "--script models are qwen2, qwen3 or llama, not \"%s\"", p->arch ? p->arch : "");
    b.dtype = dtype_from_name(p->dtype ? p->dtype : "f32");
    if (b.dtype != WICK_F32 && b.dtype != WICK_F16 && b.dtype != WICK_BF16)
        return wick_fail(err, "--script models are f32, f16 or bf16, not \"%s\"", p->dtype);
    b.tok = p->tokenizer_dir ? tok_load_hf_dir(p->tokenizer_dir, err) : tok_make_synthetic(253, err);
    if (!b.tok) return -1;
    int rc = 0;
    b.end = end_token(b.tok);
    if (b.end < 0) rc = wick_fail(err, "the tokenizer has no end-of-turn or EOS token to end the scripts with");
    if (rc == 0) rc = build_rules(&b, err);
    if (rc == 0) {
        b.n_head = b.W > 1 ? b.W - 1 : 1;
        b.D = (b.W * b.m + 1 + 31) / 32 * 32;
        b.F = (count_neurons(&b) + 31) / 32 * 32;
        if (b.m > 64) rc = wick_fail(err, "too many distinct tokens");
    }
    if (rc == 0) rc = write_model(&b, err);
    if (rc == 0) rc = check_model(&b, err);
    if (rc == 0 && info) {
        int n = 0;
        for (int i = 0; i < b.n_rules; i++) n += !b.rules[i].dup;
        *info = (script_model_info){.window = b.W, .n_codes = b.n_codes, .n_rules = n, .n_embd = b.D, .n_ff = b.F,
                                    .n_head = b.n_head, .end = b.end};
    }
    for (int s = 0; b.seq && s < p->n_scripts; s++) free(b.seq[s]);
    free(b.seq);
    free(b.n_after);
    free(b.n_script);
    free(b.rules);
    free(b.ids);
    tok_free(b.tok);
    return rc;
}
