/* jinja_internal.h — the pieces shared by the Jinja interpreter's files:
 * the template arena (jinja_arena.c), tokens (jinja_lex.c), the syntax tree
 * (jinja_parse.c, jinja_parse_expr.c), runtime values and their memory
 * (jinja_value.c), the interpreter state and evaluation entry points
 * (jinja_eval.c), and filters/tests/methods/globals (jinja_builtins.h and the
 * files it names). Not a public header.
 *
 * Invariants:
 *  - A parsed template owns everything in its arena (tokens' text, nodes,
 *    literal strings). Literal strings are "fixed" objects: never counted, never
 *    freed by the runtime.
 *  - Every other runtime object is reference counted AND linked into the
 *    render's live list. A runtime error longjmps to jinja_render, which frees
 *    every object on the list, so no error path has to release anything; at the
 *    end of a successful render the same sweep frees cycles (a namespace that
 *    holds itself, a frame that holds a macro closing over it).
 *  - Releasing is iterative (a worklist), so freeing deep structures never
 *    recurses; printing/serializing/comparing them is depth-capped.
 *  - A function returning a jv returns a new reference; arguments are borrowed
 *    unless the name says "take". */
#ifndef WICK_TEMPLATE_JINJA_INTERNAL_H
#define WICK_TEMPLATE_JINJA_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "template/jinja.h"

#define JINJA_MAX_PARSE_DEPTH 200 /* nesting of expressions and blocks in the source */
#define JINJA_MAX_ARGS 32         /* positional and keyword arguments of one call */
#define JINJA_MAX_RANGE 100000    /* items range() may produce (Jinja's sandbox limit) */
#define JINJA_MAX_NEST 512        /* container nesting printed, serialized or compared */

/* ------------------------------------------------------------------ arena */

typedef struct jarena_chunk jarena_chunk;
typedef struct jarena {
    jarena_chunk *head;
} jarena;

void *jarena_alloc(jarena *a, size_t n); /* zeroed; NULL when out of memory */
char *jarena_strndup(jarena *a, const char *s, size_t n);
void jarena_free(jarena *a);

/* ----------------------------------------------------------------- values */

typedef enum jv_kind {
    JV_UNDEF,
    JV_NONE,
    JV_BOOL,
    JV_INT,
    JV_FLOAT,
    JV_STR,
    JV_LIST,
    JV_TUPLE,
    JV_DICT,
    JV_NS,    /* namespace(): a mutable attribute bag */
    JV_FUNC,  /* a builtin function, or a method bound to a value */
    JV_MACRO, /* a macro, or the `caller` of a call block */
    JV_LOOP,  /* the `loop` variable of a for loop */
} jv_kind;

typedef enum jo_type { JO_STR, JO_LIST, JO_DICT, JO_FUNC, JO_MACRO, JO_FRAME, JO_LOOP } jo_type;

typedef struct jobj {
    struct jobj *prev, *next; /* live list (unused for fixed objects) */
    uint32_t rc;
    uint8_t type;  /* jo_type */
    uint8_t fixed; /* lives in the template arena or static memory: no counting */
} jobj;

typedef struct jv {
    uint8_t k; /* jv_kind */
    union {
        bool b;
        int64_t i;
        double f;
        jobj *o;           /* STR..MACRO */
        const char *uname; /* UNDEF: the name that was missing, or NULL */
    };
} jv;

typedef struct jstr {
    jobj h;
    size_t len, cap;
    char *s; /* NUL-terminated */
} jstr;

typedef struct jlist { /* list and tuple */
    jobj h;
    size_t n, cap;
    jv *v;
} jlist;

typedef struct jdict { /* dict and namespace: insertion-ordered, string keys */
    jobj h;
    size_t n, cap;
    jstr **keys;
    jv *vals;
    uint32_t *idx; /* hash index (slot = entry + 1, 0 = empty), built past 8 entries */
    size_t icap;
} jdict;

typedef struct jnode jnode;
typedef struct jframe jframe;

typedef struct jfunc {
    jobj h;
    int id;  /* builtin id (enum jbuiltin_id below) */
    jv self; /* bound value, or UNDEF for a global function */
} jfunc;

typedef struct jmacro {
    jobj h;
    const jnode *def; /* JN_MACRO, or JN_CALLBLOCK for a caller */
    jframe *closure;  /* the frame it was defined in (counted) */
} jmacro;

typedef struct jloop { /* loop.index etc. are computed on access */
    jobj h;
    jlist *items; /* counted */
    size_t i;
} jloop;

struct jframe { /* one scope: names bound by set/for/macro parameters */
    jobj h;
    jframe *parent; /* counted */
    size_t n, cap;
    const char **names; /* borrowed from the template or the context JSON */
    jv *vals;
    const char *inl_names[4]; /* names/vals start here; larger frames go to the heap */
    jv inl_vals[4];
};

#define JV_IS_OBJ(v) ((v).k >= JV_STR)
#define JSTR(v) ((jstr *)(v).o)
#define JLIST(v) ((jlist *)(v).o)
#define JDICT(v) ((jdict *)(v).o)
#define JFUNC(v) ((jfunc *)(v).o)
#define JMACRO(v) ((jmacro *)(v).o)
#define JLOOP(v) ((jloop *)(v).o)

static inline jv jv_undef(const char *name) {
    jv v = {.k = JV_UNDEF};
    v.uname = name;
    return v;
}
static inline jv jv_none(void) { return (jv){.k = JV_NONE}; }
static inline jv jv_bool(bool b) {
    jv v = {.k = JV_BOOL};
    v.b = b;
    return v;
}
static inline jv jv_int(int64_t i) {
    jv v = {.k = JV_INT};
    v.i = i;
    return v;
}
static inline jv jv_float(double f) {
    jv v = {.k = JV_FLOAT};
    v.f = f;
    return v;
}
static inline jv jv_obj(uint8_t k, void *o) {
    jv v = {.k = k};
    v.o = (jobj *)o;
    return v;
}
static inline jv jv_retain(jv v) {
    if (JV_IS_OBJ(v) && !v.o->fixed) v.o->rc++;
    return v;
}

/* ------------------------------------------------------------------ tokens */

typedef enum jtok_kind {
    JT_EOF,
    JT_TEXT,
    JT_BLOCK_BEGIN,
    JT_BLOCK_END,
    JT_VAR_BEGIN,
    JT_VAR_END,
    JT_NAME,
    JT_STRING,
    JT_INT,
    JT_FLOAT,
    JT_ADD,
    JT_SUB,
    JT_MUL,
    JT_DIV,
    JT_FLOORDIV,
    JT_MOD,
    JT_POW,
    JT_TILDE,
    JT_EQ,
    JT_NE,
    JT_LT,
    JT_LE,
    JT_GT,
    JT_GE,
    JT_ASSIGN,
    JT_LPAREN,
    JT_RPAREN,
    JT_LBRACKET,
    JT_RBRACKET,
    JT_LBRACE,
    JT_RBRACE,
    JT_COMMA,
    JT_DOT,
    JT_COLON,
    JT_PIPE,
} jtok_kind;

typedef struct jtok {
    uint8_t k; /* jtok_kind */
    int line, col;
    const char *s; /* NAME, STRING, TEXT: arena copy, NUL-terminated */
    size_t n;
    int64_t i;  /* INT */
    double f;   /* FLOAT */
} jtok;

/* Split the template into tokens, applying newline normalization, the removal
 * of one trailing newline, trim_blocks, lstrip_blocks and -/+ whitespace control.
 * TEXT tokens hold the text as it will be output. {% raw %} bodies become TEXT.
 * The last token is JT_EOF. */
int jinja_lex(jarena *a, const char *src, size_t len, jtok **toks, size_t *n_toks,
              wick_error *err);
const char *jinja_tok_name(int kind); /* "'%}'", "name", ... for messages */

/* ------------------------------------------------------------------- nodes */

typedef enum jn_kind {
    /* statements */
    JN_TEXT,
    JN_OUTPUT,
    JN_IF,
    JN_FOR,
    JN_SET,
    JN_SETBLOCK,
    JN_MACRO,
    JN_CALLBLOCK,
    JN_FILTERBLOCK,
    JN_WITH,
    JN_BREAK,
    JN_CONTINUE,
    JN_NOOP,
    /* expressions */
    JN_CONST,
    JN_NAME,
    JN_LIST,
    JN_TUPLE,
    JN_DICT,
    JN_GETATTR,
    JN_GETITEM,
    JN_SLICE,
    JN_CALL,
    JN_FILTER,
    JN_TEST,
    JN_NOT,
    JN_NEG,
    JN_POS,
    JN_BINOP,
    JN_AND,
    JN_OR,
    JN_COMPARE,
    JN_COND,
} jn_kind;

typedef enum jop {
    JOP_ADD,
    JOP_SUB,
    JOP_MUL,
    JOP_DIV,
    JOP_FLOORDIV,
    JOP_MOD,
    JOP_POW,
    JOP_CONCAT,
    JOP_EQ,
    JOP_NE,
    JOP_LT,
    JOP_LE,
    JOP_GT,
    JOP_GE,
    JOP_IN,
    JOP_NOTIN,
} jop;

typedef struct jnodes {
    jnode **v;
    int n;
} jnodes;

typedef struct jargs { /* arguments of a call, filter or test */
    jnodes pos;
    const char **kwnames;
    jnodes kw;
    jnode *star, *dstar; /* *expr and **expr, or NULL */
} jargs;

typedef struct jparam {
    const char *name;
    jnode *def; /* default value, or NULL */
} jparam;

/* One flat node type; each kind uses the fields its comment in jinja_parse.c names. */
struct jnode {
    uint8_t k;  /* jn_kind */
    uint8_t op; /* jop (BINOP) */
    bool flag;  /* TEST: negated; MACRO: uses varargs; */
    bool flag2; /* MACRO: uses kwargs; FILTER/TEST: had an argument list */
    bool flag3; /* MACRO: uses caller */
    uint16_t depth; /* expressions: height of the subtree (bounded by the parser) */
    int line, col;
    const char *name;
    jnode *a, *b, *c, *d;
    jv cval;              /* CONST, TEXT */
    jnodes body, orelse;  /* statements; LIST/TUPLE/DICT items in body (+ orelse = dict values) */
    jnodes filters;       /* SETBLOCK, FILTERBLOCK: FILTER nodes with a = NULL */
    jargs *args;          /* CALL, FILTER, TEST */
    jparam *params;       /* MACRO, CALLBLOCK */
    int n_params;
    uint8_t *ops;         /* COMPARE: ops[i] applies between operand i and body.v[i] */
};

struct jinja_template {
    jarena arena;
    jnodes body;
};

/* jinja_arena.c: a static string value living in the arena. */
jv jinja_static_str(jarena *a, const char *s, size_t n);

/* ------------------------------------------------------------ interpreter */

typedef struct jctx {
    jobj live;      /* sentinel of the live object list */
    jobj *dead;     /* release worklist */
    bool draining;
    size_t mem;     /* bytes held by live objects */
    uint64_t steps;
    int depth;
    jinja_limits lim;
    int line, col;  /* position of the node being evaluated (for errors) */
    jmp_buf jb;
    wick_error *err;
    jframe *root, *globals;
    const jinja_template *t;
    char *result; /* the rendered text (malloc'd) once done */
    size_t result_len;
} jctx;

/* Report a runtime error at the current position and unwind (never returns). */
_Noreturn void jfail(jctx *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void jsetpos(jctx *I, const jnode *n) {
    I->line = n->line;
    I->col = n->col;
}

/* ---- memory and objects (jinja_value.c) ---- */
void *jmem_alloc(jctx *I, size_t n);              /* counted, fails via jfail */
void *jmem_realloc(jctx *I, void *p, size_t old, size_t n);
void jmem_free(jctx *I, void *p, size_t n);
void jobj_release(jctx *I, jobj *o);
static inline void jv_release(jctx *I, jv v) {
    if (JV_IS_OBJ(v) && !v.o->fixed) jobj_release(I, v.o);
}
void jctx_sweep(jctx *I); /* free every live object (end of render or error) */

jstr *jstr_new(jctx *I, size_t cap);
void jstr_append(jctx *I, jstr *s, const char *p, size_t n);
static inline void jstr_puts(jctx *I, jstr *s, const char *p) { jstr_append(I, s, p, strlen(p)); }
jv jv_str(jctx *I, const char *p, size_t n);
jv jv_cstr(jctx *I, const char *p);
static inline jv jv_strobj(jstr *s) { return jv_obj(JV_STR, s); }

jlist *jlist_new(jctx *I, size_t cap);
void jlist_push(jctx *I, jlist *l, jv take);
jv jv_list_take(jlist *l, bool tuple);

jdict *jdict_new(jctx *I, size_t cap);
jv *jdict_get(const jdict *d, const char *key, size_t len);
void jdict_set(jctx *I, jdict *d, jstr *key, jv take);       /* key retained */
void jdict_set_c(jctx *I, jdict *d, const char *key, jv take); /* key copied */

jframe *jframe_new(jctx *I, jframe *parent);
jv *jframe_lookup(jframe *f, const char *name); /* borrowed, searching parents */
void jframe_set(jctx *I, jframe *f, const char *name, jv take);

jv jv_from_json(jctx *I, const cJSON *j, int depth);
jv jv_func(jctx *I, int id, jv self_take);                 /* a builtin (bound to self) */
jv jv_macro(jctx *I, const jnode *def, jframe *closure);  /* retains closure */
jv jv_loop(jctx *I, jlist *items, size_t i);               /* retains items */

/* ---- conversions ---- */
bool jv_truthy(jv v);
const char *jv_type_name(jv v);               /* Python's: 'str', 'NoneType', ... */
void jv_write_str(jctx *I, jstr *out, jv v);  /* str(v) as Python prints it */
void jv_write_repr(jctx *I, jstr *out, jv v, int depth);
jv jv_to_str(jctx *I, jv v);                  /* a new string value of str(v) */
void jv_format_float(double f, char *buf, size_t cap); /* Python repr(float) */
typedef struct jjson_opts {
    const char *indent; /* NULL = compact one line */
    const char *item_sep, *key_sep;
    bool sort_keys, ensure_ascii;
} jjson_opts;
void jv_write_json(jctx *I, jstr *out, jv v, const jjson_opts *o, int depth);
bool jv_eq(jctx *I, jv a, jv b, int depth);
int jv_cmp(jctx *I, jv a, jv b, bool case_insensitive, int depth); /* <0, 0, >0; jfail if unorderable */
bool jv_contains(jctx *I, jv container, jv item);
jlist *jv_iterate(jctx *I, jv v); /* items of a list/tuple/dict(keys)/str(chars)/undefined */
_Noreturn void jfail_undefined(jctx *I, jv v);

/* ---- UTF-8 and Python string predicates (jinja_value.c) ---- */
int jutf8_next(const char *s, size_t len, size_t *i); /* code point at *i, advances; bad byte = 0xFFFD */
size_t jutf8_len(const char *s, size_t len);           /* code points */
int jutf8_put(uint32_t cp, char out[4]);
bool jpy_isspace(uint32_t cp);

/* ---- evaluation (jinja_eval.c) ---- */
void jstep(jctx *I, uint64_t n); /* count n more steps (fails past the limit) */
typedef struct jargv { /* evaluated call arguments */
    jv pos[JINJA_MAX_ARGS];
    int npos;
    const char *kwn[JINJA_MAX_ARGS];
    jv kw[JINJA_MAX_ARGS];
    int nkw;
    jv keep; /* the **dict whose keys kwn points into */
} jargv;

jv jeval(jctx *I, const jnode *n, jframe *f);
void jeval_args(jctx *I, const jargs *a, jframe *f, jargv *out);
void jargv_release(jctx *I, jargv *a);
jv jcall_value(jctx *I, jv fn, jargv *args);
jv jcall_macro(jctx *I, jmacro *m, jargv *args, jv caller);

/* ---- builtins (jinja_builtins.h and the files it names) ---- */
enum jbuiltin_id {
    JB_LOOP_CYCLE = 1, /* loop.cycle(...), self = the index0 */
    JB_RANGE,
    JB_DICT,
    JB_NAMESPACE,
    JB_RAISE,
    JB_STRFTIME,
    JB_METHOD_BASE = 100, /* + index in the method table; self = the receiver */
};
void jbuiltins_install(jctx *I, jframe *globals); /* range, dict, namespace, raise_exception, ... */
jv jget_attr(jctx *I, jv obj, const char *name);  /* obj.name */
jv jget_item(jctx *I, jv obj, jv key);            /* obj[key] */
jv jcall_builtin(jctx *I, jfunc *fn, jargv *args);
/* obj.name(args) without creating a bound method; false if obj has no such method */
bool jcall_method(jctx *I, jv obj, const char *name, jargv *args, jv *out);
jv japply_filter(jctx *I, const jnode *fnode, jv operand, jframe *f);
bool japply_test(jctx *I, const jnode *tnode, jv operand, jframe *f);
jv jbinop(jctx *I, int op, jv a, jv b);
jv jstr_mod_format(jctx *I, jv fmt, jv args); /* "..." % args */

#endif
