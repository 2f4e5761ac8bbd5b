/* tool_parse_json.c — the incremental JSON reader of tool_parse.c: it reads a
 * call region byte by byte (a call object, an array of them, an object with
 * "tool_calls", or a bare arguments value), finds each call's "name",
 * "arguments"/"parameters" (or an OpenAI-style "function" object holding
 * them) and "id", and streams the arguments' raw text as soon as the call has
 * begun. Every decision depends on the bytes read so far only, so any split
 * of the text gives the same calls. */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "serve/tool_parse_int.h"

enum { /* what a container expects next */
    TPS_VALUE,        /* a value (the top level, or an object after ':') */
    TPS_KEY_OR_END,   /* after '{' */
    TPS_KEY,          /* after ',' in an object */
    TPS_COLON,
    TPS_COMMA_OR_END, /* after a value */
    TPS_VAL_OR_END,   /* after '[' */
    TPS_DONE,         /* the top level: the value is complete */
};
enum { TPK_NONE, TPK_OTHER, TPK_NAME, TPK_ARGS, TPK_ID, TPK_FUNC, TPK_CALLS };
enum { TPR_OTHER, TPR_CALL, TPR_FUNC, TPR_CALLS };

static void oom(tool_parser *p) {
    if (!p->rc) p->rc = -1;
}

/* The JSON string token cb[a, b) decoded into out (false if it is none). */
static bool decode_string(tool_parser *p, size_t a, size_t b, wbuf *out) {
    cJSON *j = cJSON_ParseWithLength(p->cb.data + a, b - a);
    bool ok = cJSON_IsString(j) && j->valuestring;
    if (ok) {
        wbuf_reset(out);
        if (!wbuf_puts(out, j->valuestring)) oom(p);
    }
    cJSON_Delete(j);
    return ok;
}

static void call_reset(tp_call *c) {
    c->open = c->begun = c->args_key = c->has_name = c->has_id = false;
    c->args_set = c->args_done = false;
    c->args_type = 0;
    c->args_start = c->args_end = c->args_sent = 0;
    c->owner = 0;
    wbuf_reset(&c->name);
    wbuf_reset(&c->id);
    wbuf_reset(&c->acc);
}

void tp_json_flush(tool_parser *p) {
    tp_call *c = &p->c;
    if (!c->begun || !c->args_set || (c->args_type != '{' && c->args_type != '[')) return;
    size_t upto = c->args_done ? c->args_end : p->cb.len;
    if (upto > c->args_sent) {
        tp_call_args(p, p->cb.data + c->args_sent, upto - c->args_sent);
        c->args_sent = upto;
    }
}

/* Send the rest of the arguments and CALL_END. */
static void finish_call(tool_parser *p) {
    tp_call *c = &p->c;
    if (!c->begun) {
        c->open = false;
        return;
    }
    if (!c->args_set) {
        tp_call_args(p, "{}", 2);
    } else if (c->args_type == '{' || c->args_type == '[') {
        tp_json_flush(p);
    } else if (c->args_sent == c->args_start) { /* a string or bare value, sent once */
        size_t a = c->args_start, b = c->args_done ? c->args_end : p->cb.len;
        wbuf d = {0};
        if (c->args_type == '"' && c->args_done && decode_string(p, a, b, &d))
            tp_call_args(p, d.data, d.len);
        else if (c->args_type == 'b' && b - a == 4 && memcmp(p->cb.data + a, "null", 4) == 0)
            tp_call_args(p, "{}", 2);
        else
            tp_call_args(p, p->cb.data + a, b - a);
        wbuf_free(&d);
        c->args_sent = b;
    }
    tp_call_end(p);
    c->begun = c->open = false;
}

/* Begin the call when enough of it is known. */
static void try_begin(tool_parser *p, bool closing) {
    tp_call *c = &p->c;
    if (!c->open || c->begun || !c->has_name || c->name.len == 0) return;
    if (!p->tagged && !c->args_key) return; /* a bare object: "name" alone may be any JSON */
    bool mistral = p->f.family == TOOL_FAMILY_MISTRAL;
    if (mistral && !c->has_id && !closing) return; /* its own id may still come */
    tp_call_begin(p, c->name.data, mistral && c->has_id ? c->id.data : NULL);
    c->begun = true;
    p->any_begun = true;
    tp_json_flush(p);
}

void tp_json_start(tool_parser *p, bool args_mode, bool tagged) {
    p->nstk = 0;
    if (!GROW_ARRAY(p->stk, 1, &p->capstk)) {
        oom(p);
        return;
    }
    p->stk[0] = (tp_frame){.kind = 'T', .st = TPS_VALUE};
    p->nstk = 1;
    p->in_str = p->esc = p->in_bare = p->str_key = false;
    p->args_mode = args_mode;
    p->tagged = tagged;
    p->json_base = p->cb.len;
    call_reset(&p->c);
    p->any_begun = args_mode;
    p->c.open = p->c.begun = args_mode; /* the caller sends CALL_BEGIN */
}

/* Does the frame at index i name the open call's fields? */
static bool owns(const tool_parser *p, size_t i) {
    const tp_frame *f = &p->stk[i];
    if (!p->c.open) return false;
    if (f->role == TPR_CALL) return p->c.owner == i;
    if (f->role == TPR_FUNC) return i > 0 && p->c.owner == i - 1;
    return false;
}

/* A value of type t starts at off in the innermost container; for a
 * container, the role it gets. */
static unsigned char value_begin(tool_parser *p, size_t off, unsigned char t) {
    size_t i = p->nstk - 1;
    tp_frame *f = &p->stk[i];
    tp_call *c = &p->c;
    f->vstart = off;
    f->vtype = t;
    if (f->kind == 'T') {
        if (p->args_mode) {
            c->args_set = true, c->args_start = c->args_sent = off, c->args_type = t;
            return TPR_OTHER;
        }
        return t == '{' ? TPR_CALL : t == '[' ? TPR_CALLS : TPR_OTHER;
    }
    if (f->role == TPR_CALLS) return t == '{' ? TPR_CALL : TPR_OTHER;
    if (!owns(p, i)) return TPR_OTHER;
    if (f->key == TPK_ARGS && !c->args_set)
        c->args_set = true, c->args_start = c->args_sent = off, c->args_type = t;
    if (f->key == TPK_FUNC && t == '{' && f->role == TPR_CALL) return TPR_FUNC;
    if (f->key == TPK_CALLS && t == '[' && f->role == TPR_CALL && i == 1 && !c->has_name && !c->begun)
        return TPR_CALLS;
    return TPR_OTHER;
}

/* The value being read in the innermost container ended at end; TPJ_DONE
 * when it was the top-level value. */
static int value_end(tool_parser *p, size_t end) {
    size_t i = p->nstk - 1;
    tp_frame *f = &p->stk[i];
    tp_call *c = &p->c;
    if (f->kind == 'T') {
        f->st = TPS_DONE;
        if (p->args_mode) {
            c->args_end = end, c->args_done = true;
            finish_call(p);
        }
        return TPJ_DONE;
    }
    f->st = TPS_COMMA_OR_END;
    if (f->kind == '{' && owns(p, i)) {
        if (f->key == TPK_NAME && f->vtype == '"' && !c->has_name) {
            c->has_name = decode_string(p, f->vstart, end, &c->name);
            try_begin(p, false);
        } else if (f->key == TPK_ID && f->vtype == '"' && !c->has_id) {
            c->has_id = decode_string(p, f->vstart, end, &c->id) && c->id.len > 0;
            try_begin(p, false);
        } else if (f->key == TPK_ARGS && c->args_set && !c->args_done && c->args_start == f->vstart) {
            c->args_end = end, c->args_done = true;
            tp_json_flush(p);
        }
    }
    return TPJ_MORE;
}

static int push(tool_parser *p, unsigned char kind, unsigned char role) {
    if (role == TPR_CALL && p->c.open && p->c.begun) role = TPR_OTHER;
    if (!GROW_ARRAY(p->stk, p->nstk + 1, &p->capstk)) {
        oom(p);
        return TPJ_ERR;
    }
    p->stk[p->nstk] = (tp_frame){.kind = kind, .st = kind == '{' ? TPS_KEY_OR_END : TPS_VAL_OR_END, .role = role};
    if (role == TPR_CALL) {
        call_reset(&p->c);
        p->c.open = true;
        p->c.owner = p->nstk;
    }
    p->nstk++;
    return TPJ_MORE;
}

static int pop(tool_parser *p, size_t end) {
    size_t i = p->nstk - 1;
    if (p->stk[i].role == TPR_CALL && owns(p, i)) {
        try_begin(p, true);
        finish_call(p);
        p->c.open = false;
    }
    p->nstk--;
    return value_end(p, end);
}

static unsigned char classify_key(const char *s, size_t n) {
    static const struct {
        const char *k;
        unsigned char v;
    } keys[] = {{"name", TPK_NAME},     {"arguments", TPK_ARGS},  {"parameters", TPK_ARGS},
                {"id", TPK_ID},         {"function", TPK_FUNC}, {"tool_calls", TPK_CALLS}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].k) == n && memcmp(keys[i].k, s, n) == 0) return keys[i].v;
    return TPK_OTHER;
}

static bool bare_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' ||
           c == '-' || c == '.';
}

int tp_json_byte(tool_parser *p) {
    if (p->nstk == 0) return TPJ_ERR;
    size_t off = p->cb.len - 1;
    char ch = p->cb.data[off];
    if (p->in_str) {
        if (p->esc) {
            p->esc = false;
        } else if (ch == '\\') {
            p->esc = true;
        } else if (ch == '"') {
            p->in_str = false;
            if (!p->str_key) return value_end(p, off + 1);
            tp_frame *f = &p->stk[p->nstk - 1];
            f->key = classify_key(p->cb.data + p->kstart + 1, off - p->kstart - 1);
            f->st = TPS_COLON;
            if (f->key == TPK_ARGS && owns(p, p->nstk - 1)) {
                p->c.args_key = true;
                try_begin(p, false);
            }
        }
        return TPJ_MORE;
    }
    int r = TPJ_MORE;
    if (p->in_bare) {
        if (bare_char(ch)) return TPJ_MORE;
        p->in_bare = false;
        r = value_end(p, off);
        if (r == TPJ_DONE) return TPJ_DONE_BACK;
    }
    if (tp_isws(ch)) return TPJ_MORE;
    tp_frame *f = &p->stk[p->nstk - 1];
    switch (f->st) {
    case TPS_VAL_OR_END:
        if (ch == ']') return pop(p, off + 1);
        /* fall through */
    case TPS_VALUE:
        if (ch == '"') {
            p->in_str = true, p->str_key = false;
            value_begin(p, off, '"');
        } else if (ch == '{' || ch == '[') {
            unsigned char role = value_begin(p, off, (unsigned char)ch);
            return push(p, (unsigned char)ch, role);
        } else if (ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' || ch == 'n') {
            p->in_bare = true;
            value_begin(p, off, 'b');
        } else {
            return TPJ_ERR;
        }
        return TPJ_MORE;
    case TPS_KEY_OR_END:
        if (ch == '}') return pop(p, off + 1);
        /* fall through */
    case TPS_KEY:
        if (ch != '"') return TPJ_ERR;
        p->in_str = true, p->str_key = true, p->kstart = off;
        return TPJ_MORE;
    case TPS_COLON:
        if (ch != ':') return TPJ_ERR;
        f->st = TPS_VALUE;
        return TPJ_MORE;
    case TPS_COMMA_OR_END:
        if (ch == ',') {
            f->st = f->kind == '{' ? TPS_KEY : TPS_VALUE;
            return TPJ_MORE;
        }
        if ((ch == '}' && f->kind == '{') || (ch == ']' && f->kind == '[')) return pop(p, off + 1);
        return TPJ_ERR;
    default:
        return TPJ_ERR;
    }
}

void tp_json_finish(tool_parser *p) {
    if (p->in_bare && p->nstk == 1) { /* a top-level bare value ends with the text */
        p->in_bare = false;
        value_end(p, p->cb.len);
    }
    if (p->c.open && p->c.begun) finish_call(p);
}

void tp_json_free(tool_parser *p) {
    free(p->stk);
    p->stk = NULL;
    p->nstk = p->capstk = 0;
    wbuf_free(&p->c.name);
    wbuf_free(&p->c.id);
    wbuf_free(&p->c.acc);
}
