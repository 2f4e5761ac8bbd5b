/* jinja_value.c — runtime values of the Jinja interpreter: counted memory,
 * objects (strings, lists, dicts, frames) and their reference counts, JSON
 * input, and the Python views of a value: truthiness, str(), repr(),
 * json.dumps(), ==, <, `in`, iteration.
 *
 * Every allocation goes through jmem_* so the live byte count can be capped;
 * every object is on the context's live list (see jinja_internal.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "template/jinja_internal.h"

/* ------------------------------------------------------------------ memory */

void *jmem_alloc(jctx *I, size_t n) {
    if (n > I->lim.max_memory || I->mem > I->lim.max_memory - n)
        jfail(I, "template needs more than %zu MiB of memory", I->lim.max_memory >> 20);
    void *p = malloc(n ? n : 1);
    if (!p) jfail(I, "out of memory");
    I->mem += n;
    return p;
}

void *jmem_realloc(jctx *I, void *p, size_t old, size_t n) {
    if (n > old && (n - old > I->lim.max_memory || I->mem > I->lim.max_memory - (n - old)))
        jfail(I, "template needs more than %zu MiB of memory", I->lim.max_memory >> 20);
    void *q = realloc(p, n ? n : 1);
    if (!q) jfail(I, "out of memory");
    I->mem = I->mem - old + n;
    return q;
}

void jmem_free(jctx *I, void *p, size_t n) {
    if (!p) return;
    free(p);
    I->mem -= n;
}

/* ----------------------------------------------------------------- objects */

static const size_t OBJ_SIZE[] = {
    [JO_STR] = sizeof(jstr),   [JO_LIST] = sizeof(jlist),   [JO_DICT] = sizeof(jdict),
    [JO_FUNC] = sizeof(jfunc), [JO_MACRO] = sizeof(jmacro), [JO_FRAME] = sizeof(jframe),
    [JO_LOOP] = sizeof(jloop),
};

static void *jobj_new(jctx *I, int type) {
    jobj *o = jmem_alloc(I, OBJ_SIZE[type]);
    memset(o, 0, OBJ_SIZE[type]);
    o->type = (uint8_t)type;
    o->rc = 1;
    o->next = I->live.next;
    o->prev = &I->live;
    I->live.next->prev = o;
    I->live.next = o;
    return o;
}

static void free_data(jctx *I, jobj *o) {
    switch (o->type) {
    case JO_STR: {
        jstr *s = (jstr *)o;
        jmem_free(I, s->s, s->cap + 1);
        break;
    }
    case JO_LIST: {
        jlist *l = (jlist *)o;
        jmem_free(I, l->v, l->cap * sizeof(jv));
        break;
    }
    case JO_DICT: {
        jdict *d = (jdict *)o;
        jmem_free(I, d->keys, d->cap * sizeof(jstr *));
        jmem_free(I, d->vals, d->cap * sizeof(jv));
        jmem_free(I, d->idx, d->icap * sizeof(uint32_t));
        break;
    }
    case JO_FRAME: {
        jframe *f = (jframe *)o;
        if (f->names != f->inl_names) {
            jmem_free(I, (void *)f->names, f->cap * sizeof(char *));
            jmem_free(I, f->vals, f->cap * sizeof(jv));
        }
        break;
    }
    default:
        break;
    }
    jmem_free(I, o, OBJ_SIZE[o->type]);
}

static void release_children(jctx *I, jobj *o) {
    switch (o->type) {
    case JO_LIST: {
        jlist *l = (jlist *)o;
        for (size_t i = 0; i < l->n; i++) jv_release(I, l->v[i]);
        break;
    }
    case JO_DICT: {
        jdict *d = (jdict *)o;
        for (size_t i = 0; i < d->n; i++) {
            jobj_release(I, &d->keys[i]->h);
            jv_release(I, d->vals[i]);
        }
        break;
    }
    case JO_FUNC:
        jv_release(I, ((jfunc *)o)->self);
        break;
    case JO_MACRO:
        if (((jmacro *)o)->closure) jobj_release(I, &((jmacro *)o)->closure->h);
        break;
    case JO_LOOP:
        jobj_release(I, &((jloop *)o)->items->h);
        break;
    case JO_FRAME: {
        jframe *f = (jframe *)o;
        for (size_t i = 0; i < f->n; i++) jv_release(I, f->vals[i]);
        if (f->parent) jobj_release(I, &f->parent->h);
        break;
    }
    default:
        break;
    }
}

void jobj_release(jctx *I, jobj *o) {
    if (!o || o->fixed) return;
    if (--o->rc > 0) return;
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->next = I->dead;
    I->dead = o;
    if (I->draining) return;
    I->draining = true;
    while (I->dead) {
        jobj *d = I->dead;
        I->dead = d->next;
        release_children(I, d);
        free_data(I, d);
    }
    I->draining = false;
}

void jctx_sweep(jctx *I) {
    jobj *o = I->live.next;
    while (o && o != &I->live) {
        jobj *next = o->next;
        free_data(I, o);
        o = next;
    }
    I->live.next = I->live.prev = &I->live;
    while (I->dead) { /* only after an error inside a drain */
        jobj *d = I->dead;
        I->dead = d->next;
        free_data(I, d);
    }
    I->draining = false;
}

/* ----------------------------------------------------------------- strings */

jstr *jstr_new(jctx *I, size_t cap) {
    if (cap > I->lim.max_string) cap = I->lim.max_string;
    jstr *s = jobj_new(I, JO_STR);
    s->s = jmem_alloc(I, cap + 1);
    s->cap = cap;
    s->s[0] = 0;
    return s;
}

void jstr_append(jctx *I, jstr *s, const char *p, size_t n) {
    if (n == 0) return;
    if (n > I->lim.max_string - s->len)
        jfail(I, "string longer than the limit of %zu bytes", I->lim.max_string);
    if (s->len + n > s->cap) {
        size_t nc = s->cap * 2 > s->len + n ? s->cap * 2 : s->len + n;
        if (nc < 32) nc = 32;
        if (nc > I->lim.max_string) nc = I->lim.max_string;
        s->s = jmem_realloc(I, s->s, s->cap + 1, nc + 1);
        s->cap = nc;
    }
    memcpy(s->s + s->len, p, n);
    s->len += n;
    s->s[s->len] = 0;
}

jv jv_str(jctx *I, const char *p, size_t n) {
    jstr *s = jstr_new(I, n);
    jstr_append(I, s, p, n);
    return jv_strobj(s);
}

jv jv_cstr(jctx *I, const char *p) { return jv_str(I, p, strlen(p)); }

/* ------------------------------------------------------------------- lists */

jlist *jlist_new(jctx *I, size_t cap) {
    jlist *l = jobj_new(I, JO_LIST);
    if (cap) {
        if (cap > I->lim.max_memory / sizeof(jv)) jfail(I, "list too long");
        l->v = jmem_alloc(I, cap * sizeof(jv));
        l->cap = cap;
    }
    return l;
}

void jlist_push(jctx *I, jlist *l, jv take) {
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 4;
        if (nc > I->lim.max_memory / sizeof(jv)) {
            jv_release(I, take);
            jfail(I, "list too long");
        }
        l->v = jmem_realloc(I, l->v, l->cap * sizeof(jv), nc * sizeof(jv));
        l->cap = nc;
    }
    l->v[l->n++] = take;
}

jv jv_list_take(jlist *l, bool tuple) { return jv_obj(tuple ? JV_TUPLE : JV_LIST, l); }

/* ------------------------------------------------------------------- dicts */

static uint32_t hash_bytes(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

jdict *jdict_new(jctx *I, size_t cap) {
    jdict *d = jobj_new(I, JO_DICT);
    if (cap) {
        d->keys = jmem_alloc(I, cap * sizeof(jstr *));
        d->vals = jmem_alloc(I, cap * sizeof(jv));
        d->cap = cap;
    }
    return d;
}

static void index_insert(jdict *d, size_t entry) {
    size_t mask = d->icap - 1;
    size_t h = hash_bytes(d->keys[entry]->s, d->keys[entry]->len) & mask;
    while (d->idx[h]) h = (h + 1) & mask;
    d->idx[h] = (uint32_t)entry + 1;
}

static void index_rebuild(jctx *I, jdict *d) {
    size_t nc = 16;
    while (nc < d->n * 2 + 2) nc *= 2;
    jmem_free(I, d->idx, d->icap * sizeof(uint32_t));
    d->idx = NULL;
    d->icap = 0;
    d->idx = jmem_alloc(I, nc * sizeof(uint32_t));
    memset(d->idx, 0, nc * sizeof(uint32_t));
    d->icap = nc;
    for (size_t i = 0; i < d->n; i++) index_insert(d, i);
}

jv *jdict_get(const jdict *d, const char *key, size_t len) {
    if (d->icap) {
        size_t mask = d->icap - 1;
        for (size_t h = hash_bytes(key, len) & mask; d->idx[h]; h = (h + 1) & mask) {
            size_t e = d->idx[h] - 1;
            if (d->keys[e]->len == len && memcmp(d->keys[e]->s, key, len) == 0) return &d->vals[e];
        }
        return NULL;
    }
    for (size_t i = 0; i < d->n; i++)
        if (d->keys[i]->len == len && memcmp(d->keys[i]->s, key, len) == 0) return &d->vals[i];
    return NULL;
}

void jdict_set(jctx *I, jdict *d, jstr *key, jv take) {
    jv *slot = jdict_get(d, key->s, key->len);
    if (slot) {
        jv old = *slot;
        *slot = take;
        jv_release(I, old);
        return;
    }
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 4;
        d->keys = jmem_realloc(I, d->keys, d->cap * sizeof(jstr *), nc * sizeof(jstr *));
        d->vals = jmem_realloc(I, d->vals, d->cap * sizeof(jv), nc * sizeof(jv));
        d->cap = nc;
    }
    jv_retain(jv_strobj(key));
    d->keys[d->n] = key;
    d->vals[d->n] = take;
    d->n++;
    if (d->n > 8) {
        if (d->n * 2 + 2 > d->icap) index_rebuild(I, d);
        else index_insert(d, d->n - 1);
    }
}

void jdict_set_c(jctx *I, jdict *d, const char *key, jv take) {
    jv k = jv_cstr(I, key);
    jdict_set(I, d, JSTR(k), take);
    jv_release(I, k);
}

/* ------------------------------------------------------------------ frames */

jframe *jframe_new(jctx *I, jframe *parent) {
    jframe *f = jobj_new(I, JO_FRAME);
    f->names = f->inl_names;
    f->vals = f->inl_vals;
    f->cap = 4;
    f->parent = parent;
    if (parent) parent->h.rc++;
    return f;
}

jv *jframe_lookup(jframe *f, const char *name) {
    for (; f; f = f->parent)
        for (size_t i = f->n; i-- > 0;)
            if (strcmp(f->names[i], name) == 0) return &f->vals[i];
    return NULL;
}

void jframe_set(jctx *I, jframe *f, const char *name, jv take) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->names[i], name) == 0) {
            jv old = f->vals[i];
            f->vals[i] = take;
            jv_release(I, old);
            return;
        }
    if (f->n == f->cap) {
        size_t nc = f->cap * 2;
        if (f->names == f->inl_names) {
            const char **nn = jmem_alloc(I, nc * sizeof(char *));
            jv *nv = jmem_alloc(I, nc * sizeof(jv));
            memcpy(nn, f->names, f->n * sizeof(char *));
            memcpy(nv, f->vals, f->n * sizeof(jv));
            f->names = nn;
            f->vals = nv;
        } else {
            f->names = jmem_realloc(I, (void *)f->names, f->cap * sizeof(char *), nc * sizeof(char *));
            f->vals = jmem_realloc(I, f->vals, f->cap * sizeof(jv), nc * sizeof(jv));
        }
        f->cap = nc;
    }
    f->names[f->n] = name;
    f->vals[f->n] = take;
    f->n++;
}

jv jv_func(jctx *I, int id, jv self_take) {
    jfunc *fn = jobj_new(I, JO_FUNC);
    fn->id = id;
    fn->self = self_take;
    return jv_obj(JV_FUNC, fn);
}

jv jv_macro(jctx *I, const jnode *def, jframe *closure) {
    jmacro *m = jobj_new(I, JO_MACRO);
    m->def = def;
    m->closure = closure;
    if (closure) closure->h.rc++;
    return jv_obj(JV_MACRO, m);
}

jv jv_loop(jctx *I, jlist *items, size_t i) {
    jloop *l = jobj_new(I, JO_LOOP);
    l->items = items;
    items->h.rc++;
    l->i = i;
    return jv_obj(JV_LOOP, l);
}

/* -------------------------------------------------------------------- JSON */

jv jv_from_json(jctx *I, const cJSON *j, int depth) {
    if (depth > 1000) jfail(I, "context JSON nested too deeply");
    if (!j || cJSON_IsNull(j)) return jv_none();
    if (cJSON_IsBool(j)) return jv_bool(cJSON_IsTrue(j));
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        /* as JavaScript and Python read JSON integers: integral values are ints */
        if (d == floor(d) && fabs(d) <= 9007199254740992.0) return jv_int((int64_t)d);
        return jv_float(d);
    }
    if (cJSON_IsString(j)) return jv_cstr(I, j->valuestring ? j->valuestring : "");
    if (cJSON_IsArray(j)) {
        jlist *l = jlist_new(I, (size_t)cJSON_GetArraySize(j));
        const cJSON *it;
        cJSON_ArrayForEach(it, j) jlist_push(I, l, jv_from_json(I, it, depth + 1));
        return jv_list_take(l, false);
    }
    if (cJSON_IsObject(j)) {
        jdict *d = jdict_new(I, (size_t)cJSON_GetArraySize(j));
        const cJSON *it;
        cJSON_ArrayForEach(it, j) jdict_set_c(I, d, it->string ? it->string : "",
                                              jv_from_json(I, it, depth + 1));
        return jv_obj(JV_DICT, d);
    }
    return jv_none();
}

/* -------------------------------------------------------------------- UTF-8 */

int jutf8_next(const char *s, size_t len, size_t *i) {
    const unsigned char *u = (const unsigned char *)s;
    size_t p = *i;
    unsigned c = u[p];
    if (c < 0x80) {
        *i = p + 1;
        return (int)c;
    }
    int n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || p + (size_t)n > len) {
        *i = p + 1;
        return 0xFFFD;
    }
    uint32_t cp = c & (0x7F >> n);
    for (int k = 1; k < n; k++) {
        if ((u[p + k] & 0xC0) != 0x80) {
            *i = p + 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (u[p + k] & 0x3F);
    }
    static const uint32_t MIN[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < MIN[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        *i = p + 1;
        return 0xFFFD;
    }
    *i = p + (size_t)n;
    return (int)cp;
}

size_t jutf8_len(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; n++) jutf8_next(s, len, &i);
    return n;
}

int jutf8_put(uint32_t cp, char out[4]) {
    /* utf8proc writes 1-4 bytes for any code point up to U+10FFFF. */
    return (int)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)out);
}

bool jpy_isspace(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* ------------------------------------------------------------ conversions */

bool jv_truthy(jv v) {
    switch (v.k) {
    case JV_UNDEF:
    case JV_NONE: return false;
    case JV_BOOL: return v.b;
    case JV_INT: return v.i != 0;
    case JV_FLOAT: return v.f != 0.0;
    case JV_STR: return JSTR(v)->len > 0;
    case JV_LIST:
    case JV_TUPLE: return JLIST(v)->n > 0;
    case JV_DICT: return JDICT(v)->n > 0;
    default: return true;
    }
}

const char *jv_type_name(jv v) {
    switch (v.k) {
    case JV_UNDEF: return "Undefined";
    case JV_NONE: return "NoneType";
    case JV_BOOL: return "bool";
    case JV_INT: return "int";
    case JV_FLOAT: return "float";
    case JV_STR: return "str";
    case JV_LIST: return "list";
    case JV_TUPLE: return "tuple";
    case JV_DICT: return "dict";
    case JV_NS: return "Namespace";
    case JV_FUNC: return "builtin_function_or_method";
    case JV_MACRO: return "Macro";
    case JV_LOOP: return "LoopContext";
    default: return "object";
    }
}

_Noreturn void jfail_undefined(jctx *I, jv v) {
    if (v.k == JV_UNDEF && v.uname) jfail(I, "'%s' is undefined", v.uname);
    jfail(I, "undefined value used");
}

void jv_format_float(double f, char *buf, size_t cap) {
    if (isnan(f)) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, cap, f < 0 ? "-inf" : "inf");
        return;
    }
    char tmp[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, f);
        if (strtod(tmp, NULL) == f) break;
    }
    /* tmp = [-]d[.ddd]e[+-]xx */
    const char *p = tmp;
    bool neg = *p == '-';
    if (neg) p++;
    char digits[24];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < 20) digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
    int decpt = exp + 1;
    char out[64];
    size_t o = 0;
    if (neg) out[o++] = '-';
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = 0; i < -decpt; i++) out[o++] = '0';
            for (int i = 0; i < nd; i++) out[o++] = digits[i];
        } else if (decpt >= nd) {
            for (int i = 0; i < nd; i++) out[o++] = digits[i];
            for (int i = nd; i < decpt; i++) out[o++] = '0';
            out[o++] = '.';
            out[o++] = '0';
        } else {
            for (int i = 0; i < decpt; i++) out[o++] = digits[i];
            out[o++] = '.';
            for (int i = decpt; i < nd; i++) out[o++] = digits[i];
        }
        out[o] = 0;
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++) out[o++] = digits[i];
        }
        out[o] = 0;
        int e = decpt - 1;
        snprintf(out + o, sizeof out - o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    snprintf(buf, cap, "%s", out);
}

static void write_fmt(jctx *I, jstr *out, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void write_fmt(jctx *I, jstr *out, const char *fmt, ...) {
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    jstr_append(I, out, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static bool py_printable(uint32_t cp) {
    if (cp < 0x20 || cp == 0x7F) return false;
    if (cp < 0x7F) return true;
    if (cp == 0xFFFD) return true;
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS:
        return false;
    default:
        return true;
    }
}

static void write_str_repr(jctx *I, jstr *out, const jstr *s) {
    bool has_sq = memchr(s->s, '\'', s->len) != NULL, has_dq = memchr(s->s, '"', s->len) != NULL;
    char q = has_sq && !has_dq ? '"' : '\'';
    jstr_append(I, out, &q, 1);
    size_t i = 0, run = 0;
    while (i < s->len) {
        size_t st = i;
        int cp = jutf8_next(s->s, s->len, &i);
        const char *esc = NULL;
        char buf[16];
        if (cp == q) esc = q == '"' ? "\\\"" : "\\'";
        else if (cp == '\\') esc = "\\\\";
        else if (cp == '\n') esc = "\\n";
        else if (cp == '\r') esc = "\\r";
        else if (cp == '\t') esc = "\\t";
        else if (!py_printable((uint32_t)cp)) {
            if (cp < 0x100) snprintf(buf, sizeof buf, "\\x%02x", cp);
            else if (cp < 0x10000) snprintf(buf, sizeof buf, "\\u%04x", cp);
            else snprintf(buf, sizeof buf, "\\U%08x", cp);
            esc = buf;
        }
        if (esc) {
            jstr_append(I, out, s->s + run, st - run);
            jstr_puts(I, out, esc);
            run = i;
        }
    }
    jstr_append(I, out, s->s + run, s->len - run);
    jstr_append(I, out, &q, 1);
}

static void write_items_repr(jctx *I, jstr *out, const jdict *d, int depth) {
    jstr_puts(I, out, "{");
    for (size_t i = 0; i < d->n; i++) {
        if (i) jstr_puts(I, out, ", ");
        write_str_repr(I, out, d->keys[i]);
        jstr_puts(I, out, ": ");
        jv_write_repr(I, out, d->vals[i], depth + 1);
    }
    jstr_puts(I, out, "}");
}

void jv_write_repr(jctx *I, jstr *out, jv v, int depth) {
    if (depth > JINJA_MAX_NEST) jfail(I, "value nested too deeply to print");
    switch (v.k) {
    case JV_UNDEF: jstr_puts(I, out, "Undefined"); return;
    case JV_STR: write_str_repr(I, out, JSTR(v)); return;
    case JV_LIST:
    case JV_TUPLE: {
        const jlist *l = JLIST(v);
        jstr_puts(I, out, v.k == JV_LIST ? "[" : "(");
        for (size_t i = 0; i < l->n; i++) {
            if (i) jstr_puts(I, out, ", ");
            jv_write_repr(I, out, l->v[i], depth + 1);
        }
        if (v.k == JV_TUPLE && l->n == 1) jstr_puts(I, out, ",");
        jstr_puts(I, out, v.k == JV_LIST ? "]" : ")");
        return;
    }
    case JV_DICT: write_items_repr(I, out, JDICT(v), depth); return;
    case JV_NS:
        jstr_puts(I, out, "<Namespace ");
        write_items_repr(I, out, JDICT(v), depth);
        jstr_puts(I, out, ">");
        return;
    default: jv_write_str(I, out, v); return;
    }
}

void jv_write_str(jctx *I, jstr *out, jv v) {
    char buf[64];
    switch (v.k) {
    case JV_UNDEF: return;
    case JV_NONE: jstr_puts(I, out, "None"); return;
    case JV_BOOL: jstr_puts(I, out, v.b ? "True" : "False"); return;
    case JV_INT: write_fmt(I, out, "%lld", (long long)v.i); return;
    case JV_FLOAT: jv_format_float(v.f, buf, sizeof buf); jstr_puts(I, out, buf); return;
    case JV_STR: jstr_append(I, out, JSTR(v)->s, JSTR(v)->len); return;
    case JV_FUNC: jstr_puts(I, out, "<built-in function>"); return;
    case JV_LOOP: write_fmt(I, out, "<LoopContext %zu/%zu>", JLOOP(v)->i + 1, JLOOP(v)->items->n); return;
    case JV_MACRO: {
        const char *name = JMACRO(v)->def->name;
        jstr_puts(I, out, "<Macro '");
        jstr_puts(I, out, name ? name : "caller");
        jstr_puts(I, out, "'>");
        return;
    }
    default: jv_write_repr(I, out, v, 0); return;
    }
}

jv jv_to_str(jctx *I, jv v) {
    if (v.k == JV_STR) return jv_retain(v);
    jstr *s = jstr_new(I, 16);
    jv_write_str(I, s, v);
    return jv_strobj(s);
}

/* ---- json.dumps ---- */

static void write_json_str(jctx *I, jstr *out, const char *p, size_t n, bool ascii) {
    jstr_puts(I, out, "\"");
    size_t i = 0, run = 0;
    while (i < n) {
        size_t st = i;
        unsigned char c = (unsigned char)p[i];
        char buf[16];
        const char *esc = NULL;
        if (c < 0x80) {
            i++;
            switch (c) {
            case '"': esc = "\\\""; break;
            case '\\': esc = "\\\\"; break;
            case '\n': esc = "\\n"; break;
            case '\r': esc = "\\r"; break;
            case '\t': esc = "\\t"; break;
            case '\b': esc = "\\b"; break;
            case '\f': esc = "\\f"; break;
            default:
                if (c < 0x20) {
                    snprintf(buf, sizeof buf, "\\u%04x", c);
                    esc = buf;
                }
            }
        } else {
            int cp = jutf8_next(p, n, &i);
            if (ascii) {
                if (cp >= 0x10000) {
                    unsigned v = (unsigned)cp - 0x10000;
                    snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                } else {
                    snprintf(buf, sizeof buf, "\\u%04x", (unsigned)cp);
                }
                esc = buf;
            }
        }
        if (esc) {
            jstr_append(I, out, p + run, st - run);
            jstr_puts(I, out, esc);
            run = i;
        }
    }
    jstr_append(I, out, p + run, n - run);
    jstr_puts(I, out, "\"");
}

static void json_newline(jctx *I, jstr *out, const jjson_opts *o, int depth) {
    jstr_puts(I, out, "\n");
    for (int i = 0; i < depth; i++) jstr_puts(I, out, o->indent);
}

typedef struct kv_ref {
    const jstr *k;
    jv v;
} kv_ref;

static int cmp_kv(const void *a, const void *b) {
    const jstr *x = ((const kv_ref *)a)->k, *y = ((const kv_ref *)b)->k;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->len < y->len ? -1 : x->len > y->len);
}

void jv_write_json(jctx *I, jstr *out, jv v, const jjson_opts *o, int depth) {
    if (depth > JINJA_MAX_NEST) jfail(I, "value nested too deeply for tojson");
    char buf[64];
    switch (v.k) {
    case JV_NONE: jstr_puts(I, out, "null"); return;
    case JV_BOOL: jstr_puts(I, out, v.b ? "true" : "false"); return;
    case JV_INT: write_fmt(I, out, "%lld", (long long)v.i); return;
    case JV_FLOAT:
        if (isnan(v.f)) jstr_puts(I, out, "NaN");
        else if (isinf(v.f)) jstr_puts(I, out, v.f < 0 ? "-Infinity" : "Infinity");
        else {
            jv_format_float(v.f, buf, sizeof buf);
            jstr_puts(I, out, buf);
        }
        return;
    case JV_STR: write_json_str(I, out, JSTR(v)->s, JSTR(v)->len, o->ensure_ascii); return;
    case JV_LIST:
    case JV_TUPLE: {
        const jlist *l = JLIST(v);
        jstr_puts(I, out, "[");
        for (size_t i = 0; i < l->n; i++) {
            if (i) jstr_puts(I, out, o->item_sep);
            if (o->indent) json_newline(I, out, o, depth + 1);
            jv_write_json(I, out, l->v[i], o, depth + 1);
        }
        if (o->indent && l->n) json_newline(I, out, o, depth);
        jstr_puts(I, out, "]");
        return;
    }
    case JV_DICT: {
        const jdict *d = JDICT(v);
        kv_ref *items = NULL;
        size_t bytes = d->n * sizeof(kv_ref);
        if (o->sort_keys && d->n > 1) {
            items = jmem_alloc(I, bytes);
            for (size_t i = 0; i < d->n; i++) items[i] = (kv_ref){d->keys[i], d->vals[i]};
            qsort(items, d->n, sizeof *items, cmp_kv);
        }
        jstr_puts(I, out, "{");
        for (size_t i = 0; i < d->n; i++) {
            const jstr *k = items ? items[i].k : d->keys[i];
            jv val = items ? items[i].v : d->vals[i];
            if (i) jstr_puts(I, out, o->item_sep);
            if (o->indent) json_newline(I, out, o, depth + 1);
            write_json_str(I, out, k->s, k->len, o->ensure_ascii);
            jstr_puts(I, out, o->key_sep);
            jv_write_json(I, out, val, o, depth + 1);
        }
        if (o->indent && d->n) json_newline(I, out, o, depth);
        jstr_puts(I, out, "}");
        if (items) jmem_free(I, items, bytes);
        return;
    }
    default:
        jfail(I, "Object of type %s is not JSON serializable", jv_type_name(v));
    }
}

/* ---- comparisons ---- */

static bool is_num(jv v) { return v.k == JV_BOOL || v.k == JV_INT || v.k == JV_FLOAT; }
static double num_of(jv v) {
    return v.k == JV_BOOL ? (double)v.b : v.k == JV_INT ? (double)v.i : v.f;
}
static int64_t int_of(jv v) { return v.k == JV_BOOL ? (int64_t)v.b : v.i; }

bool jv_eq(jctx *I, jv a, jv b, int depth) {
    if (depth > JINJA_MAX_NEST) jfail(I, "value nested too deeply to compare");
    if (is_num(a) && is_num(b)) {
        if (a.k != JV_FLOAT && b.k != JV_FLOAT) return int_of(a) == int_of(b);
        return num_of(a) == num_of(b);
    }
    if (a.k != b.k) return false;
    switch (a.k) {
    case JV_UNDEF:
    case JV_NONE: return true;
    case JV_STR:
        return JSTR(a)->len == JSTR(b)->len && memcmp(JSTR(a)->s, JSTR(b)->s, JSTR(a)->len) == 0;
    case JV_LIST:
    case JV_TUPLE: {
        const jlist *x = JLIST(a), *y = JLIST(b);
        if (x->n != y->n) return false;
        for (size_t i = 0; i < x->n; i++)
            if (!jv_eq(I, x->v[i], y->v[i], depth + 1)) return false;
        return true;
    }
    case JV_DICT: {
        const jdict *x = JDICT(a), *y = JDICT(b);
        if (x->n != y->n) return false;
        for (size_t i = 0; i < x->n; i++) {
            jv *o = jdict_get(y, x->keys[i]->s, x->keys[i]->len);
            if (!o || !jv_eq(I, x->vals[i], *o, depth + 1)) return false;
        }
        return true;
    }
    default: return a.o == b.o;
    }
}

static int cmp_str(const jstr *a, const jstr *b, bool ci) {
    if (!ci) {
        size_t n = a->len < b->len ? a->len : b->len;
        int c = memcmp(a->s, b->s, n);
        return c ? (c < 0 ? -1 : 1) : (a->len < b->len ? -1 : a->len > b->len);
    }
    size_t i = 0, j = 0;
    while (i < a->len && j < b->len) {
        int x = utf8proc_tolower(jutf8_next(a->s, a->len, &i));
        int y = utf8proc_tolower(jutf8_next(b->s, b->len, &j));
        if (x != y) return x < y ? -1 : 1;
    }
    return i < a->len ? 1 : j < b->len ? -1 : 0;
}

int jv_cmp(jctx *I, jv a, jv b, bool ci, int depth) {
    if (depth > JINJA_MAX_NEST) jfail(I, "value nested too deeply to compare");
    if (is_num(a) && is_num(b)) {
        if (a.k != JV_FLOAT && b.k != JV_FLOAT)
            return int_of(a) < int_of(b) ? -1 : int_of(a) > int_of(b);
        double x = num_of(a), y = num_of(b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.k == JV_UNDEF) jfail_undefined(I, a);
    if (b.k == JV_UNDEF) jfail_undefined(I, b);
    if (a.k == JV_STR && b.k == JV_STR) return cmp_str(JSTR(a), JSTR(b), ci);
    if (a.k == b.k && (a.k == JV_LIST || a.k == JV_TUPLE)) {
        const jlist *x = JLIST(a), *y = JLIST(b);
        for (size_t i = 0; i < x->n && i < y->n; i++) {
            if (jv_eq(I, x->v[i], y->v[i], depth + 1)) continue;
            return jv_cmp(I, x->v[i], y->v[i], ci, depth + 1);
        }
        return x->n < y->n ? -1 : x->n > y->n;
    }
    jfail(I, "'<' not supported between instances of '%s' and '%s'", jv_type_name(a), jv_type_name(b));
}

bool jv_contains(jctx *I, jv c, jv item) {
    switch (c.k) {
    case JV_UNDEF: return false;
    case JV_STR:
        if (item.k != JV_STR)
            jfail(I, "'in <string>' requires string as left operand, not %s", jv_type_name(item));
        if (JSTR(item)->len == 0) return true;
        return memmem(JSTR(c)->s, JSTR(c)->len, JSTR(item)->s, JSTR(item)->len) != NULL;
    case JV_LIST:
    case JV_TUPLE:
        for (size_t i = 0; i < JLIST(c)->n; i++)
            if (jv_eq(I, JLIST(c)->v[i], item, 0)) return true;
        return false;
    case JV_DICT:
        return item.k == JV_STR && jdict_get(JDICT(c), JSTR(item)->s, JSTR(item)->len) != NULL;
    default:
        jfail(I, "argument of type '%s' is not iterable", jv_type_name(c));
    }
}

jlist *jv_iterate(jctx *I, jv v) {
    switch (v.k) {
    case JV_UNDEF: return jlist_new(I, 0);
    case JV_LIST:
    case JV_TUPLE: jv_retain(v); return JLIST(v);
    case JV_DICT: {
        const jdict *d = JDICT(v);
        jlist *l = jlist_new(I, d->n);
        for (size_t i = 0; i < d->n; i++) jlist_push(I, l, jv_retain(jv_strobj(d->keys[i])));
        return l;
    }
    case JV_STR: {
        const jstr *s = JSTR(v);
        jlist *l = jlist_new(I, s->len);
        for (size_t i = 0; i < s->len;) {
            size_t st = i;
            jutf8_next(s->s, s->len, &i);
            jlist_push(I, l, jv_str(I, s->s + st, i - st));
        }
        return l;
    }
    default:
        jfail(I, "'%s' object is not iterable", jv_type_name(v));
    }
}
