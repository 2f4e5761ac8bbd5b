/* tool_parse.c — the tool-call and reasoning parser of tool_parse.h: the
 * family's detection from a chat template and vocabulary, the call ids, and
 * the streaming split of a turn into content, reasoning and calls. The JSON
 * of calls is read by tool_parse_json.c, Llama's Python calls by
 * tool_parse_py.c, the XML form of calls by tool_parse_xml.c.
 *
 * All fed bytes go to a pending buffer; each step consumes what it can
 * decide. Text that may be the start of a tag stays pending; in content, a
 * run of whitespace is held back where a call may follow (it is template
 * layout then, not content); a call region (from its tag, or from the first
 * '{' / '[' of a reply that may be wholly JSON) is kept raw until it is known
 * to be a call, and released as content when it turns out not to be one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/tool_parse.h"
#include "serve/tool_parse_int.h"
#include "text/tokenizer.h"

static const char *const CALL_TAG[] = {
    [TOOL_FAMILY_HERMES] = "<tool_call>",
    [TOOL_FAMILY_LLAMA3] = "<|python_tag|>",
    [TOOL_FAMILY_MISTRAL] = "[TOOL_CALLS]",
    [TOOL_FAMILY_GRANITE] = "<|tool_call|>",
};

bool tool_format_prompt_opens_reasoning(const tool_format *f, const char *prompt, size_t len) {
    const size_t k = strlen(f->think_open);
    while (len && (prompt[len - 1] == '\n' || prompt[len - 1] == ' ' || prompt[len - 1] == '\r')) len--;
    return k && len >= k && memcmp(prompt + len - k, f->think_open, k) == 0;
}

const char *tool_family_name(tool_family f) {
    switch (f) {
    case TOOL_FAMILY_NONE: return "none";
    case TOOL_FAMILY_HERMES: return "hermes";
    case TOOL_FAMILY_LLAMA3: return "llama3";
    case TOOL_FAMILY_MISTRAL: return "mistral";
    case TOOL_FAMILY_GRANITE: return "granite";
    case TOOL_FAMILY_GENERIC: return "generic";
    }
    return "unknown";
}

/* ---- detection ---- */

static bool has_token(const wick_tokenizer *tok, const char *s) { return tok && tok_find(tok, s) >= 0; }

/* Does the generation prompt open a reasoning block? The text after the
 * template's last add_generation_prompt writes `open` in a literal that does
 * not close it again (Qwen3's enable_thinking=false writes an empty block). */
static bool prompt_opens(const char *t, const char *open, const char *close) {
    const char *g = NULL, *q = t;
    while ((q = strstr(q, "add_generation_prompt")) != NULL) g = q++;
    if (!g) return false;
    size_t ol = strlen(open);
    for (const char *o = strstr(g, open); o; o = strstr(o + ol, open)) {
        const char *e = o + ol;
        while (*e && *e != '\'' && *e != '"' && *e != '}' && *e != '%') e++;
        const char *c = strstr(o + ol, close);
        if (!c || c >= e) return true;
    }
    return false;
}

tool_format tool_format_detect(const char *t, const wick_tokenizer *tok) {
    tool_format f = {.family = TOOL_FAMILY_GENERIC};
    static const struct {
        const char *mark;
        tool_family fam;
    } marks[] = {{"<tool_call>", TOOL_FAMILY_HERMES},
                 {"[TOOL_CALLS]", TOOL_FAMILY_MISTRAL},
                 {"<|tool_call|>", TOOL_FAMILY_GRANITE},
                 {"<|python_tag|>", TOOL_FAMILY_LLAMA3}};
    size_t nm = sizeof marks / sizeof marks[0];
    bool found = false;
    for (size_t i = 0; t && i < nm && !found; i++)
        if (strstr(t, marks[i].mark)) f.family = marks[i].fam, found = true;
    /* Llama 3.1+ templates that spell no tag: the ipython role and "parameters" */
    if (!found && t && strstr(t, "<|start_header_id|>") && (strstr(t, "ipython") || strstr(t, "\"parameters\"")))
        f.family = TOOL_FAMILY_LLAMA3, found = true;
    for (size_t i = 0; i < nm && !found; i++)
        if (has_token(tok, marks[i].mark)) f.family = marks[i].fam, found = true;

    static const char *const tags[][2] = {{"<think>", "</think>"}, {"[THINK]", "[/THINK]"}};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        if ((t && strstr(t, tags[i][0])) || has_token(tok, tags[i][0])) {
            strcpy(f.think_open, tags[i][0]);
            strcpy(f.think_close, tags[i][1]);
            f.think_in_prompt = t && prompt_opens(t, tags[i][0], tags[i][1]);
            break;
        }
    }
    return f;
}

/* ---- events ---- */

static void oom(tool_parser *p) {
    if (!p->rc) p->rc = -1;
}

void tp_emit(tool_parser *p, tool_ev_kind k, const char *s, size_t n) {
    if (p->rc || ((k == TOOL_EV_CONTENT || k == TOOL_EV_REASONING) && n == 0)) return;
    tool_ev ev = {.kind = k, .text = s, .len = n, .index = p->n_calls - 1};
    if (k == TOOL_EV_CONTENT || k == TOOL_EV_REASONING) ev.index = -1;
    if (k == TOOL_EV_CALL_BEGIN) ev.id = p->idbuf, ev.name = s, ev.text = NULL, ev.len = 0;
    int r = p->fn ? p->fn(p->user, &ev) : 0;
    if (r) p->rc = r;
}

/* Content, holding back trailing whitespace where a call tag may follow. */
void tp_content(tool_parser *p, const char *s, size_t n) {
    if (!n) return;
    bool hold = p->o.tools && p->f.family != TOOL_FAMILY_GENERIC && p->f.family != TOOL_FAMILY_NONE;
    size_t keep = n;
    if (hold)
        while (keep > 0 && tp_isws(s[keep - 1])) keep--;
    if (keep > 0) {
        tp_emit(p, TOOL_EV_CONTENT, p->ws.data, p->ws.len);
        wbuf_reset(&p->ws);
        tp_emit(p, TOOL_EV_CONTENT, s, keep);
    }
    if (keep < n && !wbuf_put(&p->ws, s + keep, n - keep)) oom(p);
}

static void flush_ws(tool_parser *p) {
    tp_emit(p, TOOL_EV_CONTENT, p->ws.data, p->ws.len);
    wbuf_reset(&p->ws);
}

/* Reasoning, holding back trailing whitespace (dropped before the close tag). */
static void reasoning(tool_parser *p, const char *s, size_t n) {
    size_t keep = n;
    while (keep > 0 && tp_isws(s[keep - 1])) keep--;
    if (keep > 0) {
        tp_emit(p, TOOL_EV_REASONING, p->rws.data, p->rws.len);
        wbuf_reset(&p->rws);
        tp_emit(p, TOOL_EV_REASONING, s, keep);
    }
    if (keep < n && !wbuf_put(&p->rws, s + keep, n - keep)) oom(p);
}

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n alphanumerics drawn from the seed and the call's index (salt: the kind of id). */
static void random_id(const tool_parser *p, int index, uint64_t salt, char *out, int n) {
    static const char AL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t s = (uint64_t)p->o.id_seed ^ salt ^ ((uint64_t)(index + 1) * 0xd1b54a32d192ed03ull);
    for (int i = 0; i < n; i++) out[i] = AL[splitmix(&s) % 62];
    out[n] = 0;
}

void tp_call_begin(tool_parser *p, const char *name, const char *id) {
    int index = p->n_calls++;
    if (id && *id) {
        size_t l = strlen(id);
        if (l >= sizeof p->idbuf) l = sizeof p->idbuf - 1;
        memcpy(p->idbuf, id, l);
        p->idbuf[l] = 0;
    } else if (p->f.family == TOOL_FAMILY_MISTRAL) {
        random_id(p, index, 0x6d69737472616cull, p->idbuf, 9);
    } else {
        memcpy(p->idbuf, "call_", 5);
        random_id(p, index, 0, p->idbuf + 5, 24);
    }
    wbuf_reset(&p->c.acc);
    wbuf_reset(&p->ws); /* whitespace between content and a call is layout */
    tp_emit(p, TOOL_EV_CALL_BEGIN, name, 0);
}

void tp_call_args(tool_parser *p, const char *s, size_t n) {
    if (!n) return;
    if (!wbuf_put(&p->c.acc, s, n)) oom(p);
    tp_emit(p, TOOL_EV_CALL_ARGS, s, n);
}

void tp_call_end(tool_parser *p) { tp_emit(p, TOOL_EV_CALL_END, p->c.acc.data ? p->c.acc.data : "", p->c.acc.len); }

/* ---- the parser ---- */

tool_parser *tool_parser_new(const tool_format *f, const tool_parse_opts *o) {
    tool_parser *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (f) p->f = *f;
    if (o) p->o = *o;
    p->f.think_open[sizeof p->f.think_open - 1] = 0;
    p->f.think_close[sizeof p->f.think_close - 1] = 0;
    if ((unsigned)p->f.family > TOOL_FAMILY_GENERIC) p->f.family = TOOL_FAMILY_NONE;
    if (!p->f.think_open[0] || !p->f.think_close[0]) p->o.reasoning = false;
    p->mode = p->o.reasoning && p->o.in_reasoning ? M_REASON : M_TEXT;
    p->bare_start = p->o.tools && (p->f.family == TOOL_FAMILY_GENERIC || p->f.family == TOOL_FAMILY_LLAMA3);
    return p;
}

void tool_parser_free(tool_parser *p) {
    if (!p) return;
    wbuf_free(&p->pend);
    wbuf_free(&p->ws);
    wbuf_free(&p->rws);
    wbuf_free(&p->cb);
    wbuf_free(&p->mname);
    wbuf_free(&p->mid);
    tp_json_free(p);
    free(p);
}

int tool_parser_n_calls(const tool_parser *p) { return p ? p->n_calls : 0; }

/* The tag at s[0, n): 2 whole, 1 a prefix cut by the end of the pending
 * text (0 once the turn ended), 0 no. */
int tp_tag_at(const tool_parser *p, const char *s, size_t n, const char *tag) {
    size_t l = strlen(tag);
    if (!l) return 0;
    if (n >= l) return memcmp(s, tag, l) == 0 ? 2 : 0;
    return !p->final && memcmp(s, tag, n) == 0 ? 1 : 0;
}

static const char *call_tag(const tool_parser *p) {
    return p->o.tools && p->f.family != TOOL_FAMILY_GENERIC && p->f.family != TOOL_FAMILY_NONE
               ? CALL_TAG[p->f.family]
               : "";
}

/* The call region failed before any call began: its raw text is content. */
void tp_release_region(tool_parser *p) {
    tp_content(p, p->cb.data, p->cb.len);
    wbuf_reset(&p->cb);
    p->mode = M_TEXT;
    p->bare_start = false;
}

void tp_put_cb(tool_parser *p, const char *s, size_t n) {
    if (!wbuf_put(&p->cb, s, n)) oom(p);
}

static void begin_json(tool_parser *p, bool tagged) {
    tp_json_start(p, false, tagged);
    p->mode = M_JSON;
}

/* A call ended: what follows is content again, after whitespace. */
void tp_after_calls(tool_parser *p) {
    wbuf_reset(&p->cb);
    p->mode = M_TEXT;
    p->drop_ws = true;
    p->bare_start = false;
}

/* One step at p->pos; false when it must wait for more text. */
static bool step_text(tool_parser *p) {
    const char *s = p->pend.data;
    size_t n = p->pend.len, i = p->pos;
    if (p->drop_ws) {
        while (i < n && tp_isws(s[i])) i++;
        p->pos = i;
        if (i == n) return false;
        p->drop_ws = false;
    }
    if (p->bare_start) {
        size_t a = i;
        while (i < n && tp_isws(s[i])) i++;
        if (i > a && !wbuf_put(&p->ws, s + a, i - a)) oom(p);
        p->pos = i;
        if (i == n) return false;
        p->bare_start = false;
        if (s[i] == '{' || s[i] == '[') { /* maybe a reply that is wholly a call */
            wbuf_reset(&p->cb);
            tp_put_cb(p, p->ws.data, p->ws.len);
            wbuf_reset(&p->ws);
            begin_json(p, false);
            return true;
        }
    }
    const char *ct = call_tag(p);
    const char *to = p->o.reasoning ? p->f.think_open : "";
    for (size_t j = i; j < n; j++) {
        if (s[j] != ct[0] && s[j] != to[0]) continue;
        int mc = tp_tag_at(p, s + j, n - j, ct), mt = tp_tag_at(p, s + j, n - j, to);
        if (!mc && !mt) continue;
        tp_content(p, s + i, j - i);
        if (mc == 2) {
            wbuf_reset(&p->cb); /* the held whitespace goes when the call begins */
            tp_put_cb(p, ct, strlen(ct));
            p->pos = j + strlen(ct);
            p->mode = M_AFTER_TAG;
            return true;
        }
        if (mt == 2) {
            flush_ws(p);
            p->pos = j + strlen(to);
            p->mode = M_REASON;
            p->rsn_started = false;
            wbuf_reset(&p->rws);
            return true;
        }
        p->pos = j; /* a possible tag: wait */
        return false;
    }
    tp_content(p, s + i, n - i);
    p->pos = n;
    return false;
}

static bool step_reason(tool_parser *p) {
    const char *s = p->pend.data, *tc = p->f.think_close, *to = p->f.think_open;
    size_t n = p->pend.len, i = p->pos;
    while (!p->rsn_started) {
        while (i < n && tp_isws(s[i])) i++;
        p->pos = i;
        if (i == n) return false;
        int m = tp_tag_at(p, s + i, n - i, to); /* an open tag again at the start (the prompt opened it) */
        if (m == 1) return false;
        if (m == 2) {
            i += strlen(to);
            continue;
        }
        p->rsn_started = true;
    }
    for (size_t j = i; j < n; j++) {
        if (s[j] != tc[0]) continue;
        int m = tp_tag_at(p, s + j, n - j, tc);
        if (!m) continue;
        reasoning(p, s + i, j - i);
        if (m == 1) {
            p->pos = j;
            return false;
        }
        wbuf_reset(&p->rws);
        p->pos = j + strlen(tc);
        p->mode = M_TEXT;
        p->drop_ws = true;
        p->bare_start = p->o.tools && (p->f.family == TOOL_FAMILY_GENERIC || p->f.family == TOOL_FAMILY_LLAMA3);
        return true;
    }
    reasoning(p, s + i, n - i);
    p->pos = n;
    return false;
}

static bool step_after_tag(tool_parser *p) {
    const char *s = p->pend.data;
    size_t n = p->pend.len, i = p->pos;
    while (i < n && tp_isws(s[i])) tp_put_cb(p, s + i++, 1);
    p->pos = i;
    if (i == n) return false;
    char c = s[i];
    if (c == '{' || c == '[') {
        begin_json(p, true);
    } else if (p->f.family == TOOL_FAMILY_MISTRAL &&
               ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) {
        wbuf_reset(&p->mname);
        wbuf_reset(&p->mid);
        p->mode = M_MNAME;
    } else if (p->f.family == TOOL_FAMILY_HERMES && c == '<') { /* <function=name> */
        p->x_in_name = false;
        p->mode = M_XNAME;
    } else if (p->f.family == TOOL_FAMILY_LLAMA3) {
        p->py_start = p->cb.len;
        p->mode = M_PY;
    } else {
        tp_release_region(p);
    }
    return true;
}

static bool step_json(tool_parser *p) {
    const char *s = p->pend.data;
    size_t n = p->pend.len;
    while (p->pos < n && !p->rc) {
        tp_put_cb(p, s + p->pos, 1);
        if (p->rc) return false;
        int r = tp_json_byte(p);
        if (r == TPJ_MORE) {
            p->pos++;
            continue;
        }
        if (r == TPJ_DONE) p->pos++;
        else p->cb.len--; /* the byte is read again outside */
        p->cb.data[p->cb.len] = 0;
        bool begun = p->any_begun;
        if (r == TPJ_ERR && begun) tp_json_finish(p);
        if (!begun) {
            tp_release_region(p);
        } else if (r != TPJ_ERR && p->f.family == TOOL_FAMILY_HERMES && p->tagged) {
            wbuf_reset(&p->cb);
            p->mode = M_CLOSE;
        } else if (r != TPJ_ERR && p->f.family == TOOL_FAMILY_LLAMA3 && !p->args_mode) {
            wbuf_reset(&p->cb);
            p->mode = M_SEP;
        } else {
            tp_after_calls(p);
            if (r == TPJ_ERR) p->drop_ws = false;
        }
        return true;
    }
    tp_json_flush(p);
    return false;
}

static bool step_close(tool_parser *p) {
    const char *s = p->pend.data;
    size_t n = p->pend.len, i = p->pos;
    while (i < n && (tp_isws(s[i]) || s[i] == '}')) i++; /* a stray brace after the object too */
    p->pos = i;
    if (i == n) return false;
    static const char CLOSE[] = "</tool_call>";
    int m = tp_tag_at(p, s + i, n - i, CLOSE);
    if (m == 1) return false;
    if (m == 2) p->pos += strlen(CLOSE);
    else if (p->final && n - i < strlen(CLOSE) && memcmp(s + i, CLOSE, n - i) == 0)
        p->pos = n; /* the close tag cut short by the end */
    tp_after_calls(p);
    return true;
}

/* Llama: more calls after ';' or a newline. */
static bool step_sep(tool_parser *p) {
    const char *s = p->pend.data;
    size_t n = p->pend.len, i = p->pos;
    while (i < n && (tp_isws(s[i]) || s[i] == ';')) i++;
    p->pos = i;
    if (i == n) return false;
    if (s[i] == '{') {
        wbuf_reset(&p->cb);
        begin_json(p, p->tagged);
        p->any_begun = true; /* calls were made: a failed one is not content */
    } else {
        tp_after_calls(p);
    }
    return true;
}

static bool mistral_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

/* Mistral's [TOOL_CALLS]name[CALL_ID]id[ARGS]{...}: name and id. */
static bool step_mname(tool_parser *p) {
    const char *s = p->pend.data;
    size_t n = p->pend.len, i = p->pos;
    wbuf *into = p->mode == M_MNAME ? &p->mname : &p->mid;
    while (i < n && mistral_name_char(s[i])) {
        tp_put_cb(p, s + i, 1);
        if (!wbuf_put(into, s + i, 1)) oom(p);
        i++;
    }
    p->pos = i;
    if (i == n) return false;
    int ma = tp_tag_at(p, s + i, n - i, "[ARGS]");
    int mi = p->mode == M_MNAME ? tp_tag_at(p, s + i, n - i, "[CALL_ID]") : 0;
    if (ma == 1 || mi == 1) return false;
    if (mi == 2 && p->mname.len) {
        tp_put_cb(p, s + i, strlen("[CALL_ID]"));
        p->pos = i + strlen("[CALL_ID]");
        p->mode = M_MID;
        return true;
    }
    if (ma == 2 && p->mname.len) {
        p->pos = i + strlen("[ARGS]");
        wbuf_reset(&p->cb);
        tp_json_start(p, true, true);
        tp_call_begin(p, p->mname.data, p->mid.len ? p->mid.data : NULL);
        p->mode = M_JSON;
        return true;
    }
    tp_release_region(p);
    return true;
}

static bool step_py(tool_parser *p) {
    tp_put_cb(p, p->pend.data + p->pos, p->pend.len - p->pos);
    p->pos = p->pend.len;
    return false;
}

static void run(tool_parser *p) {
    bool go = true;
    while (go && !p->rc) {
        switch (p->mode) {
        case M_TEXT: go = step_text(p); break;
        case M_REASON: go = step_reason(p); break;
        case M_AFTER_TAG: go = step_after_tag(p); break;
        case M_JSON: go = step_json(p); break;
        case M_CLOSE: go = step_close(p); break;
        case M_SEP: go = step_sep(p); break;
        case M_MNAME:
        case M_MID: go = step_mname(p); break;
        case M_PY: go = step_py(p); break;
        default: go = tp_step_xml(p); break;
        }
    }
    /* keep only the undecided bytes */
    if (p->pos > 0) {
        memmove(p->pend.data, p->pend.data + p->pos, p->pend.len - p->pos);
        p->pend.len -= p->pos;
        p->pend.data[p->pend.len] = 0;
        p->pos = 0;
    }
}

int tool_parser_feed(tool_parser *p, const char *text, size_t len, tool_ev_fn fn, void *user) {
    if (!p) return -1;
    if (p->rc || p->final) return p->rc;
    if (len && !wbuf_put(&p->pend, text, len)) oom(p);
    p->fn = fn, p->user = user;
    run(p);
    return p->rc;
}

int tool_parser_end(tool_parser *p, tool_ev_fn fn, void *user) {
    if (!p) return -1;
    if (p->rc || p->final) return p->rc;
    p->fn = fn, p->user = user;
    p->final = true; /* partial tags are text now */
    run(p);
    switch (p->mode) {
    case M_TEXT: flush_ws(p); break;
    case M_JSON:
        tp_json_finish(p);
        if (!p->any_begun) tp_release_region(p);
        flush_ws(p);
        break;
    case M_AFTER_TAG:
    case M_MNAME:
    case M_MID:
        tp_release_region(p);
        flush_ws(p);
        break;
    case M_PY: {
        size_t a = p->py_start, b = p->cb.len;
        while (b > a && tp_isws(p->cb.data[b - 1])) b--;
        tp_py_call(p, p->cb.data + a, b - a);
        break;
    }
    case M_XNAME:
    case M_XBODY:
    case M_XPKEY:
    case M_XPVAL:
        tp_xml_end(p);
        flush_ws(p);
        break;
    default: break; /* reasoning's trailing whitespace, a close tag cut short: dropped */
    }
    return p->rc;
}
