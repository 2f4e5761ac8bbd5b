/* jinja_tests.c — the tests (`x is name(args)`), looked up by name when they
 * run, as the filters are. */
#include <string.h>

#include "template/jinja_builtins.h"

/* ------------------------------------------------------------------- tests */

static jv need_arg(jctx *I, const jargv *a, const char *test) {
    jv x;
    if (!argp(a, 0, NULL, &x)) jfail(I, "test '%s' needs an argument", test);
    return x;
}

static bool t_boolean(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_BOOL; }
static bool t_callable(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_FUNC || v.k == JV_MACRO; }
static bool t_defined(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k != JV_UNDEF; }
static bool t_undefined(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_UNDEF; }
static bool t_none(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_NONE; }
static bool t_false(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_BOOL && !v.b; }
static bool t_true(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_BOOL && v.b; }
static bool t_integer(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_INT; }
static bool t_float(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_FLOAT; }
static bool t_number(jctx *I, jv v, jargv *a) {
    (void)I; (void)a;
    return v.k == JV_INT || v.k == JV_FLOAT || v.k == JV_BOOL;
}
static bool t_string(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_STR; }
static bool t_mapping(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_DICT; }
static bool t_iterable(jctx *I, jv v, jargv *a) {
    (void)I; (void)a;
    return v.k == JV_STR || v.k == JV_LIST || v.k == JV_TUPLE || v.k == JV_DICT || v.k == JV_UNDEF;
}
static bool t_escaped(jctx *I, jv v, jargv *a) { (void)I; (void)v; (void)a; return false; }
/* value % 2 == want, with Python's % */
static bool mod2_is(jctx *I, jv v, int want) {
    jv r = jbinop(I, JOP_MOD, v, jv_int(2));
    return r.k == JV_FLOAT ? r.f == (double)want : r.i == want;
}
static bool t_odd(jctx *I, jv v, jargv *a) { (void)a; return mod2_is(I, v, 1); }
static bool t_even(jctx *I, jv v, jargv *a) { (void)a; return mod2_is(I, v, 0); }
static bool t_divisibleby(jctx *I, jv v, jargv *a) {
    jv r = jbinop(I, JOP_MOD, v, need_arg(I, a, "divisibleby"));
    bool z = !jv_truthy(r);
    return z;
}
static bool t_eq(jctx *I, jv v, jargv *a) { return jv_eq(I, v, need_arg(I, a, "=="), 0); }
static bool t_ne(jctx *I, jv v, jargv *a) { return !jv_eq(I, v, need_arg(I, a, "!="), 0); }
static bool t_lt(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, "<"), false, 0) < 0; }
static bool t_le(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, "<="), false, 0) <= 0; }
static bool t_gt(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, ">"), false, 0) > 0; }
static bool t_ge(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, ">="), false, 0) >= 0; }
static bool t_in(jctx *I, jv v, jargv *a) { return jv_contains(I, need_arg(I, a, "in"), v); }
static bool t_sameas(jctx *I, jv v, jargv *a) {
    jv o = need_arg(I, a, "sameas");
    if (JV_IS_OBJ(v) || JV_IS_OBJ(o)) return v.k == o.k && v.o == o.o;
    return v.k == o.k && jv_eq(I, v, o, 0);
}
static bool t_lower(jctx *I, jv v, jargv *a) {
    (void)a;
    jv s = jv_to_str(I, v);
    bool r = jpy_case_is(JSTR(s), false);
    jv_release(I, s);
    return r;
}
static bool t_upper(jctx *I, jv v, jargv *a) {
    (void)a;
    jv s = jv_to_str(I, v);
    bool r = jpy_case_is(JSTR(s), true);
    jv_release(I, s);
    return r;
}
static bool t_filter(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_STR && jfilter_find(JSTR(v)->s); }
static bool t_test(jctx *I, jv v, jargv *a);

static const struct {
    const char *name;
    jtest_fn fn;
} TESTS[] = {
    {"boolean", t_boolean}, {"callable", t_callable}, {"defined", t_defined},
    {"undefined", t_undefined}, {"none", t_none}, {"false", t_false}, {"true", t_true},
    {"integer", t_integer}, {"float", t_float}, {"number", t_number}, {"string", t_string},
    {"mapping", t_mapping}, {"iterable", t_iterable}, {"sequence", t_iterable},
    {"escaped", t_escaped}, {"odd", t_odd}, {"even", t_even}, {"divisibleby", t_divisibleby},
    {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"ne", t_ne}, {"!=", t_ne},
    {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"le", t_le}, {"<=", t_le},
    {"gt", t_gt}, {"greaterthan", t_gt}, {">", t_gt}, {"ge", t_ge}, {">=", t_ge},
    {"in", t_in}, {"sameas", t_sameas}, {"lower", t_lower}, {"upper", t_upper},
    {"filter", t_filter}, {"test", t_test},
};

jtest_fn jtest_find(const char *name) {
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++)
        if (!strcmp(TESTS[i].name, name)) return TESTS[i].fn;
    return NULL;
}

static bool t_test(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_STR && jtest_find(JSTR(v)->s); }


/* tests that take an argument */
static bool test_has_arg(jtest_fn fn) {
    return fn == t_divisibleby || fn == t_eq || fn == t_ne || fn == t_lt || fn == t_le || fn == t_gt ||
           fn == t_ge || fn == t_in || fn == t_sameas;
}

bool japply_test(jctx *I, const jnode *tnode, jv operand, jframe *f) {
    jargv args;
    jeval_args(I, tnode->args, f, &args);
    jsetpos(I, tnode);
    jtest_fn fn = jtest_find(tnode->name);
    if (!fn) jfail(I, "no test named '%s'", tnode->name);
    if (args.npos + args.nkw > (test_has_arg(fn) ? 1 : 0))
        jfail(I, "test '%s' takes %s", tnode->name, test_has_arg(fn) ? "one argument" : "no arguments");
    bool r = fn(I, operand, &args);
    jargv_release(I, &args);
    return r;
}

