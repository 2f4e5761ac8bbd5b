/* cmd_template.c — `wick template`: render a conversation with a model's chat
 * template (or a built-in one) and print the prompt exactly, without a
 * trailing newline of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fileio.h"
#include "core/json_util.h"
#include "format/gguf.h"
#include "template/chat_template.h"

/* tokenizer_config.json's bos_token / eos_token: a string, or {"content": ...}. */
static char *config_token(const cJSON *cfg, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItemCaseSensitive(v, "content");
    return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

typedef struct template_src {
    char *tmpl, *bos, *eos;
} template_src;

/* A Hugging Face directory: the template of tokenizer_config.json (a string, or
 * a list of {name, template}: "default", else the first), else
 * chat_template.jinja or chat_template.json beside it; bos/eos as the config
 * names them (what transformers passes to the template). Only the small
 * config files are read, not the tokenizer itself. */
static int load_from_dir(const char *dir, template_src *ts) {
    char path[4096];
    wick_error err;
    if (path_join(path, sizeof path, dir, "tokenizer_config.json") == 0 && file_exists(path)) {
        cJSON *cfg = json_read_file(path, &err);
        if (!cfg) return cli_error("%s", err.msg);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, "chat_template");
        const char *tmpl = cJSON_IsString(v) ? v->valuestring : NULL;
        if (cJSON_IsArray(v)) {
            const cJSON *it;
            cJSON_ArrayForEach(it, v) {
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
                const cJSON *tt = cJSON_GetObjectItemCaseSensitive(it, "template");
                if (cJSON_IsString(tt) &&
                    (!tmpl || (cJSON_IsString(name) && !strcmp(name->valuestring, "default"))))
                    tmpl = tt->valuestring;
            }
        }
        ts->tmpl = tmpl ? strdup(tmpl) : NULL;
        ts->bos = config_token(cfg, "bos_token");
        ts->eos = config_token(cfg, "eos_token");
        cJSON_Delete(cfg);
    } else if (path_join(path, sizeof path, dir, "tokenizer.json") != 0 || !file_exists(path)) {
        return cli_error("%s: no tokenizer_config.json or tokenizer.json in this directory", dir);
    }
    if (!ts->tmpl && path_join(path, sizeof path, dir, "chat_template.jinja") == 0 && file_exists(path)) {
        ts->tmpl = file_read_all(path, NULL, &err);
        if (!ts->tmpl) return cli_error("%s", err.msg);
    }
    if (!ts->tmpl && path_join(path, sizeof path, dir, "chat_template.json") == 0 && file_exists(path)) {
        cJSON *j = json_read_file(path, &err);
        if (!j) return cli_error("%s", err.msg);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "chat_template");
        ts->tmpl = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
        cJSON_Delete(j);
    }
    return 0;
}

/* A GGUF model or vocab-only file: tokenizer.chat_template and the texts of the
 * BOS/EOS ids in tokenizer.ggml.tokens (read directly, so any tokenizer type works). */
static char *gguf_token(const gguf_file *f, const char *id_key) {
    int64_t id;
    wick_error err;
    const gguf_value *toks = gguf_get(f, "tokenizer.ggml.tokens");
    if (gguf_get_int(f, id_key, &id, &err) != 1 || !toks || toks->type != GGUF_ARRAY ||
        !toks->arr.strs || id < 0 || (uint64_t)id >= toks->arr.n)
        return NULL;
    return strndup(toks->arr.strs[id].ptr, (size_t)toks->arr.strs[id].len);
}

static int load_from_gguf(const char *path, template_src *ts) {
    wick_error err;
    gguf_file *f = gguf_open(path, &err);
    if (!f) return cli_error("%s", err.msg);
    int rc = 0;
    if (gguf_get_string(f, "tokenizer.chat_template", &ts->tmpl, &err) < 0) rc = cli_error("%s", err.msg);
    ts->bos = gguf_token(f, "tokenizer.ggml.bos_token_id");
    ts->eos = gguf_token(f, "tokenizer.ggml.eos_token_id");
    gguf_close(f);
    return rc;
}

int cmd_template(int argc, char **argv) {
    const char *model = NULL, *input = NULL, *thinking = NULL, *builtin = NULL;
    bool no_gen = false;
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--input", "-i", OPT_STR, &input, NULL},
        {"--no-generation-prompt", NULL, OPT_FLAG, &no_gen, NULL},
        {"--enable-thinking", NULL, OPT_STR, &thinking, NULL},
        {"--template", NULL, OPT_STR, &builtin, NULL},
    };
    const int prc = cli_parse("template", argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (prc) return prc < 0;
    if (!input) return cli_error("template: no conversation given (-i CONVERSATION.json)");
    if (!model && !builtin) return cli_error("template: no model given (-m SRC)");
    chat_template_opts o = {.add_generation_prompt = no_gen ? 0 : -1, .enable_thinking = -1};
    if (thinking) {
        if (!strcmp(thinking, "true")) o.enable_thinking = 1;
        else if (!strcmp(thinking, "false")) o.enable_thinking = 0;
        else return cli_error("template: --enable-thinking takes true or false, not \"%s\"", thinking);
    }
    const char *tmpl = NULL;
    if (builtin && !(tmpl = chat_template_builtin(builtin)))
        return cli_error("template: unknown template \"%s\" (choose one of %s)", builtin,
                         chat_template_builtin_names());

    wick_error err;
    char *conv = file_read_all(input, NULL, &err);
    if (!conv) return cli_error("%s", err.msg);

    template_src ts = {0};
    int rc = 1;
    if (model) {
        /* a directory, or a tokenizer_config.json / tokenizer.json path meaning its directory */
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", model);
        char *slash = strrchr(dir, '/');
        const char *base = slash ? slash + 1 : dir;
        if (!dir_exists(dir) && (!strcmp(base, "tokenizer_config.json") || !strcmp(base, "tokenizer.json"))) {
            if (!slash) snprintf(dir, sizeof dir, ".");
            else if (slash == dir) dir[1] = 0;
            else *slash = 0;
        }
        if (dir_exists(dir) ? load_from_dir(dir, &ts) : load_from_gguf(model, &ts)) goto done;
        if (!tmpl) tmpl = ts.tmpl;
        o.bos_token = ts.bos;
        o.eos_token = ts.eos;
    }
    if (!tmpl) {
        cli_error("model has no chat template; pass --template chatml|llama3|llama2|mistral");
        goto done;
    }
    cJSON *ctx = chat_template_context(conv, &o, &err);
    if (!ctx) {
        cli_error("%s (%s)", err.msg, input);
        goto done;
    }
    size_t len = 0;
    char *out = chat_template_render_cjson(tmpl, ctx, &len, &err);
    cJSON_Delete(ctx);
    if (!out) {
        cli_error("%s", err.msg);
        goto done;
    }
    rc = fwrite(out, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : cli_error("template: write error");
    free(out);
done:
    free(ts.tmpl);
    free(ts.bos);
    free(ts.eos);
    free(conv);
    return rc;
}
