/* test_errors.c — bad input is an error, never a crash: missing, truncated
 * and corrupt files, unknown architectures, missing tensors, wrong shapes,
 * unsupported tensor types, broken HF directories, prompts longer than the
 * context and -n past the room left, the new architectures' malformed fused
 * tensors, missing post-norms and LongRoPE factors and impossible config
 * values, mixture-of-experts files with missing or misshapen experts and
 * impossible expert counts. Each is checked through the library
 * (an error message and its code) and through the CLI (exit 1, one
 * "wick: error:" line). Also the error record itself: wick_fail's default
 * code, wick_fail_code, the prefix keeping the code, clearing. */
#include <cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include <cJSON.h>

#include "check.h"
#include "core/error.h"
#include "format/gguf.h"
#include "cli/testmodel.h"
#include "wick.h"

static char tmp[256];

static const char *tmp_path(const char *name) {
    static char buf[8][512];
    static int k;
    char *b = buf[k++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", tmp, name);
    return b;
}

/* Copy src to dst, changing the architecture, dropping or reshaping or
 * retyping one tensor. */
typedef struct edit {
    const char *arch;         /* new general.architecture or NULL */
    const char *drop;         /* tensor to leave out */
    const char *reshape;      /* tensor to write with rows halved */
    const char *retype_iq2;   /* tensor to replace by an IQ2_XXS tensor (a type wick does not run) of 256 x 2 */
    const char *drop_key;     /* metadata key to leave out */
    const char *set_key;      /* uint32 metadata key to set (added if absent) to set_val */
    uint32_t set_val;
} edit;

static int copy_gguf(const char *src, const char *dst, const edit *e) {
    wick_error err;
    gguf_file *f = gguf_open(src, &err);
    if (!f) return -1;
    gguf_writer *w = gguf_writer_new();
    if (e->set_key) gguf_set_u32(w, e->set_key, e->set_val);
    for (int i = 0; i < gguf_n_kv(f); i++) {
        const char *key = gguf_kv_key(f, i);
        const gguf_value *v = gguf_kv_value(f, i);
        if ((e->drop_key && strcmp(key, e->drop_key) == 0) || (e->set_key && strcmp(key, e->set_key) == 0)) continue;
        if (e->arch && strcmp(key, "general.architecture") == 0) {
            gguf_set_str(w, key, e->arch);
            continue;
        }
        switch (v->type) {
        case GGUF_UINT8: case GGUF_UINT16: case GGUF_UINT32: gguf_set_u32(w, key, (uint32_t)v->u); break;
        case GGUF_UINT64: gguf_set_u64(w, key, v->u); break;
        case GGUF_INT8: case GGUF_INT16: case GGUF_INT32: case GGUF_INT64: gguf_set_i32(w, key, (int32_t)v->i); break;
        case GGUF_FLOAT32: case GGUF_FLOAT64: gguf_set_f32(w, key, (float)v->f); break;
        case GGUF_BOOL: gguf_set_bool(w, key, v->u != 0); break;
        case GGUF_STRING: {
            char *s = strndup(v->s.ptr, v->s.len);
            gguf_set_str(w, key, s);
            free(s);
            break;
        }
        case GGUF_ARRAY: {
            uint64_t n = v->arr.n;
            if (v->arr.type == GGUF_STRING) {
                const char **p = malloc(n * sizeof *p);
                size_t *l = malloc(n * sizeof *l);
                for (uint64_t j = 0; j < n; j++) p[j] = v->arr.strs[j].ptr, l[j] = v->arr.strs[j].len;
                gguf_set_arr_strn(w, key, p, l, n);
                free(p);
                free(l);
            } else if (v->arr.type == GGUF_FLOAT32 || v->arr.type == GGUF_FLOAT64) {
                float *x = malloc(n * sizeof *x);
                for (uint64_t j = 0; j < n; j++) x[j] = (float)gguf_arr_float(v, j);
                gguf_set_arr_f32(w, key, x, n);
                free(x);
            } else {
                int32_t *x = malloc(n * sizeof *x);
                for (uint64_t j = 0; j < n; j++) x[j] = (int32_t)gguf_arr_int(v, j);
                gguf_set_arr_i32(w, key, x, n);
                free(x);
            }
            break;
        }
        }
    }
    int rc = 0;
    for (int i = 0; i < gguf_n_tensors(f) && rc == 0; i++) {
        const wick_tensor *t = gguf_tensor(f, i);
        if (e->drop && strcmp(t->name, e->drop) == 0) continue;
        int64_t ne[4] = {t->ne[0], t->ne[1], t->ne[2], t->ne[3]};
        size_t nbytes = t->nbytes;
        if (e->reshape && strcmp(t->name, e->reshape) == 0) {
            ne[1] /= 2;
            nbytes /= 2;
        }
        if (e->retype_iq2 && strcmp(t->name, e->retype_iq2) == 0) {
            int64_t ne2[2] = {256, 2};
            static unsigned char zeros[2 * 66];
            rc = gguf_add_tensor(w, t->name, WICK_IQ2_XXS, 2, ne2, zeros, sizeof zeros, &err);
            continue;
        }
        rc = gguf_add_tensor(w, t->name, t->type, t->n_dims, ne, t->data, nbytes, &err);
    }
    if (rc == 0) rc = gguf_write(w, dst, &err);
    if (rc != 0) fprintf(stderr, "copy_gguf: %s\n", err.msg);
    gguf_writer_free(w);
    gguf_close(f);
    return rc;
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, n, f);
    fclose(f);
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    b[*n] = 0;
    fclose(f);
    return b;
}

/* The library refuses the model and says something containing `needle`,
 * with a code other than WICK_OK. */
static void expect_load_error(const char *path, const char *needle) {
    wick_error err = {0};
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m == NULL, "%s loaded but should not", path);
    CHECK_MSG(strstr(err.msg, needle) != NULL, "error \"%s\" lacks \"%s\"", err.msg, needle);
    CHECK_MSG(err.code != WICK_OK, "error \"%s\" has no code", err.msg);
    wick_model_free(m);
}

/* The load fails with this code. */
static void expect_load_code(const char *path, wick_errcode code) {
    wick_error err = {0};
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m == NULL, "%s loaded but should not", path);
    CHECK_MSG(err.code == code, "%s: code %d, expected %d (%s)", path, (int)err.code, (int)code, err.msg);
    wick_model_free(m);
}

/* The CLI exits 1 with exactly one line on stderr, starting "wick: error: ". */
static void expect_cli_error(const char *args, const char *needle) {
    const char *bin = getenv("WICK_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        static bool told;
        if (!told) SKIP_PART("the CLI's error lines: $WICK_BIN is not an executable wick (tests/run.sh sets it)");
        told = true;
        return;
    }
    char cmd[2048];
    const char *errf = tmp_path("stderr.txt");
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>%s", bin, args, errf);
    int st = system(cmd);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "`wick %s` exit status %d", args, st);
    size_t n;
    char *out = slurp(errf, &n);
    if (!out) return;
    int lines = 0;
    for (size_t i = 0; i < n; i++) lines += out[i] == '\n';
    CHECK_MSG(lines == 1 && strncmp(out, "wick: error: ", 13) == 0, "`wick %s` printed: %s", args, out);
    CHECK_MSG(strstr(out, needle) != NULL, "`wick %s` error \"%s\" lacks \"%s\"", args, out, needle);
    free(out);
}

static void both(const char *path, const char *needle) {
    expect_load_error(path, needle);
    char args[1024];
    snprintf(args, sizeof args, "generate -m %s -p hi -n 1 --temp 0", path);
    expect_cli_error(args, needle);
}

static void gguf_errors(void) {
    wick_error err;
    char good[512];
    snprintf(good, sizeof good, "%s", tmp_path("good.gguf"));
    test_model_params p = {.arch = "qwen2", .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 3, .out = good};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    wick_model *m = wick_model_load(good, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    wick_model_free(m);

    both(tmp_path("nope.gguf"), "not found");
    size_t n;
    char *bytes = slurp(good, &n);
    if (!bytes) return;
    write_bytes(tmp_path("trunc.gguf"), bytes, n / 2);
    both(tmp_path("trunc.gguf"), "trunc.gguf");
    write_bytes(tmp_path("trunc_hdr.gguf"), bytes, 40);
    both(tmp_path("trunc_hdr.gguf"), "trunc_hdr.gguf");
    memcpy(bytes, "GGUX", 4);
    write_bytes(tmp_path("magic.gguf"), bytes, n);
    both(tmp_path("magic.gguf"), "magic");
    write_bytes(tmp_path("empty.gguf"), bytes, 0);
    both(tmp_path("empty.gguf"), "empty.gguf");
    free(bytes);

    CHECK(copy_gguf(good, tmp_path("arch.gguf"), &(edit){.arch = "gpt-j"}) == 0);
    both(tmp_path("arch.gguf"), "unknown architecture \"gpt-j\"");
    CHECK(copy_gguf(good, tmp_path("drop.gguf"), &(edit){.drop = "blk.1.ffn_down.weight"}) == 0);
    both(tmp_path("drop.gguf"), "missing tensor 'blk.1.ffn_down.weight'");
    CHECK(copy_gguf(good, tmp_path("bias.gguf"), &(edit){.drop = "blk.0.attn_k.bias"}) == 0);
    both(tmp_path("bias.gguf"), "missing tensor 'blk.0.attn_k.bias'");
    CHECK(copy_gguf(good, tmp_path("shape.gguf"), &(edit){.reshape = "blk.0.attn_q.weight"}) == 0);
    both(tmp_path("shape.gguf"), "blk.0.attn_q.weight' has shape");
    CHECK(copy_gguf(good, tmp_path("iq2.gguf"), &(edit){.retype_iq2 = "blk.0.ffn_up.weight"}) == 0);
    both(tmp_path("iq2.gguf"), "unsupported type IQ2_XXS");

    /* the kinds behind those messages */
    expect_load_code(tmp_path("nope.gguf"), WICK_E_NOT_FOUND);
    expect_load_code(tmp_path("trunc.gguf"), WICK_E_FORMAT);
    expect_load_code(tmp_path("magic.gguf"), WICK_E_FORMAT);
    expect_load_code(tmp_path("empty.gguf"), WICK_E_FORMAT);
    expect_load_code(tmp_path("arch.gguf"), WICK_E_UNSUPPORTED);
    expect_load_code(tmp_path("drop.gguf"), WICK_E_FORMAT);
    expect_load_code(tmp_path("iq2.gguf"), WICK_E_UNSUPPORTED);
}

/* The record: wick_fail defaults to WICK_E_INVALID, wick_fail_code sets the
 * code, a prefix keeps it, clearing resets both, a NULL record is fine. */
static void record_codes(void) {
    wick_error err = {0};
    CHECK_INT(err.code, WICK_OK);
    CHECK_INT(wick_fail(&err, "bad %d", 7), -1);
    CHECK_STR(err.msg, "bad 7");
    CHECK_INT(err.code, WICK_E_INVALID);
    CHECK_INT(wick_fail_code(&err, WICK_E_IO, "cannot open %s", "x"), -1);
    CHECK_STR(err.msg, "cannot open x");
    CHECK_INT(err.code, WICK_E_IO);
    CHECK_INT(wick_fail_prefix(&err, "loading %s: ", "m"), -1);
    CHECK_STR(err.msg, "loading m: cannot open x");
    CHECK_INT(err.code, WICK_E_IO);
    wick_fail_code(&err, WICK_E_QUEUE_FULL, "full");
    wick_fail(&err, "plain again");
    CHECK_INT(err.code, WICK_E_INVALID); /* a later wick_fail does not keep an old code */
    wick_error_clear(&err);
    CHECK_STR(err.msg, "");
    CHECK_INT(err.code, WICK_OK);
    CHECK_INT(wick_fail_code(NULL, WICK_E_INTERNAL, "nowhere"), -1);
    wick_error_clear(NULL);
    /* a failed load over a record that held an old error leaves only the new one */
    wick_fail_code(&err, WICK_E_QUEUE_FULL, "stale");
    CHECK(wick_model_load(tmp_path("does-not-exist.gguf"), NULL, &err) == NULL);
    CHECK_INT(err.code, WICK_E_NOT_FOUND);
    CHECK(strstr(err.msg, "stale") == NULL);
}

static void moe_errors(void) {
    wick_error err;
    char good[512], split[512], dense[512];
    snprintf(good, sizeof good, "%s", tmp_path("moe.gguf"));
    snprintf(split, sizeof split, "%s", tmp_path("moe_split.gguf"));
    snprintf(dense, sizeof dense, "%s", tmp_path("dense.gguf"));
    test_model_params p = {.arch = "qwen3moe", .format = "gguf", .shape = "tiny", .dtype = "q8_0", .seed = 3, .out = good};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    p = (test_model_params){.arch = "mixtral", .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 3, .out = split,
                            .split_experts = true};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    p = (test_model_params){.arch = "qwen3", .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 3, .out = dense};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    wick_model *m = wick_model_load(good, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    wick_model_free(m);
    m = wick_model_load(split, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    wick_model_free(m);

    CHECK(copy_gguf(good, tmp_path("m1.gguf"), &(edit){.drop = "blk.1.ffn_down_exps.weight"}) == 0);
    both(tmp_path("m1.gguf"), "missing tensor 'blk.1.ffn_down_exps.weight'");
    CHECK(copy_gguf(good, tmp_path("m2.gguf"), &(edit){.drop = "blk.0.ffn_gate_inp.weight"}) == 0);
    both(tmp_path("m2.gguf"), "missing tensor 'blk.0.ffn_gate_inp.weight'");
    CHECK(copy_gguf(good, tmp_path("m3.gguf"), &(edit){.reshape = "blk.0.ffn_up_exps.weight"}) == 0);
    both(tmp_path("m3.gguf"), "blk.0.ffn_up_exps.weight' has shape");
    CHECK(copy_gguf(good, tmp_path("m4.gguf"), &(edit){.set_key = "qwen3moe.expert_used_count", .set_val = 9}) == 0);
    both(tmp_path("m4.gguf"), "experts used per token 9");
    CHECK(copy_gguf(good, tmp_path("m5.gguf"), &(edit){.set_key = "qwen3moe.expert_count", .set_val = 16}) == 0);
    both(tmp_path("m5.gguf"), "blk.0.ffn_gate_inp.weight' has shape");
    CHECK(copy_gguf(good, tmp_path("m6.gguf"), &(edit){.drop_key = "qwen3moe.expert_count"}) == 0);
    both(tmp_path("m6.gguf"), "without an expert count");
    CHECK(copy_gguf(good, tmp_path("m7.gguf"), &(edit){.set_key = "qwen3moe.expert_count", .set_val = 100000}) == 0);
    both(tmp_path("m7.gguf"), "expert count 100000");
    CHECK(copy_gguf(dense, tmp_path("m8.gguf"), &(edit){.set_key = "qwen3.expert_count", .set_val = 8}) == 0);
    both(tmp_path("m8.gguf"), "architecture qwen3 has no mixture-of-experts form");
    CHECK(copy_gguf(split, tmp_path("m9.gguf"), &(edit){.drop = "blk.0.ffn_up.5.weight"}) == 0);
    both(tmp_path("m9.gguf"), "missing tensor 'blk.0.ffn_up.5.weight'");
    CHECK(copy_gguf(good, tmp_path("m11.gguf"), &(edit){.set_key = "qwen3moe.expert_gating_func", .set_val = 2}) == 0);
    both(tmp_path("m11.gguf"), "unsupported expert gating function 2");
    CHECK(copy_gguf(good, tmp_path("m10.gguf"), &(edit){.retype_iq2 = "blk.1.ffn_gate_exps.weight"}) == 0);
    both(tmp_path("m10.gguf"), "blk.1.ffn_gate_exps.weight");

    /* HF: config keys that contradict the tensors, or are malformed */
    char dir[512], cfg[600], cmd[1400];
    snprintf(dir, sizeof dir, "%s", tmp_path("hf_moe"));
    p = (test_model_params){.arch = "qwen2moe", .format = "hf", .shape = "tiny", .dtype = "bf16", .seed = 3, .out = dir};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    size_t n_cfg;
    char *cfg_text = slurp(cfg, &n_cfg);
    if (!cfg_text) return;
    static const struct { const char *key, *value, *needle; } BAD[] = {
        {"mlp_only_layers", "[1]", "missing tensor 'model.layers.1.mlp.gate_proj.weight'"},
        {"mlp_only_layers", "\"1\"", "mlp_only_layers"},
        {"num_experts_per_tok", "0", "experts used per token 0"},
        {"decoder_sparse_step", "0", "decoder_sparse_step 0"},
        {"num_experts", "4", "model.layers.0.mlp.gate.weight' has shape"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        cJSON *c = cJSON_Parse(cfg_text);
        cJSON_ReplaceItemInObject(c, BAD[i].key, cJSON_Parse(BAD[i].value));
        char *text = cJSON_Print(c);
        write_bytes(cfg, text, strlen(text));
        both(dir, BAD[i].needle);
        free(text);
        cJSON_Delete(c);
    }
    write_bytes(cfg, cfg_text, n_cfg);
    m = wick_model_load(dir, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    wick_model_free(m);
    free(cfg_text);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void hf_errors(void) {
    wick_error err;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("hf"));
    test_model_params p = {.arch = "llama", .format = "hf", .shape = "tiny", .dtype = "f32", .seed = 3, .out = dir};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    char cfg[600], st[600], cmd[1400];
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    snprintf(st, sizeof st, "%s/model.safetensors", dir);
    size_t n_cfg, n_st;
    char *cfg_text = slurp(cfg, &n_cfg), *st_bytes = slurp(st, &n_st);
    if (!cfg_text || !st_bytes) return;
    wick_model *m = wick_model_load(dir, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    wick_model_free(m);

    write_bytes(cfg, "{\"model_type\": \"llama\", ", 24);
    both(dir, "malformed JSON");
    const char *unknown = "{\"model_type\": \"bert\", \"hidden_size\": 64}";
    write_bytes(cfg, unknown, strlen(unknown));
    both(dir, "unknown architecture \"bert\"");
    write_bytes(cfg, cfg_text, n_cfg);
    write_bytes(st, st_bytes, n_st - 100);
    both(dir, "model.safetensors");
    unlink(st);
    both(dir, "safetensors");
    write_bytes(st, st_bytes, n_st);
    unlink(cfg);
    both(dir, "config.json");
    write_bytes(cfg, cfg_text, n_cfg);
    free(cfg_text);
    free(st_bytes);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Write dir/config.json as the test model's with one key set (value: JSON text; NULL = removed). */
static void set_config_key(const char *dir, const char *orig, const char *key, const char *value) {
    cJSON *c = cJSON_Parse(orig);
    if (!c) return;
    cJSON_DeleteItemFromObjectCaseSensitive(c, key);
    if (value) cJSON_AddItemToObject(c, key, cJSON_Parse(value));
    char *text = cJSON_PrintUnformatted(c), path[600];
    snprintf(path, sizeof path, "%s/config.json", dir);
    write_bytes(path, text, strlen(text));
    free(text);
    cJSON_Delete(c);
}

/* The architectures with features (Granite, Gemma 2/3, Phi-3): malformed fused tensors, missing post-norms or
 * LongRoPE factors, and config values wick cannot run are clear errors. */
static void arch_errors(void) {
    wick_error err;
    char src[512];
    snprintf(src, sizeof src, "%s", tmp_path("phi3.gguf"));
    test_model_params p = {.arch = "phi3", .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 3,
                           .rope_scaling = "longrope", .out = src};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    CHECK(copy_gguf(src, tmp_path("qkv.gguf"), &(edit){.reshape = "blk.1.attn_qkv.weight"}) == 0);
    both(tmp_path("qkv.gguf"), "blk.1.attn_qkv.weight' has shape");
    CHECK(copy_gguf(src, tmp_path("gu.gguf"), &(edit){.reshape = "blk.0.ffn_up.weight"}) == 0);
    both(tmp_path("gu.gguf"), "blk.0.ffn_up.weight' has shape");
    CHECK(copy_gguf(src, tmp_path("lr.gguf"), &(edit){.drop = "rope_factors_long.weight"}) == 0);
    both(tmp_path("lr.gguf"), "missing tensor 'rope_factors_long.weight'");
    snprintf(src, sizeof src, "%s", tmp_path("gemma2.gguf"));
    p = (test_model_params){.arch = "gemma2", .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 3, .out = src};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    CHECK(copy_gguf(src, tmp_path("post.gguf"), &(edit){.drop = "blk.1.post_ffw_norm.weight"}) == 0);
    both(tmp_path("post.gguf"), "missing tensor 'blk.1.post_ffw_norm.weight'");

    static const struct {
        const char *arch, *key, *value, *needle;
    } CFG[] = {
        {"gemma3", "layer_types",
         "[\"sliding_attention\", \"full_attention\", \"full_attention\", \"sliding_attention\", "
         "\"sliding_attention\", \"sliding_attention\", \"full_attention\"]",
         "layer_types"},
        {"gemma3", "layer_types", "[\"sliding_attention\"]", "layer_types"},
        {"gemma2", "attn_logit_softcapping", "-1", "attn_logit_softcapping"},
        {"granite", "logits_scaling", "0", "logits_scaling"},
        {"phi3", "partial_rotary_factor", "1.5", "partial_rotary_factor"},
        {"gemma3", "model_type", "\"gemma3\"", "text_config"},
    };
    for (size_t i = 0; i < sizeof CFG / sizeof CFG[0]; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s", tmp_path("hf-arch"));
        p = (test_model_params){.arch = CFG[i].arch, .format = "hf", .shape = "tiny", .dtype = "f32", .seed = 3, .out = dir};
        CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
        char cfg[600];
        snprintf(cfg, sizeof cfg, "%s/config.json", dir);
        size_t n;
        char *text = slurp(cfg, &n);
        if (!text) continue;
        set_config_key(dir, text, CFG[i].key, CFG[i].value);
        both(dir, CFG[i].needle);
        free(text);
    }
    /* LongRoPE factor lists of the wrong length */
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("hf-lr"));
    p = (test_model_params){.arch = "phi3", .format = "hf", .shape = "tiny", .dtype = "f32", .seed = 3,
                            .rope_scaling = "longrope", .out = dir};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    size_t n;
    char *text = slurp(cfg, &n);
    if (!text) return;
    set_config_key(dir, text, "rope_scaling", "{\"type\": \"longrope\", \"short_factor\": [1, 1], \"long_factor\": [1, 2]}");
    both(dir, "short_factor");
    free(text);
}

static void limit_errors(void) {
    const char *model = shared_path("models/stories260K/stories260K-f32.gguf");
    if (!model) SKIP("stories260K not found in the shared folder");
    char args[1024];
    snprintf(args, sizeof args, "generate -m %s -p \"Once upon a time there was a girl\" --ctx 8 -n 1", model);
    expect_cli_error(args, "context");
    snprintf(args, sizeof args, "generate -m %s -p \"Once upon a time\" --ctx 16 -n 12", model);
    expect_cli_error(args, "-n 12");
    snprintf(args, sizeof args, "generate -m %s -p hi -n x", model);
    expect_cli_error(args, "invalid value");
    snprintf(args, sizeof args, "generate -m %s -p hi --bogus", model);
    expect_cli_error(args, "unknown option");
    expect_cli_error("frobnicate", "unknown command");
    snprintf(args, sizeof args, "generate -m %s", model);
    expect_cli_error(args, "no prompt");
}

int main(void) {
    snprintf(tmp, sizeof tmp, "/tmp/wick-errors-XXXXXX");
    if (!mkdtemp(tmp)) return 1;
    RUN(record_codes);
    RUN(gguf_errors);
    RUN(moe_errors);
    RUN(hf_errors);
    RUN(arch_errors);
    RUN(limit_errors);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) return 1;
    return check_summary("test_errors");
}
