/* anthropic_convert.c — the Anthropic Messages API translated both ways
 * (see anthropic.h): a Messages request into an OpenAI chat-completions
 * body for the shared chat turn, and the turn's parsed events into Messages
 * content blocks, whole or as SSE events. Pure: no model, no server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/anthropic.h"
#include "serve/json_out.h"

/* ================= the request ================= */

static const cJSON *get(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return v && !cJSON_IsNull(v) ? v : NULL;
}

static int oom(fld_error *e) { return fld_fail(e, 500, NULL, "out of memory"); }

/* Fields Anthropic defines that wick does not implement: any value but null
 * (or, nonempty, an empty array or object) asks for something wick cannot do. */
static const struct {
    const char *name;
    bool nonempty;
} UNSUPPORTED[] = {
    {"container", false},          /* code-execution containers */
    {"mcp_servers", true},         /* remote MCP tool servers */
    {"context_management", false}, /* server-side context editing */
    {"diagnostics", false},        /* prompt-cache miss diagnostics */
};

static int unsupported(const cJSON *b, fld_error *e) {
    for (size_t i = 0; i < sizeof UNSUPPORTED / sizeof UNSUPPORTED[0]; i++) {
        const cJSON *v = get(b, UNSUPPORTED[i].name);
        if (!v) continue;
        if (UNSUPPORTED[i].nonempty && (cJSON_IsArray(v) || cJSON_IsObject(v)) && !v->child) continue;
        return fld_fail(e, 400, UNSUPPORTED[i].name, "\"%s\" (Anthropic) is not supported by this server; leave it out",
                        UNSUPPORTED[i].name);
    }
    return 0;
}

/* A block's "type" string; NULL (e filled) if the block is not an object with one. */
static const char *block_type(const cJSON *blk, const char *where, fld_error *e) {
    const cJSON *t = get(blk, "type");
    if (!cJSON_IsObject(blk) || !cJSON_IsString(t)) {
        fld_fail(e, 400, where, "%s must be an object with a string \"type\"", where);
        return NULL;
    }
    return t->valuestring;
}

/* The 400 for a block wick cannot read. */
static int block_refused(const char *type, const char *where, fld_error *e) {
    if (!strcmp(type, "image") || !strcmp(type, "document") || !strcmp(type, "search_result"))
        return fld_fail(e, 400, where, "%s: \"%s\" content is not supported by this server (text only)", where, type);
    return fld_fail(e, 400, where, "%s: content blocks of type \"%s\" are not supported here", where, type);
}

/* A text block's text (its cache_control and citations ask nothing of the output). */
static int text_of(const cJSON *blk, const char *where, const char **out, fld_error *e) {
    const cJSON *t = get(blk, "text");
    if (!cJSON_IsString(t)) return fld_fail(e, 400, where, "%s: a text block needs a string \"text\"", where);
    *out = t->valuestring;
    return 0;
}

/* A string or an array of text blocks, joined with sep, appended to out. */
static int text_blocks(const cJSON *v, const char *where, const char *sep, wbuf *out, fld_error *e) {
    if (cJSON_IsString(v)) {
        wbuf_puts(out, v->valuestring);
        return 0;
    }
    if (!cJSON_IsArray(v)) return fld_fail(e, 400, where, "%s must be a string or an array of text blocks", where);
    int k = 0;
    const cJSON *blk;
    cJSON_ArrayForEach(blk, v) {
        char w[96];
        snprintf(w, sizeof w, "%s[%d]", where, k);
        const char *type = block_type(blk, w, e), *text = NULL;
        if (!type) return -1;
        if (strcmp(type, "text") != 0) return block_refused(type, w, e);
        if (text_of(blk, w, &text, e) < 0) return -1;
        if (k++) wbuf_puts(out, sep);
        wbuf_puts(out, text);
    }
    return 0;
}

static int add_message(cJSON *msgs, const char *role, const char *content, fld_error *e) {
    cJSON *m = cJSON_CreateObject();
    if (!m || !cJSON_AddStringToObject(m, "role", role) || !cJSON_AddStringToObject(m, "content", content)) {
        cJSON_Delete(m);
        return oom(e);
    }
    cJSON_AddItemToArray(msgs, m);
    return 0;
}

/* The user text gathered so far becomes a user message. */
static int flush_user(cJSON *msgs, wbuf *text, int *n_text, fld_error *e) {
    if (!*n_text) return 0;
    int rc = add_message(msgs, "user", text->data ? text->data : "", e);
    wbuf_reset(text);
    *n_text = 0;
    return rc;
}

/* A user turn: each tool_result is a "tool" message, in order, and the text
 * blocks join into one user message after them (the results answer the
 * assistant turn before, which templates need right after it; the text is
 * what the user adds). */
static int user_turn(cJSON *msgs, const cJSON *content, int i, fld_error *e) {
    char where[40];
    snprintf(where, sizeof where, "messages[%d].content", i);
    if (cJSON_IsString(content)) return add_message(msgs, "user", content->valuestring, e);
    if (!cJSON_IsArray(content))
        return fld_fail(e, 400, where, "%s must be a string or an array of content blocks", where);
    wbuf text = {0}, res = {0};
    int n_text = 0, k = 0, rc = 0;
    const cJSON *blk;
    cJSON_ArrayForEach(blk, content) {
        char w[56];
        snprintf(w, sizeof w, "%s[%d]", where, k++);
        const char *type = block_type(blk, w, e), *s = NULL;
        if (!type) {
            rc = -1;
            break;
        }
        if (!strcmp(type, "text")) {
            if ((rc = text_of(blk, w, &s, e)) < 0) break;
            if (n_text++) wbuf_puts(&text, "\n");
            wbuf_puts(&text, s);
        } else if (!strcmp(type, "tool_result")) {
            const cJSON *id = get(blk, "tool_use_id"), *err = get(blk, "is_error"), *c = get(blk, "content");
            if (!cJSON_IsString(id)) {
                rc = fld_fail(e, 400, w, "%s: a tool_result needs a string \"tool_use_id\"", w);
                break;
            }
            if (err && !cJSON_IsBool(err)) {
                rc = fld_fail(e, 400, w, "%s: \"is_error\" must be true or false", w);
                break;
            }
            wbuf_reset(&res);
            if (cJSON_IsTrue(err)) wbuf_puts(&res, "Error: "); /* the template has no error flag: say it in the text */
            char wc[72];
            snprintf(wc, sizeof wc, "%s.content", w);
            if (c && (rc = text_blocks(c, wc, "\n", &res, e)) < 0) break;
            cJSON *m = cJSON_CreateObject();
            if (!m || !cJSON_AddStringToObject(m, "role", "tool") ||
                !cJSON_AddStringToObject(m, "tool_call_id", id->valuestring) ||
                !cJSON_AddStringToObject(m, "content", res.data ? res.data : "")) {
                cJSON_Delete(m);
                rc = oom(e);
                break;
            }
            cJSON_AddItemToArray(msgs, m);
        } else if (!strcmp(type, "tool_use") || !strcmp(type, "thinking") || !strcmp(type, "redacted_thinking")) {
            rc = fld_fail(e, 400, w, "%s: \"%s\" blocks belong in assistant messages", w, type);
            break;
        } else {
            rc = block_refused(type, w, e);
            break;
        }
    }
    if (rc == 0) rc = flush_user(msgs, &text, &n_text, e);
    if (rc == 0 && (text.oom || res.oom)) rc = oom(e);
    wbuf_free(&text);
    wbuf_free(&res);
    return rc;
}

/* One tool_use block as an OpenAI tool call. */
static cJSON *tool_call(const cJSON *blk, const char *w, fld_error *e) {
    const cJSON *id = get(blk, "id"), *name = get(blk, "name"), *input = get(blk, "input");
    if (!cJSON_IsString(id) || !cJSON_IsString(name)) {
        fld_fail(e, 400, w, "%s: a tool_use block needs string \"id\" and \"name\"", w);
        return NULL;
    }
    if (input && !cJSON_IsObject(input)) {
        fld_fail(e, 400, w, "%s: a tool_use block's \"input\" must be an object", w);
        return NULL;
    }
    char *args = input ? cJSON_PrintUnformatted(input) : NULL;
    cJSON *tc = cJSON_CreateObject(), *fn = cJSON_CreateObject();
    if ((input && !args) || !tc || !fn || !cJSON_AddStringToObject(tc, "id", id->valuestring) ||
        !cJSON_AddStringToObject(tc, "type", "function") || !cJSON_AddStringToObject(fn, "name", name->valuestring) ||
        !cJSON_AddStringToObject(fn, "arguments", args ? args : "{}")) {
        free(args);
        cJSON_Delete(tc);
        cJSON_Delete(fn);
        oom(e);
        return NULL;
    }
    free(args);
    cJSON_AddItemToObject(tc, "function", fn);
    return tc;
}

/* An assistant turn: one message with its text, its thinking as
 * reasoning_content and its tool_use blocks as tool_calls. */
static int assistant_turn(cJSON *msgs, const cJSON *content, int i, fld_error *e) {
    char where[40];
    snprintf(where, sizeof where, "messages[%d].content", i);
    if (cJSON_IsString(content)) return add_message(msgs, "assistant", content->valuestring, e);
    if (!cJSON_IsArray(content))
        return fld_fail(e, 400, where, "%s must be a string or an array of content blocks", where);
    wbuf text = {0}, think = {0};
    cJSON *calls = cJSON_CreateArray();
    int k = 0, rc = calls ? 0 : oom(e), n_think = 0;
    const cJSON *blk;
    cJSON_ArrayForEach(blk, content) {
        if (rc < 0) break;
        char w[56];
        snprintf(w, sizeof w, "%s[%d]", where, k++);
        const char *type = block_type(blk, w, e), *s = NULL;
        if (!type) {
            rc = -1;
        } else if (!strcmp(type, "text")) {
            if ((rc = text_of(blk, w, &s, e)) == 0) wbuf_puts(&text, s);
        } else if (!strcmp(type, "thinking")) {
            /* the signature is Anthropic's proof of its own thinking: nothing to check here */
            const cJSON *t = get(blk, "thinking");
            if (!cJSON_IsString(t)) {
                rc = fld_fail(e, 400, w, "%s: a thinking block needs a string \"thinking\"", w);
            } else {
                if (n_think++) wbuf_puts(&think, "\n");
                wbuf_puts(&think, t->valuestring);
            }
        } else if (!strcmp(type, "tool_use")) {
            cJSON *tc = tool_call(blk, w, e);
            if (!tc) rc = -1;
            else cJSON_AddItemToArray(calls, tc);
        } else if (!strcmp(type, "redacted_thinking")) {
            rc = fld_fail(e, 400, w, "%s: \"redacted_thinking\" blocks (Anthropic's encrypted thinking) cannot be read here", w);
        } else if (!strcmp(type, "tool_result")) {
            rc = fld_fail(e, 400, w, "%s: \"tool_result\" blocks belong in user messages", w);
        } else {
            rc = block_refused(type, w, e);
        }
    }
    if (rc == 0 && (text.oom || think.oom)) rc = oom(e);
    cJSON *m = rc == 0 ? cJSON_CreateObject() : NULL;
    if (rc == 0) {
        if (!m || !cJSON_AddStringToObject(m, "role", "assistant") ||
            !cJSON_AddStringToObject(m, "content", text.data ? text.data : "") ||
            (n_think && !cJSON_AddStringToObject(m, "reasoning_content", think.data ? think.data : ""))) {
            rc = oom(e);
        } else if (cJSON_GetArraySize(calls) > 0) {
            cJSON_AddItemToObject(m, "tool_calls", calls);
            calls = NULL;
        }
    }
    if (rc == 0) cJSON_AddItemToArray(msgs, m);
    else cJSON_Delete(m);
    cJSON_Delete(calls);
    wbuf_free(&text);
    wbuf_free(&think);
    return rc;
}

static int messages(const cJSON *b, cJSON *out, bool *prefill, fld_error *e) {
    const cJSON *ms = get(b, "messages");
    if (!ms) return fld_fail(e, 400, "messages", "\"messages\" is required");
    if (!cJSON_IsArray(ms)) return fld_fail(e, 400, "messages", "\"messages\" must be an array");
    if (!ms->child) return fld_fail(e, 400, "messages", "\"messages\" is empty");
    int i = 0;
    const cJSON *m;
    *prefill = false;
    cJSON_ArrayForEach(m, ms) {
        char w[48];
        snprintf(w, sizeof w, "messages[%d]", i);
        const cJSON *role = get(m, "role"), *content = get(m, "content");
        if (!cJSON_IsObject(m) || !cJSON_IsString(role))
            return fld_fail(e, 400, w, "%s must be an object with a string \"role\"", w);
        if (!content) return fld_fail(e, 400, w, "%s needs \"content\"", w);
        const bool user = !strcmp(role->valuestring, "user");
        if (!user && strcmp(role->valuestring, "assistant") != 0)
            return fld_fail(e, 400, w, "%s.role must be \"user\" or \"assistant\", not \"%s\"", w, role->valuestring);
        if ((user ? user_turn(out, content, i, e) : assistant_turn(out, content, i, e)) < 0) return -1;
        /* a final assistant message is a prefill: the reply continues it
         * (not when it calls tools: the reply then follows the calls) */
        const cJSON *last = cJSON_GetArrayItem(out, cJSON_GetArraySize(out) - 1);
        *prefill = !user && !get(last, "tool_calls");
        i++;
    }
    return 0;
}

static int tools(const cJSON *b, cJSON *out, fld_error *e) {
    const cJSON *ts = get(b, "tools");
    if (!ts) return 0;
    if (!cJSON_IsArray(ts)) return fld_fail(e, 400, "tools", "\"tools\" must be an array");
    cJSON *arr = cJSON_AddArrayToObject(out, "tools");
    if (!arr) return oom(e);
    int i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, ts) {
        char w[48];
        snprintf(w, sizeof w, "tools[%d]", i++);
        if (!cJSON_IsObject(t)) return fld_fail(e, 400, w, "%s must be an object", w);
        const cJSON *type = get(t, "type"), *name = get(t, "name"), *desc = get(t, "description"),
                    *schema = get(t, "input_schema"), *strict = get(t, "strict");
        if (type && (!cJSON_IsString(type) || strcmp(type->valuestring, "custom") != 0))
            return fld_fail(e, 400, w, "%s: only client tools (\"type\": \"custom\") are supported; \"%s\" is a server tool",
                            w, cJSON_IsString(type) ? type->valuestring : "?");
        if (!cJSON_IsString(name) || !name->valuestring[0]) return fld_fail(e, 400, w, "%s needs a string \"name\"", w);
        if (desc && !cJSON_IsString(desc)) return fld_fail(e, 400, w, "%s.description must be a string", w);
        if (!cJSON_IsObject(schema)) return fld_fail(e, 400, w, "%s needs an object \"input_schema\"", w);
        if (strict && !cJSON_IsBool(strict)) return fld_fail(e, 400, w, "%s.strict must be true or false", w);
        const cJSON *ex = get(t, "input_examples");
        if (ex && (!cJSON_IsArray(ex) || ex->child))
            return fld_fail(e, 400, w, "%s.input_examples is not supported by this server; leave it out", w);
        cJSON *ft = cJSON_CreateObject(), *fn = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, ft);
        if (!ft || !fn || !cJSON_AddStringToObject(ft, "type", "function")) {
            cJSON_Delete(fn);
            return oom(e);
        }
        cJSON_AddItemToObject(ft, "function", fn);
        cJSON_AddStringToObject(fn, "name", name->valuestring);
        if (desc) cJSON_AddStringToObject(fn, "description", desc->valuestring);
        cJSON_AddItemToObject(fn, "parameters", cJSON_Duplicate(schema, 1));
        if (strict) cJSON_AddBoolToObject(fn, "strict", cJSON_IsTrue(strict));
    }
    return 0;
}

static int tool_choice(const cJSON *b, cJSON *out, fld_error *e) {
    const cJSON *tc = get(b, "tool_choice");
    if (!tc) return 0;
    const cJSON *type = get(tc, "type"), *par = get(tc, "disable_parallel_tool_use"), *name = get(tc, "name");
    if (!cJSON_IsObject(tc) || !cJSON_IsString(type))
        return fld_fail(e, 400, "tool_choice", "\"tool_choice\" must be an object with a string \"type\"");
    if (par && !cJSON_IsBool(par))
        return fld_fail(e, 400, "tool_choice", "\"tool_choice.disable_parallel_tool_use\" must be true or false");
    const char *t = type->valuestring;
    if (!strcmp(t, "auto")) cJSON_AddStringToObject(out, "tool_choice", "auto");
    else if (!strcmp(t, "any")) cJSON_AddStringToObject(out, "tool_choice", "required");
    else if (!strcmp(t, "none")) cJSON_AddStringToObject(out, "tool_choice", "none");
    else if (!strcmp(t, "tool")) {
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return fld_fail(e, 400, "tool_choice", "\"tool_choice\" of type \"tool\" needs a string \"name\"");
        cJSON *o = cJSON_AddObjectToObject(out, "tool_choice"), *fn = o ? cJSON_AddObjectToObject(o, "function") : NULL;
        if (!fn || !cJSON_AddStringToObject(o, "type", "function") || !cJSON_AddStringToObject(fn, "name", name->valuestring))
            return oom(e);
    } else {
        return fld_fail(e, 400, "tool_choice", "\"tool_choice.type\" must be auto, any, tool or none, not \"%s\"", t);
    }
    if (cJSON_IsTrue(par) && strcmp(t, "none") != 0) cJSON_AddBoolToObject(out, "parallel_tool_calls", false);
    return 0;
}

static int thinking(const cJSON *b, cJSON *out, anth_req_opts *opts, fld_error *e) {
    const cJSON *th = get(b, "thinking");
    if (!th) return 0;
    const cJSON *type = get(th, "type"), *display = get(th, "display");
    if (!cJSON_IsObject(th) || !cJSON_IsString(type))
        return fld_fail(e, 400, "thinking", "\"thinking\" must be an object with a string \"type\"");
    const char *t = type->valuestring;
    if (display) {
        if (!cJSON_IsString(display) ||
            (strcmp(display->valuestring, "summarized") != 0 && strcmp(display->valuestring, "omitted") != 0))
            return fld_fail(e, 400, "thinking", "\"thinking.display\" must be \"summarized\" or \"omitted\"");
        opts->omit_thinking = !strcmp(display->valuestring, "omitted");
    }
    int on;
    if (!strcmp(t, "enabled")) {
        /* the budget bounds nothing beyond max_tokens here: reasoning counts toward max_tokens */
        const cJSON *bt = get(th, "budget_tokens");
        if (!cJSON_IsNumber(bt) || bt->valuedouble < 1 || bt->valuedouble != (double)(long long)bt->valuedouble)
            return fld_fail(e, 400, "thinking", "\"thinking.budget_tokens\" must be a positive integer");
        on = 1;
    } else if (!strcmp(t, "disabled")) {
        on = 0;
    } else if (!strcmp(t, "adaptive")) {
        on = -1; /* the model decides: its template's default */
    } else {
        return fld_fail(e, 400, "thinking", "\"thinking.type\" must be enabled, disabled or adaptive here, not \"%s\"", t);
    }
    if (on < 0) return 0;
    cJSON *kw = cJSON_AddObjectToObject(out, "chat_template_kwargs");
    if (!kw || !cJSON_AddBoolToObject(kw, "enable_thinking", on == 1)) return oom(e);
    return 0;
}

static int output_config(const cJSON *b, cJSON *out, fld_error *e) {
    const cJSON *oc = get(b, "output_config");
    if (!oc) return 0;
    if (!cJSON_IsObject(oc)) return fld_fail(e, 400, "output_config", "\"output_config\" must be an object");
    if (get(oc, "effort"))
        return fld_fail(e, 400, "output_config.effort", "\"output_config.effort\" (Anthropic) is not supported by this server; leave it out");
    const cJSON *f = get(oc, "format");
    if (!f) return 0;
    const cJSON *type = get(f, "type"), *schema = get(f, "schema");
    if (!cJSON_IsObject(f) || !cJSON_IsString(type) || strcmp(type->valuestring, "json_schema") != 0 ||
        !cJSON_IsObject(schema))
        return fld_fail(e, 400, "output_config.format",
                        "\"output_config.format\" must be {\"type\": \"json_schema\", \"schema\": {...}}");
    cJSON *rf = cJSON_AddObjectToObject(out, "response_format"), *js = rf ? cJSON_AddObjectToObject(rf, "json_schema") : NULL;
    if (!js || !cJSON_AddStringToObject(rf, "type", "json_schema") || !cJSON_AddStringToObject(js, "name", "output") ||
        !cJSON_AddBoolToObject(js, "strict", true))
        return oom(e);
    cJSON_AddItemToObject(js, "schema", cJSON_Duplicate(schema, 1));
    return 0;
}

/* A number field copied as is (the chat turn checks its range and names it). */
static int copy_number(const cJSON *b, const char *key, cJSON *out, fld_error *e) {
    const cJSON *v = get(b, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) return fld_fail(e, 400, key, "\"%s\" must be a number", key);
    cJSON_AddItemToObject(out, key, cJSON_Duplicate(v, 0));
    return 0;
}

static int generation(const cJSON *b, cJSON *out, anth_req_opts *opts, fld_error *e) {
    const cJSON *mt = get(b, "max_tokens");
    if (!mt) return fld_fail(e, 400, "max_tokens", "\"max_tokens\" is required");
    if (!cJSON_IsNumber(mt) || mt->valuedouble != (double)(long long)mt->valuedouble)
        return fld_fail(e, 400, "max_tokens", "\"max_tokens\" must be an integer");
    if (mt->valuedouble < 0 || mt->valuedouble > 2147483647.0)
        return fld_fail(e, 400, "max_tokens", "\"max_tokens\" must be between 0 and 2147483647");
    opts->prefill_only = mt->valuedouble == 0; /* only warm the prompt cache */
    if (!opts->prefill_only) cJSON_AddNumberToObject(out, "max_tokens", mt->valuedouble);
    if (copy_number(b, "temperature", out, e) < 0 || copy_number(b, "top_p", out, e) < 0 ||
        copy_number(b, "top_k", out, e) < 0)
        return -1;
    const cJSON *st = get(b, "stream");
    if (st && !cJSON_IsBool(st)) return fld_fail(e, 400, "stream", "\"stream\" must be true or false");
    opts->stream = cJSON_IsTrue(st);
    if (st) cJSON_AddBoolToObject(out, "stream", opts->stream);
    const cJSON *ss = get(b, "stop_sequences");
    if (ss) {
        if (!cJSON_IsArray(ss)) return fld_fail(e, 400, "stop_sequences", "\"stop_sequences\" must be an array of strings");
        const cJSON *it;
        cJSON_ArrayForEach(it, ss) if (!cJSON_IsString(it))
            return fld_fail(e, 400, "stop_sequences", "\"stop_sequences\" must be an array of strings");
        cJSON_AddItemToObject(out, "stop", cJSON_Duplicate(ss, 1));
    }
    return 0;
}

cJSON *anth_to_openai(const cJSON *b, bool count_tokens, anth_req_opts *opts, fld_error *e) {
    memset(opts, 0, sizeof *opts);
    if (!cJSON_IsObject(b)) {
        fld_fail(e, 400, NULL, "request body must be a JSON object");
        return NULL;
    }
    cJSON *out = cJSON_CreateObject(), *msgs = out ? cJSON_AddArrayToObject(out, "messages") : NULL;
    if (!msgs) {
        cJSON_Delete(out);
        oom(e);
        return NULL;
    }
    int rc = unsupported(b, e);
    const cJSON *model = get(b, "model");
    if (rc == 0 && model) {
        if (!cJSON_IsString(model)) rc = fld_fail(e, 400, "model", "\"model\" must be a string");
        else cJSON_AddStringToObject(out, "model", model->valuestring);
    }
    const cJSON *sys = get(b, "system");
    if (rc == 0 && sys) {
        wbuf s = {0};
        rc = text_blocks(sys, "system", "\n", &s, e);
        if (rc == 0 && s.oom) rc = oom(e);
        if (rc == 0 && s.len) rc = add_message(msgs, "system", s.data, e);
        wbuf_free(&s);
    }
    bool prefill = false;
    if (rc == 0) rc = messages(b, msgs, &prefill, e);
    if (rc == 0 && prefill) {
        cJSON_AddBoolToObject(out, "continue_final_message", true);
        cJSON_AddBoolToObject(out, "add_generation_prompt", false);
    }
    if (rc == 0) rc = tools(b, out, e);
    if (rc == 0) rc = tool_choice(b, out, e);
    if (rc == 0) rc = thinking(b, out, opts, e);
    if (rc == 0) rc = output_config(b, out, e);
    if (rc == 0 && !count_tokens) rc = generation(b, out, opts, e);
    if (rc < 0) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

void anth_rename_param(fld_error *e) {
    static const char *const MAP[][2] = {
        {"stop", "stop_sequences"},
        {"max_completion_tokens", "max_tokens"},
        {"parallel_tool_calls", "tool_choice"},
        {"chat_template_kwargs", "thinking"},
        {"response_format", "output_config.format"},
    };
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (!strcmp(e->param, MAP[i][0])) {
            snprintf(e->param, sizeof e->param, "%s", MAP[i][1]);
            return;
        }
}

/* ================= the response ================= */

const char *anth_error_type(int status) {
    switch (status) {
    case 400: case 422: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503: case 529: return "overloaded_error";
    default: return status >= 400 && status < 500 ? "invalid_request_error" : "api_error";
    }
}

void anth_error_json(wbuf *o, int status, const char *msg) {
    wbuf_printf(o, "{\"type\":\"error\",\"error\":{\"type\":\"%s\",\"message\":", anth_error_type(status));
    json_put_str(o, msg, strlen(msg));
    wbuf_puts(o, "}}");
}

void anth_sse_error(wbuf *o, int status, const char *msg) {
    wbuf_puts(o, "event: error\ndata: ");
    anth_error_json(o, status, msg);
    wbuf_puts(o, "\n\n");
}

const char *anth_stop_reason(const char *finish) {
    if (finish && !strcmp(finish, "tool_calls")) return "tool_use";
    if (finish && !strcmp(finish, "length")) return "max_tokens";
    return "end_turn";
}

void anth_tool_id(const char *call_id, char *out, size_t cap) {
    if (!strncmp(call_id, "call_", 5)) call_id += 5;
    snprintf(out, cap, "toolu_%s", call_id);
}

void anth_usage_json(wbuf *o, int prompt_tokens, int cached_tokens, int output_tokens) {
    if (cached_tokens > prompt_tokens) cached_tokens = prompt_tokens;
    wbuf_printf(o,
                "{\"input_tokens\":%d,\"output_tokens\":%d,\"cache_read_input_tokens\":%d,"
                "\"cache_creation_input_tokens\":0}",
                prompt_tokens - cached_tokens, output_tokens, cached_tokens);
}

void anth_sse_start(wbuf *o, const char *id, const char *model, int prompt_tokens) {
    wbuf_puts(o, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":");
    json_put_str(o, id, strlen(id));
    wbuf_puts(o, ",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
    json_put_str(o, model, strlen(model));
    wbuf_puts(o, ",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":");
    anth_usage_json(o, prompt_tokens, 0, 0);
    wbuf_puts(o, "}}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n");
}

void anth_sse_finish(wbuf *o, const char *stop_reason, const char *stop_sequence, int prompt_tokens,
                     int cached_tokens, int output_tokens) {
    wbuf_printf(o,
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\","
                "\"stop_sequence\":",
                stop_reason);
    if (stop_sequence) json_put_str(o, stop_sequence, strlen(stop_sequence));
    else wbuf_puts(o, "null");
    wbuf_puts(o, "},\"usage\":");
    anth_usage_json(o, prompt_tokens, cached_tokens, output_tokens);
    wbuf_puts(o, "}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
}

int anth_stop_match(const char *raw, size_t len, const char *const *stops, int n) {
    int best = -1;
    size_t at = 0, best_len = 0;
    for (int i = 0; i < n; i++) {
        const size_t l = strlen(stops[i]);
        const char *p = l ? memmem(raw, len, stops[i], l) : NULL;
        if (!p) continue;
        const size_t k = (size_t)(p - raw);
        if (best < 0 || k < at || (k == at && l < best_len)) best = i, at = k, best_len = l;
    }
    return best;
}

enum { B_NONE, B_THINKING, B_TEXT, B_TOOL };

void anth_blocks_init(anth_blocks *b, bool stream, bool omit_thinking) {
    memset(b, 0, sizeof *b);
    b->stream = stream;
    b->omit_thinking = omit_thinking;
    if (!stream && !(b->content = cJSON_CreateArray())) b->oom = true;
}

static void sse_head(anth_blocks *b, const char *event) {
    wbuf_printf(b->sse, "event: %s\ndata: {\"type\":\"%s\",\"index\":%d", event, event, b->n - 1);
}

/* A piece of the open block's text or arguments. */
static void delta(anth_blocks *b, const char *s, size_t n) {
    if (!n) return;
    if (b->open == B_THINKING && b->omit_thinking) return;
    if (b->open == B_TOOL) wbuf_put(&b->args, s, n);
    if (!b->stream) {
        if (b->open != B_TOOL) wbuf_put(&b->text, s, n);
        return;
    }
    static const char *const KIND[][2] = {
        [B_THINKING] = {"thinking_delta", "thinking"},
        [B_TEXT] = {"text_delta", "text"},
        [B_TOOL] = {"input_json_delta", "partial_json"},
    };
    sse_head(b, "content_block_delta");
    wbuf_printf(b->sse, ",\"delta\":{\"type\":\"%s\",\"%s\":", KIND[b->open][0], KIND[b->open][1]);
    json_put_str(b->sse, s, n);
    wbuf_puts(b->sse, "}}\n\n");
}

static void put_str_field(wbuf *o, const char *key, const char *s) {
    wbuf_printf(o, ",\"%s\":", key);
    json_put_str(o, s, strlen(s));
}

static void open_block(anth_blocks *b, int kind, const char *call_id, const char *name) {
    b->open = kind;
    b->n++;
    wbuf_reset(&b->text);
    wbuf_reset(&b->args);
    if (kind == B_TOOL) {
        anth_tool_id(call_id ? call_id : "", b->tool_id, sizeof b->tool_id);
        snprintf(b->tool_name, sizeof b->tool_name, "%s", name ? name : "");
    }
    if (!b->stream) return;
    sse_head(b, "content_block_start");
    if (kind == B_THINKING) {
        wbuf_puts(b->sse, ",\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n");
    } else if (kind == B_TEXT) {
        wbuf_puts(b->sse, ",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    } else {
        wbuf_puts(b->sse, ",\"content_block\":{\"type\":\"tool_use\"");
        put_str_field(b->sse, "id", b->tool_id);
        put_str_field(b->sse, "name", b->tool_name);
        wbuf_puts(b->sse, ",\"input\":{}}}\n\n");
    }
}

/* The whole-answer block of the open block. */
static cJSON *whole_block(anth_blocks *b) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    const char *text = b->text.data ? b->text.data : "";
    if (b->open == B_THINKING) {
        cJSON_AddStringToObject(o, "type", "thinking");
        cJSON_AddStringToObject(o, "thinking", text);
        cJSON_AddStringToObject(o, "signature", "");
    } else if (b->open == B_TEXT) {
        cJSON_AddStringToObject(o, "type", "text");
        cJSON_AddStringToObject(o, "text", text);
    } else {
        cJSON_AddStringToObject(o, "type", "tool_use");
        cJSON_AddStringToObject(o, "id", b->tool_id);
        cJSON_AddStringToObject(o, "name", b->tool_name);
        /* arguments cut short (the turn hit max_tokens) do not parse: the
         * input is then empty, as the streamed deltas still show what came */
        cJSON *in = b->args.data ? cJSON_ParseWithLength(b->args.data, b->args.len) : NULL;
        if (!cJSON_IsObject(in)) {
            cJSON_Delete(in);
            in = cJSON_CreateObject();
        }
        cJSON_AddItemToObject(o, "input", in);
    }
    return o;
}

static void close_block(anth_blocks *b) {
    if (b->open == B_NONE) return;
    if (b->stream) {
        sse_head(b, "content_block_stop");
        wbuf_puts(b->sse, "}\n\n");
    } else {
        cJSON *o = whole_block(b);
        if (!o || b->text.oom || b->args.oom) b->oom = true;
        if (o && b->content) cJSON_AddItemToArray(b->content, o);
        else cJSON_Delete(o);
    }
    b->open = B_NONE;
}

static bool all_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r') return false;
    return true;
}

static void text_ev(anth_blocks *b, int kind, const char *s, size_t n) {
    if (b->open == kind) {
        delta(b, s, n);
        return;
    }
    if (all_space(s, n)) { /* hold it: it starts a block only if more text of its kind follows */
        if (b->pending_kind != kind) wbuf_reset(&b->pending);
        b->pending_kind = kind;
        wbuf_put(&b->pending, s, n);
        return;
    }
    close_block(b);
    open_block(b, kind, NULL, NULL);
    if (b->pending_kind == kind && b->pending.len) delta(b, b->pending.data, b->pending.len);
    wbuf_reset(&b->pending);
    b->pending_kind = 0;
    delta(b, s, n);
}

int anth_blocks_on_ev(void *user, const tool_ev *ev) {
    anth_blocks *b = user;
    switch (ev->kind) {
    case TOOL_EV_CONTENT: text_ev(b, B_TEXT, ev->text, ev->len); break;
    case TOOL_EV_REASONING: text_ev(b, B_THINKING, ev->text, ev->len); break;
    case TOOL_EV_CALL_BEGIN:
        close_block(b);
        wbuf_reset(&b->pending);
        b->pending_kind = 0;
        open_block(b, B_TOOL, ev->id, ev->name);
        break;
    case TOOL_EV_CALL_ARGS:
        if (b->open == B_TOOL) delta(b, ev->text, ev->len);
        break;
    case TOOL_EV_CALL_END:
        if (b->open != B_TOOL) break;
        /* the whole arguments: send what the deltas have not (all of it when none came) */
        if (ev->len >= b->args.len && (!b->args.len || !memcmp(ev->text, b->args.data, b->args.len)))
            delta(b, ev->text + b->args.len, ev->len - b->args.len);
        else if (!b->stream) { /* the deltas and the whole differ: the whole wins */
            wbuf_reset(&b->args);
            wbuf_put(&b->args, ev->text, ev->len);
        }
        close_block(b);
        break;
    }
    return 0;
}

void anth_blocks_end(anth_blocks *b) {
    close_block(b);
    /* a reply of whitespace alone is still the reply */
    if (b->n == 0 && b->pending_kind == B_TEXT && b->pending.len) {
        open_block(b, B_TEXT, NULL, NULL);
        delta(b, b->pending.data, b->pending.len);
        close_block(b);
    }
    wbuf_reset(&b->pending);
    b->pending_kind = 0;
}

cJSON *anth_blocks_content(anth_blocks *b) {
    cJSON *c = b->content;
    b->content = NULL;
    return c;
}

void anth_blocks_free(anth_blocks *b) {
    wbuf_free(&b->pending);
    wbuf_free(&b->text);
    wbuf_free(&b->args);
    cJSON_Delete(b->content);
    b->content = NULL;
}
