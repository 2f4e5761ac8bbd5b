/* test_gbnf.c — GBNF grammars (src/grammar/gbnf.c) compiled and run by the
 * Earley parser: which texts each accepts and refuses, repeats of
 * terminals and of rules, negated classes, escapes, and the errors for
 * broken grammars. */
#include <stdint.h>

#include "check.h"
#include "core/error.h"
#include "grammar/earley.h"
#include "grammar/gbnf.h"

static const char JSON_GBNF[] =
    "# JSON, with optional whitespace after values\n"
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::=\n"
    "  \"{\" ws (\n"
    "     string \":\" ws value\n"
    "     (\",\" ws string \":\" ws value)*\n"
    "  )? \"}\" ws\n"
    "array  ::= \"[\" ws ( value (\",\" ws value)* )? \"]\" ws\n"
    "string ::= \"\\\"\" ( [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4}) )* \"\\\"\" ws\n"
    "number ::= \"-\"? (\"0\" | [1-9] [0-9]{0,15}) (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)? ws\n"
    "ws     ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

/* Does g accept the whole of text? */
static bool accepts(const char *grammar, const char *text) {
    cfg *g = cfg_new();
    wick_error err = {0};
    bool ok = false;
    if (gbnf_compile(g, grammar, strlen(grammar), &err) == 0) {
        earley *e = earley_new(g, NULL, NULL);
        size_t i = 0, n = strlen(text);
        while (e && i < n && earley_push(e, (uint8_t)text[i])) i++;
        ok = e && i == n && earley_accepting(e);
        earley_free(e);
    } else {
        fprintf(stderr, "compile failed: %s\n", err.msg);
    }
    cfg_free(g);
    return ok;
}

static void test_json(void) {
    static const char *good[] = {"{}", "{\"a\": 1}", "{\"a\":[1, 2.5e3, true, null, \"x\\u00e9\"]}",
                                 "{\"k\": {\"n\": -0.5}}\n  ", "{\"é中\": \"\\n\"}"};
    static const char *bad[] = {"", "[]", "{\"a\" 1}", "{\"a\": 01}", "{\"a\": [1,]}", "{\"a\": tru}",
                                "{\"a\": \"\n\"}", "{\"a\": 1} x"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK_MSG(accepts(JSON_GBNF, good[i]), "%s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK_MSG(!accepts(JSON_GBNF, bad[i]), "%s", bad[i]);
}

static void test_forms(void) {
    static const struct {
        const char *grammar, *text;
        bool ok;
    } cases[] = {
        {"root ::= expr\nexpr ::= term ((\"+\" | \"-\") term)*\nterm ::= [0-9]+ | \"(\" expr \")\"", "1+(2-30)", true},
        {"root ::= expr\nexpr ::= term ((\"+\" | \"-\") term)*\nterm ::= [0-9]+ | \"(\" expr \")\"", "1+(2-", false},
        {"root ::= (\"ab\"){2,3} \"c\"?", "abab", true},
        {"root ::= (\"ab\"){2,3} \"c\"?", "abababc", true},
        {"root ::= (\"ab\"){2,3} \"c\"?", "ab", false},
        {"root ::= (\"ab\"){2,3} \"c\"?", "abababab", false},
        {"root ::= item{1,3}\nitem ::= \"x\" | \"yy\"", "xyyx", true},
        {"root ::= item{1,3}\nitem ::= \"x\" | \"yy\"", "xyyxx", false},
        {"root ::= item{2,}\nitem ::= \"x\" | \"yy\"", "xyyxxx", true},
        {"root ::= item{2,}\nitem ::= \"x\" | \"yy\"", "yy", false},
        {"root ::= item*\nitem ::= \"x\"", "", true},
        {"root ::= [^a-c]+", "xyzé", true},
        {"root ::= [^a-c]+", "xbz", false},
        {"root ::= [\\x41-\\x43] \"\\u00e9\" \"\\U0001F600\"", "Bé😀", true},
        {"root ::= . .", "é中", true},
        {"root ::= . .", "é", false},
        {"root ::= \"a\" # a comment\n  # another\n", "a", true},
        {"root ::= \"\" | \"b\"", "", true},
        {"root ::= a b\na ::= \"x\"\nb ::=\n  \"y\"\n  | \"z\"", "xz", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_MSG(accepts(cases[i].grammar, cases[i].text) == cases[i].ok, "grammar %zu on \"%s\"", i, cases[i].text);
}

static void refused(const char *grammar, const char *what) {
    cfg *g = cfg_new();
    wick_error err = {0};
    const int rc = gbnf_compile(g, grammar, strlen(grammar), &err);
    CHECK_MSG(rc < 0 && strstr(err.msg, what), "%s: rc %d, \"%s\" (want \"%s\")", grammar, rc, err.msg, what);
    cfg_free(g);
}

static void test_errors(void) {
    refused("root ::= a", "\"a\" is used but not defined");
    refused("top ::= \"a\"", "no rule named root");
    refused("root ::= \"a", "unterminated string");
    refused("root ::= [a-", "unterminated");
    refused("root ::= \"\\q\"", "unknown escape");
    refused("root ::= (\"a\"", "missing )");
    refused("root ::= \"a\"{3,2}", "out of order");
    refused("root ::= \"a\"{99999}", "too large");
    refused("root = \"a\"", "expected ::=");
    refused("root ::= \"a\" )", "unexpected character");
    refused("root ::= \"a\"\nroot2 ::= [z-a]", "out of order");
}

int main(void) {
    RUN(test_json);
    RUN(test_forms);
    RUN(test_errors);
    return check_summary("test_gbnf");
}
