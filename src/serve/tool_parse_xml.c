/* tool_parse_xml.c — the XML form of calls some Qwen models (Qwen3-Coder)
 * write inside <tool_call>:
 *   <function=name>
 *   <parameter=key>
 *   value
 *   </parameter>
 *   </function>
 * The call begins once its name is known; its arguments object is streamed
 * one whole parameter at a time ("{", then "\"key\": value" pieces, then
 * "}"). A value that is JSON text (a number, true, an object...) is kept as
 * JSON, anything else becomes a JSON string. */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "serve/tool_parse_int.h"

static const char FUNC_OPEN[] = "<function=", FUNC_CLOSE[] = "</function>";
static const char PARAM_OPEN[] = "<parameter=", PARAM_CLOSE[] = "</parameter>";

static void oom(tool_parser *p) {
    if (!p->rc) p->rc = -1;
}

/* Send "key": value (value trimmed of one newline each side). */
static void send_param(tool_parser *p) {
    const char *v = p->mid.data ? p->mid.data : "";
    size_t n = p->mid.len;
    if (n && v[0] == '\n') v++, n--;
    if (n && v[n - 1] == '\n') n--;
    wbuf out = {0};
    if (p->x_any) wbuf_puts(&out, ", ");
    cJSON *k = cJSON_CreateString(p->mname.data ? p->mname.data : "");
    char *ks = k ? cJSON_PrintUnformatted(k) : NULL;
    cJSON_Delete(k);
    wbuf_puts(&out, ks ? ks : "\"\"");
    free(ks);
    wbuf_puts(&out, ": ");
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(v, n, &end, 0);
    bool json = j && end == v + n;
    cJSON_Delete(j);
    if (json) {
        wbuf_put(&out, v, n);
    } else {
        wbuf tmp = {0};
        wbuf_put(&tmp, v, n);
        cJSON *s = cJSON_CreateString(tmp.data ? tmp.data : "");
        char *ss = s ? cJSON_PrintUnformatted(s) : NULL;
        cJSON_Delete(s);
        wbuf_puts(&out, ss ? ss : "\"\"");
        free(ss);
        if (tmp.oom) oom(p);
        wbuf_free(&tmp);
    }
    if (out.oom) oom(p);
    else tp_call_args(p, out.data, out.len);
    wbuf_free(&out);
    p->x_any = true;
}

/* Collect bytes into b until the byte `stop`; true when it was reached (and consumed). */
static bool collect_until(tool_parser *p, wbuf *b, char stop, bool to_cb) {
    const char *s = p->pend.data;
    size_t n = p->pend.len, i = p->pos;
    while (i < n && s[i] != stop) i++;
    if (!wbuf_put(b, s + p->pos, i - p->pos)) oom(p);
    if (to_cb) tp_put_cb(p, s + p->pos, i - p->pos);
    p->pos = i;
    if (i == n) return false;
    if (to_cb) tp_put_cb(p, s + i, 1);
    p->pos = i + 1;
    return true;
}

static void end_function(tool_parser *p) {
    tp_call_args(p, "}", 1);
    tp_call_end(p);
    wbuf_reset(&p->cb);
}

bool tp_step_xml(tool_parser *p) {
    const char *s = p->pend.data;
    size_t n = p->pend.len, i = p->pos;
    switch (p->mode) {
    case M_XNAME:
        if (!p->x_in_name) { /* at the '<' of <function= */
            int m = tp_tag_at(p, s + i, n - i, FUNC_OPEN);
            if (m == 1) return false;
            if (m == 0) {
                tp_release_region(p);
                return true;
            }
            tp_put_cb(p, FUNC_OPEN, strlen(FUNC_OPEN));
            p->pos = i + strlen(FUNC_OPEN);
            p->x_in_name = true;
            wbuf_reset(&p->mname);
            return true;
        }
        if (!collect_until(p, &p->mname, '>', true)) return false;
        if (!p->mname.len || memchr(p->mname.data, '\n', p->mname.len) || memchr(p->mname.data, '<', p->mname.len)) {
            tp_release_region(p);
            return true;
        }
        tp_call_begin(p, p->mname.data, NULL);
        tp_call_args(p, "{", 1);
        p->x_any = false;
        p->mode = M_XBODY;
        return true;
    case M_XBODY: {
        while (i < n && tp_isws(s[i])) i++;
        p->pos = i;
        if (i == n) return false;
        int mp = tp_tag_at(p, s + i, n - i, PARAM_OPEN), mf = tp_tag_at(p, s + i, n - i, FUNC_CLOSE);
        if (mp == 1 || mf == 1) return false;
        if (mp == 2) {
            p->pos = i + strlen(PARAM_OPEN);
            wbuf_reset(&p->mname);
            p->mode = M_XPKEY;
            return true;
        }
        if (mf == 2) p->pos = i + strlen(FUNC_CLOSE);
        end_function(p); /* the function's end, or text that ends it */
        p->mode = M_CLOSE;
        return true;
    }
    case M_XPKEY:
        if (!collect_until(p, &p->mname, '>', false)) return false;
        wbuf_reset(&p->mid);
        p->mode = M_XPVAL;
        return true;
    default: /* M_XPVAL: the value, up to </parameter> (or </function>) */
        for (size_t j = i; j < n; j++) {
            if (s[j] != '<') continue;
            int mp = tp_tag_at(p, s + j, n - j, PARAM_CLOSE), mf = tp_tag_at(p, s + j, n - j, FUNC_CLOSE);
            if (!mp && !mf) continue;
            if (!wbuf_put(&p->mid, s + i, j - i)) oom(p);
            p->pos = j;
            if (mp == 1 || mf == 1) return false;
            send_param(p);
            if (mp == 2) p->pos = j + strlen(PARAM_CLOSE);
            p->mode = M_XBODY;
            return true;
        }
        if (!wbuf_put(&p->mid, s + i, n - i)) oom(p);
        p->pos = n;
        return false;
    }
}

void tp_xml_end(tool_parser *p) {
    if (p->mode == M_XNAME) {
        tp_release_region(p);
        return;
    }
    tp_call_end(p); /* the arguments so far: whole parameters only */
    p->mode = M_TEXT;
}
