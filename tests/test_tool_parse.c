/* test_tool_parse.c — serve/tool_parse: the family and reasoning tags found
 * from real (Qwen2.5, Qwen3) and hand-written templates and vocabularies; the
 * streaming split into content, reasoning and calls for each family (plain
 * content, content and a call, two calls, reasoning then a call, a turn
 * that starts inside reasoning, unfinished calls, arguments as a string,
 * braces inside strings); every text fed whole, byte by byte and in random
 * pieces giving the same result; and random noise never breaking the
 * parser's promises (a call's argument pieces add up to its end text). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "check.h"
#include "core/buf.h"
#include "rng.h"
#include "serve/tool_parse.h"
#include "wick.h"

/* ---- collecting events ---- */

typedef struct rec {
    wbuf content, reasoning;
    wbuf calls; /* "[index id name args|end]" per call */
    wbuf args;  /* the open call's CALL_ARGS pieces */
    int n_begin, n_end, open;
    bool bad;   /* an event out of order, or pieces not adding up */
    int stop_after; /* >0: return 7 from this event on */
    int n_ev;
} rec;

static int on_ev(void *user, const tool_ev *ev) {
    rec *r = user;
    r->n_ev++;
    switch (ev->kind) {
    case TOOL_EV_CONTENT:
        if (r->open >= 0) r->bad = true;
        wbuf_put(&r->content, ev->text, ev->len);
        break;
    case TOOL_EV_REASONING:
        if (r->open >= 0) r->bad = true;
        wbuf_put(&r->reasoning, ev->text, ev->len);
        break;
    case TOOL_EV_CALL_BEGIN:
        if (r->open >= 0 || ev->index != r->n_begin || !ev->id || !ev->name) r->bad = true;
        r->open = ev->index;
        r->n_begin++;
        wbuf_reset(&r->args);
        wbuf_printf(&r->calls, "[%d %s %s ", ev->index, ev->id ? ev->id : "?", ev->name ? ev->name : "?");
        break;
    case TOOL_EV_CALL_ARGS:
        if (r->open != ev->index) r->bad = true;
        wbuf_put(&r->args, ev->text, ev->len);
        break;
    case TOOL_EV_CALL_END:
        if (r->open != ev->index || ev->len != r->args.len ||
            (ev->len && memcmp(ev->text, r->args.data, ev->len) != 0))
            r->bad = true;
        wbuf_put(&r->calls, ev->text, ev->len);
        wbuf_puts(&r->calls, "]");
        r->open = -1;
        r->n_end++;
        break;
    }
    return r->stop_after > 0 && r->n_ev >= r->stop_after ? 7 : 0;
}

static void rec_init(rec *r) {
    memset(r, 0, sizeof *r);
    r->open = -1;
}

static void rec_free(rec *r) {
    wbuf_free(&r->content);
    wbuf_free(&r->reasoning);
    wbuf_free(&r->calls);
    wbuf_free(&r->args);
}

/* The whole outcome as one string. */
static void rec_summary(rec *r, wbuf *out) {
    wbuf_reset(out);
    wbuf_printf(out, "C<%s> R<%s> %s%s", r->content.data ? r->content.data : "",
                r->reasoning.data ? r->reasoning.data : "", r->calls.data ? r->calls.data : "",
                r->bad ? " BAD" : "");
}

/* split: 0 whole, 1 byte by byte, 2+ random pieces (seeded by split). */
static void parse(const tool_format *f, const tool_parse_opts *o, const char *text, size_t n, int split,
                  wbuf *out, int *n_calls) {
    rec r;
    rec_init(&r);
    tool_parser *p = tool_parser_new(f, o);
    if (!p) {
        wbuf_puts(out, "OOM");
        return;
    }
    uint64_t saved = rng_state;
    rng_state = 0x1234567ull * (uint64_t)(split + 1);
    size_t i = 0;
    while (i < n) {
        size_t k = split == 0 ? n - i : split == 1 ? 1 : 1 + rnd_u32() % 7;
        if (k > n - i) k = n - i;
        tool_parser_feed(p, text + i, k, on_ev, &r);
        i += k;
    }
    rng_state = saved;
    tool_parser_end(p, on_ev, &r);
    if (r.open >= 0) r.bad = true;
    if (n_calls) *n_calls = tool_parser_n_calls(p);
    if (tool_parser_n_calls(p) != r.n_begin || r.n_begin != r.n_end) r.bad = true;
    rec_summary(&r, out);
    tool_parser_free(p);
    rec_free(&r);
}

/* The text parsed whole must give `want`, and so must every split. */
static void expect_at(int line, const tool_format *f, const tool_parse_opts *o, const char *text,
                      const char *want) {
    wbuf a = {0}, b = {0};
    size_t n = strlen(text);
    parse(f, o, text, n, 0, &a, NULL);
    CHECK_MSG(strcmp(a.data, want) == 0, "line %d: %s\n   got  %s\n   want %s", line, text, a.data, want);
    for (int split = 1; split < 12; split++) {
        parse(f, o, text, n, split, &b, NULL);
        CHECK_MSG(strcmp(a.data, b.data) == 0, "line %d split %d: %s\n   whole %s\n   split %s", line, split,
                  text, a.data, b.data);
    }
    wbuf_free(&a);
    wbuf_free(&b);
}
#define EXPECT(f, o, text, want) expect_at(__LINE__, f, o, text, want)

static tool_format fmt(tool_family fam, bool think) {
    tool_format f = {.family = fam};
    if (think) {
        strcpy(f.think_open, "<think>");
        strcpy(f.think_close, "</think>");
    }
    return f;
}

/* The id of call `index` with seed 1 (for the expected strings): Mistral's
 * own 9 characters, "call_" + 24 for the others. */
static const char *id_of(tool_family fam, int index) {
    static char ids[2][4][48];
    bool m = fam == TOOL_FAMILY_MISTRAL;
    tool_format f = fmt(m ? TOOL_FAMILY_MISTRAL : TOOL_FAMILY_HERMES, false);
    tool_parse_opts o = {.tools = true, .id_seed = 1};
    const char *txt = m ? "[TOOL_CALLS][{\"name\":\"f\"},{\"name\":\"f\"},{\"name\":\"f\"},{\"name\":\"f\"}]"
                        : "<tool_call>{\"name\":\"f\"}</tool_call><tool_call>{\"name\":\"f\"}</tool_call>"
                          "<tool_call>{\"name\":\"f\"}</tool_call><tool_call>{\"name\":\"f\"}</tool_call>";
    rec r;
    rec_init(&r);
    tool_parser *p = tool_parser_new(&f, &o);
    tool_parser_feed(p, txt, strlen(txt), on_ev, &r);
    tool_parser_end(p, on_ev, &r);
    tool_parser_free(p);
    char *out = ids[m][index & 3];
    out[0] = 0;
    const char *s = r.calls.data ? r.calls.data : "";
    for (int k = 0; k <= (index & 3) && (s = strchr(s, '[')) != NULL; k++, s++)
        if (k == (index & 3)) sscanf(s, "[%*d %47s", out);
    rec_free(&r);
    return out;
}

/* ---- families ---- */

static void test_ids(void) {
    const char *a = id_of(TOOL_FAMILY_HERMES, 0), *b = id_of(TOOL_FAMILY_HERMES, 1);
    CHECK_INT(strlen(a), 29);
    CHECK(strncmp(a, "call_", 5) == 0);
    CHECK(strcmp(a, b) != 0);
    for (const char *c = a + 5; *c; c++)
        CHECK((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'));
    CHECK_STR(id_of(TOOL_FAMILY_HERMES, 0), a); /* deterministic */
    const char *m = id_of(TOOL_FAMILY_MISTRAL, 0);
    CHECK_INT(strlen(m), 9);
    /* another seed, other ids */
    tool_format f = fmt(TOOL_FAMILY_HERMES, false);
    tool_parse_opts o = {.tools = true, .id_seed = 2};
    rec r;
    rec_init(&r);
    tool_parser *p = tool_parser_new(&f, &o);
    tool_parser_feed(p, "<tool_call>{\"name\":\"f\"}</tool_call>", 35, on_ev, &r);
    tool_parser_end(p, on_ev, &r);
    CHECK(r.calls.data && !strstr(r.calls.data, a));
    tool_parser_free(p);
    rec_free(&r);
}

static void test_hermes(void) {
    tool_format f = fmt(TOOL_FAMILY_HERMES, true);
    tool_parse_opts o = {.tools = true, .reasoning = true, .id_seed = 1};
    char w[1024];
    const char *c0 = id_of(TOOL_FAMILY_HERMES, 0), *c1 = id_of(TOOL_FAMILY_HERMES, 1);

    EXPECT(&f, &o, "Hello, world!\n", "C<Hello, world!\n> R<> ");
    EXPECT(&f, &o, "a < b and <tool is <toolbox>", "C<a < b and <tool is <toolbox>> R<> ");
    snprintf(w, sizeof w, "C<Let me check.> R<> [0 %s get_weather {\"city\": \"Paris\"}]", c0);
    EXPECT(&f, &o,
           "Let me check.\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
           w);
    snprintf(w, sizeof w, "C<> R<> [0 %s a {\"x\": 1}][1 %s b {}]", c0, c1);
    EXPECT(&f, &o,
           "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", "
           "\"arguments\": {}}\n</tool_call>\n",
           w);
    /* Qwen3: reasoning, then a call */
    snprintf(w, sizeof w, "C<> R<I need the weather.\n\nIn Paris.> [0 %s get_weather {\"city\": \"Paris\"}]", c0);
    EXPECT(&f, &o,
           "<think>\nI need the weather.\n\nIn Paris.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", "
           "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
           w);
    /* the prompt opened the block (QwQ, DeepSeek-R1) */
    tool_parse_opts oi = o;
    oi.in_reasoning = true;
    EXPECT(&f, &oi, "Thinking here.\n</think>\n\nThe answer is 4.", "C<The answer is 4.> R<Thinking here.> ");
    EXPECT(&f, &oi, "<think>\nAgain.</think>ok", "C<ok> R<Again.> ");
    EXPECT(&f, &oi, "cut short in thought\n", "C<> R<cut short in thought> ");
    /* a tag inside reasoning stays reasoning */
    EXPECT(&f, &o, "<think>maybe <tool_call> here</think>ok", "C<ok> R<maybe <tool_call> here> ");
    /* arguments first, as a string, with braces and quotes inside strings */
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"x\": 1}]", c0);
    EXPECT(&f, &o, "<tool_call>{\"arguments\": {\"x\": 1}, \"name\": \"f\"}</tool_call>", w);
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\": 1, \"s\": \"}\"}]", c0);
    EXPECT(&f, &o, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1, \\\"s\\\": \\\"}\\\"}\"}</tool_call>", w);
    snprintf(w, sizeof w,
             "C<> R<> [0 %s run {\"code\": \"if (x) { return \\\"}\\\"; }\", \"n\": {\"m\": [1, {\"k\": \"]\"}]}}]", c0);
    EXPECT(&f, &o,
           "<tool_call>{\"name\": \"run\", \"arguments\": {\"code\": \"if (x) { return \\\"}\\\"; }\", \"n\": {\"m\": [1, "
           "{\"k\": \"]\"}]}}}</tool_call>",
           w);
    /* no arguments: "{}"; null arguments too */
    snprintf(w, sizeof w, "C<> R<> [0 %s f {}]", c0);
    EXPECT(&f, &o, "<tool_call>{\"name\": \"f\"}</tool_call>", w);
    EXPECT(&f, &o, "<tool_call>{\"name\": \"f\", \"arguments\": null}</tool_call>", w);
    /* unfinished: begun calls end with what came; others are content */
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\": [1, 2]]", c0);
    EXPECT(&f, &o, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2]", w);
    EXPECT(&f, &o, "Text <tool_call>\n{\"na", "C<Text <tool_call>\n{\"na> R<> ");
    EXPECT(&f, &o, "Text <tool_ca", "C<Text <tool_ca> R<> ");
    EXPECT(&f, &o, "Text <tool_call>", "C<Text <tool_call>> R<> ");
    snprintf(w, sizeof w, "C<> R<> [0 %s f {}]", c0);
    EXPECT(&f, &o, "<tool_call>{\"name\": \"f\", \"arguments\": {}}\n</tool_ca", w);
    /* JSON that is no call; text that is no JSON */
    EXPECT(&f, &o, "<tool_call>{\"foo\": 1}</tool_call>", "C<<tool_call>{\"foo\": 1}</tool_call>> R<> ");
    EXPECT(&f, &o, "<tool_call>oops</tool_call>", "C<<tool_call>oops</tool_call>> R<> ");
    /* content after a call */
    snprintf(w, sizeof w, "C<Done.> R<> [0 %s f {}]", c0);
    EXPECT(&f, &o, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\n\nDone.", w);
    /* no tools: all content; no reasoning: tags stay in content */
    tool_parse_opts nt = {.reasoning = true, .id_seed = 1};
    EXPECT(&f, &nt, "<think>hm</think>\n<tool_call>{\"name\": \"f\"}</tool_call>",
           "C<<tool_call>{\"name\": \"f\"}</tool_call>> R<hm> ");
    tool_parse_opts nr = {.tools = true, .id_seed = 1};
    snprintf(w, sizeof w, "C<<think>hm</think>> R<> [0 %s f {}]", c0);
    EXPECT(&f, &nr, "<think>hm</think>\n<tool_call>{\"name\": \"f\"}</tool_call>", w);
    tool_parse_opts none = {0};
    EXPECT(&f, &none, " <think>x</think>\n<tool_call>{}</tool_call> ", "C< <think>x</think>\n<tool_call>{}</tool_call> > R<> ");
    /* the XML form (Qwen3-Coder) */
    snprintf(w, sizeof w, "C<Checking.> R<> [0 %s get_weather {\"city\": \"Paris\", \"days\": 3, \"opts\": {\"a\": [1]}}]"
             "[1 %s noargs {}]", c0, c1);
    EXPECT(&f, &o,
           "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
           "</parameter>\n<parameter=opts>\n{\"a\": [1]}\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
           "<function=noargs>\n</function>\n</tool_call>",
           w);
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\": \"x < y\"]", c0);
    EXPECT(&f, &o, "<tool_call>\n<function=f>\n<parameter=a>\nx < y\n</parameter>\n<parameter=b>\ncut", w);
    EXPECT(&f, &o, "<tool_call>\n<function=f", "C<<tool_call>\n<function=f> R<> ");
    EXPECT(&f, &o, "<tool_call>\n<functional>", "C<<tool_call>\n<functional>> R<> ");
    /* whitespace in content is kept where no call follows */
    EXPECT(&f, &o, "  a  \n b \n", "C<  a  \n b \n> R<> ");
}

static void test_llama3(void) {
    tool_format f = fmt(TOOL_FAMILY_LLAMA3, false);
    tool_parse_opts o = {.tools = true, .id_seed = 1};
    char w[1024];
    const char *c0 = id_of(TOOL_FAMILY_LLAMA3, 0), *c1 = id_of(TOOL_FAMILY_LLAMA3, 1);
    EXPECT(&f, &o, "The capital is Paris.", "C<The capital is Paris.> R<> ");
    snprintf(w, sizeof w, "C<> R<> [0 %s get_weather {\"city\": \"Paris\"}]", c0);
    EXPECT(&f, &o, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", w);
    EXPECT(&f, &o, "\n\n{\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n", w);
    EXPECT(&f, &o, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", w);
    snprintf(w, sizeof w, "C<> R<> [0 %s a {}][1 %s b {\"x\": [1]}]", c0, c1);
    EXPECT(&f, &o, "{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"x\": [1]}}", w);
    snprintf(w, sizeof w, "C<> R<> [0 %s brave_search {\"query\":\"weather in Paris\"}]", c0);
    EXPECT(&f, &o, "<|python_tag|>brave_search.call(query=\"weather in Paris\")", w);
    snprintf(w, sizeof w, "C<Let me run it.> R<> [0 %s python {\"code\":\"print(1 + 1)\"}]", c0);
    EXPECT(&f, &o, "Let me run it.\n<|python_tag|>print(1 + 1)\n", w);
    /* JSON that is no call, and cut-short JSON, are content */
    EXPECT(&f, &o, "{\"name\": \"Bob\", \"age\": 3}", "C<{\"name\": \"Bob\", \"age\": 3}> R<> ");
    EXPECT(&f, &o, " {\"name\": \"get_wea", "C< {\"name\": \"get_wea> R<> ");
    EXPECT(&f, &o, "Sure! {not json", "C<Sure! {not json> R<> ");
    EXPECT(&f, &o, "{oops} and more", "C<{oops} and more> R<> ");
}

static void test_mistral(void) {
    tool_format f = fmt(TOOL_FAMILY_MISTRAL, false);
    tool_parse_opts o = {.tools = true, .id_seed = 1};
    char w[1024];
    const char *m0 = id_of(TOOL_FAMILY_MISTRAL, 0), *m1 = id_of(TOOL_FAMILY_MISTRAL, 1);
    EXPECT(&f, &o, "Bonjour [à] vous.", "C<Bonjour [à] vous.> R<> ");
    EXPECT(&f, &o, "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"abc123XYZ\"}]",
           "C<> R<> [0 abc123XYZ f {\"a\": 1}]");
    snprintf(w, sizeof w, "C<Sure.> R<> [0 %s f {\"a\": 1}][1 %s g {}]", m0, m1);
    EXPECT(&f, &o, "Sure. [TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {\"a\": 1}}, {\"name\": \"g\", \"arguments\": {}}]", w);
    EXPECT(&f, &o, "Sure. [TOOL_CALLS]f[ARGS]{\"a\": 1}[TOOL_CALLS]g[ARGS]{}", w);
    EXPECT(&f, &o, "[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Nice\"}",
           "C<> R<> [0 a1b2c3d4e get_weather {\"city\": \"Nice\"}]");
    /* arguments as a string */
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\":1}]", m0);
    EXPECT(&f, &o, "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": \"{\\\"a\\\":1}\"}]", w);
    /* unfinished */
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\": ]", m0);
    EXPECT(&f, &o, "[TOOL_CALLS]f[ARGS]{\"a\": ", w);
    EXPECT(&f, &o, "[TOOL_CALLS][{\"name\": \"f\", \"arg", "C<[TOOL_CALLS][{\"name\": \"f\", \"arg> R<> ");
    EXPECT(&f, &o, "[TOOL_CALLS]f[AR", "C<[TOOL_CALLS]f[AR> R<> ");
    EXPECT(&f, &o, "[TOOL_CALLS]", "C<[TOOL_CALLS]> R<> ");
}

static void test_granite(void) {
    tool_format f = fmt(TOOL_FAMILY_GRANITE, false);
    tool_parse_opts o = {.tools = true, .id_seed = 1};
    char w[1024];
    const char *c0 = id_of(TOOL_FAMILY_GRANITE, 0), *c1 = id_of(TOOL_FAMILY_GRANITE, 1);
    EXPECT(&f, &o, "Plain <|tool reply.", "C<Plain <|tool reply.> R<> ");
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\": 1}][1 %s g {}]", c0, c1);
    EXPECT(&f, &o, "<|tool_call|>[{\"name\": \"f\", \"arguments\": {\"a\": 1}}, {\"name\": \"g\", \"arguments\": {}}]", w);
    snprintf(w, sizeof w, "C<I will call f.> R<> [0 %s f {\"a\": 1}]", c0);
    EXPECT(&f, &o, "I will call f. <|tool_call|>[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]", w);
}

static void test_generic(void) {
    tool_format f = fmt(TOOL_FAMILY_GENERIC, true);
    tool_parse_opts o = {.tools = true, .reasoning = true, .id_seed = 1};
    char w[1024];
    const char *c0 = id_of(TOOL_FAMILY_GENERIC, 0), *c1 = id_of(TOOL_FAMILY_GENERIC, 1);
    EXPECT(&f, &o, "Hello there.", "C<Hello there.> R<> ");
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\": 1}]", c0);
    EXPECT(&f, &o, " {\"name\": \"f\", \"arguments\": {\"a\": 1}}", w);
    snprintf(w, sizeof w, "C<> R<Hmm.> [0 %s f {\"a\": 1}]", c0);
    EXPECT(&f, &o, "<think>Hmm.</think>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}", w);
    snprintf(w, sizeof w, "C<> R<> [0 %s f {}][1 %s g {\"b\":2}]", c0, c1);
    EXPECT(&f, &o,
           "{\"tool_calls\": [{\"name\": \"f\", \"arguments\": {}}, {\"id\": \"x\", \"type\": \"function\", "
           "\"function\": {\"name\": \"g\", \"arguments\": \"{\\\"b\\\":2}\"}}]}",
           w);
    snprintf(w, sizeof w, "C<> R<> [0 %s f {}][1 %s g {\"b\": 2}]", c0, c1);
    EXPECT(&f, &o, "[{\"name\": \"f\", \"arguments\": {}}, {\"name\": \"g\", \"parameters\": {\"b\": 2}}]", w);
    EXPECT(&f, &o, "{\"name\": \"Bob\", \"age\": 3}", "C<{\"name\": \"Bob\", \"age\": 3}> R<> ");
    EXPECT(&f, &o, "[1, 2, {\"name\": \"x\"}]", "C<[1, 2, {\"name\": \"x\"}]> R<> ");
    EXPECT(&f, &o, "{\"name\": \"f\"", "C<{\"name\": \"f\"> R<> ");
    snprintf(w, sizeof w, "C<> R<> [0 %s f {\"a\": ]", c0);
    EXPECT(&f, &o, "{\"name\": \"f\", \"arguments\": {\"a\": ", w);
    /* no tools: JSON is content at once */
    tool_parse_opts nt = {.reasoning = true};
    EXPECT(&f, &nt, "{\"name\": \"f\", \"arguments\": {}}", "C<{\"name\": \"f\", \"arguments\": {}}> R<> ");
    /* no family: reasoning only */
    tool_format n = fmt(TOOL_FAMILY_NONE, true);
    EXPECT(&n, &o, "<think>a</think>{\"name\": \"f\", \"arguments\": {}}", "C<{\"name\": \"f\", \"arguments\": {}}> R<a> ");
}

/* A callback's nonzero return stops the feed and comes back. */
static void test_stop(void) {
    tool_format f = fmt(TOOL_FAMILY_HERMES, true);
    tool_parse_opts o = {.tools = true, .reasoning = true};
    rec r;
    rec_init(&r);
    r.stop_after = 1;
    tool_parser *p = tool_parser_new(&f, &o);
    const char *t = "<think>x</think>y<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    CHECK_INT(tool_parser_feed(p, t, strlen(t), on_ev, &r), 7);
    CHECK_INT(r.n_ev, 1);
    CHECK_INT(tool_parser_end(p, on_ev, &r), 7);
    tool_parser_free(p);
    rec_free(&r);
    tool_parser_free(NULL);
}

/* Noise made of the families' pieces: never a crash, and every split agrees.
 * (-DNOISE_ITERS=N for a longer run.) */
#ifndef NOISE_ITERS
#define NOISE_ITERS 400
#endif
static void test_noise(void) {
    static const char *const bits[] = {
        "<tool_call>", "</tool_call>", "<think>", "</think>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]",
        "<|tool_call|>", "<|python_tag|>", "{", "}", "[", "]", "\"", "\\", ":", ",", ";", " ", "\n",
        "\"name\"", "\"arguments\"", "\"parameters\"", "\"id\"", "\"tool_calls\"", "\"function\"", "\"f\"",
        "null", "12", "abc", "<function=", "<parameter=", "</parameter>", "</function>", ">", "<", "<tool",
        "\xff", "\xc3", "\xa9", "f(x=1)", ".call(", "\"{\\\"a\\\":1}\"",
    };
    int nb = (int)(sizeof bits / sizeof bits[0]);
    wbuf txt = {0}, a = {0}, b = {0};
    int bad = 0;
    for (int iter = 0; iter < NOISE_ITERS; iter++) {
        wbuf_reset(&txt);
        int len = 1 + (int)(rnd_u32() % 40);
        for (int k = 0; k < len; k++) wbuf_puts(&txt, bits[rnd_u32() % (uint32_t)nb]);
        for (int fam = TOOL_FAMILY_NONE; fam <= TOOL_FAMILY_GENERIC; fam++) {
            tool_format f = fmt((tool_family)fam, iter & 1);
            tool_parse_opts o = {.tools = (iter & 2) == 0, .reasoning = (iter & 4) == 0, .in_reasoning = (iter & 8) != 0,
                                 .id_seed = (unsigned long long)iter};
            parse(&f, &o, txt.data, txt.len, 0, &a, NULL);
            for (int split = 1; split < 4; split++) {
                parse(&f, &o, txt.data, txt.len, split, &b, NULL);
                if (strcmp(a.data, b.data) != 0 && bad++ < 3)
                    fprintf(stderr, "noise %s: split %d differs on %s\n  %s\n  %s\n", tool_family_name((tool_family)fam),
                            split, txt.data, a.data, b.data);
            }
            if (strstr(a.data, " BAD") && bad++ < 3) fprintf(stderr, "noise: events out of order on %s\n", txt.data);
        }
    }
    CHECK_INT(bad, 0);
    wbuf_free(&txt);
    wbuf_free(&a);
    wbuf_free(&b);
}

/* Big inputs: deep nesting, long whitespace, fed in small pieces. */
static void test_big(void) {
    size_t n = 1u << 20;
    char *t = malloc(n + 32);
    if (!t) return;
    tool_format f = fmt(TOOL_FAMILY_GENERIC, true);
    tool_parse_opts o = {.tools = true, .reasoning = true};
    const char fill[] = {'[', ' ', '{'};
    for (int k = 0; k < 3; k++) {
        memset(t, fill[k], n);
        rec r;
        rec_init(&r);
        tool_parser *p = tool_parser_new(&f, &o);
        for (size_t i = 0; i < n; i += 3) tool_parser_feed(p, t + i, n - i < 3 ? n - i : 3, on_ev, &r);
        CHECK_INT(tool_parser_end(p, on_ev, &r), 0);
        CHECK_INT(r.content.len, n); /* no call: it all comes back as content */
        tool_parser_free(p);
        rec_free(&r);
    }
    /* a call with a 1 MiB argument string, in a Hermes tag */
    tool_format h = fmt(TOOL_FAMILY_HERMES, false);
    int m = snprintf(t, n, "<tool_call>{\"name\": \"f\", \"arguments\": {\"s\": \"");
    memset(t + m, 'x', n - (size_t)m);
    rec r;
    rec_init(&r);
    tool_parser *p = tool_parser_new(&h, &o);
    tool_parser_feed(p, t, n, on_ev, &r);
    tool_parser_feed(p, "\"}}</tool_call>", 15, on_ev, &r);
    CHECK_INT(tool_parser_end(p, on_ev, &r), 0);
    CHECK_INT(r.n_end, 1);
    CHECK(!r.bad);
    CHECK_INT(r.args.len, n - (size_t)m + 9);
    tool_parser_free(p);
    rec_free(&r);
    free(t);
}

/* ---- detection ---- */

static char *read_template(const char *rel) {
    const char *path = shared_path(rel);
    if (!path) return NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    wbuf b = {0};
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, fp)) > 0) wbuf_put(&b, buf, k);
    fclose(fp);
    cJSON *j = cJSON_ParseWithLength(b.data, b.len);
    wbuf_free(&b);
    cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "chat_template");
    char *out = cJSON_IsString(t) ? strdup(t->valuestring) : NULL;
    cJSON_Delete(j);
    return out;
}

static void test_detect(void) {
    tool_format f = tool_format_detect(NULL, NULL);
    CHECK_INT(f.family, TOOL_FAMILY_GENERIC);
    CHECK_STR(f.think_open, "");
    CHECK_STR(tool_family_name(TOOL_FAMILY_HERMES), "hermes");
    CHECK_STR(tool_family_name(TOOL_FAMILY_LLAMA3), "llama3");
    f = tool_format_detect("{{ messages[0].content }}", NULL);
    CHECK_INT(f.family, TOOL_FAMILY_GENERIC);
    CHECK(!f.think_in_prompt);
    /* QwQ: the generation prompt opens the block */
    f = tool_format_detect("{{ '<tool_call>' }}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>\\n' }}"
                           "{%- endif %}",
                           NULL);
    CHECK_INT(f.family, TOOL_FAMILY_HERMES);
    CHECK_STR(f.think_open, "<think>");
    CHECK_STR(f.think_close, "</think>");
    CHECK(f.think_in_prompt);
    /* DeepSeek-R1 distill */
    f = tool_format_detect("{% if add_generation_prompt %}{{'<\xef\xbd\x9c" "Assistant\xef\xbd\x9c><think>\\n'}}{% endif %}", NULL);
    CHECK_INT(f.family, TOOL_FAMILY_GENERIC);
    CHECK(f.think_in_prompt);
    f = tool_format_detect("{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{{- '<|python_tag|>' + "
                           "tool_call.name }}",
                           NULL);
    CHECK_INT(f.family, TOOL_FAMILY_LLAMA3);
    f = tool_format_detect("{{- '<|start_header_id|>ipython<|end_header_id|>\\n\\n' }}", NULL);
    CHECK_INT(f.family, TOOL_FAMILY_LLAMA3);
    f = tool_format_detect("{{- '[AVAILABLE_TOOLS]' }}{{- '[TOOL_CALLS][' }}", NULL);
    CHECK_INT(f.family, TOOL_FAMILY_MISTRAL);
    f = tool_format_detect("{{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' }}", NULL);
    CHECK_INT(f.family, TOOL_FAMILY_GRANITE);
    CHECK_STR(f.think_open, "");

    char *q25 = read_template("tokenizers/qwen2.5/tokenizer_config.json");
    char *q3 = read_template("tokenizers/qwen3/tokenizer_config.json");
    if (!q25 || !q3) {
        SKIP_PART("the Qwen2.5/Qwen3 templates: ../shared/tokenizers is absent");
    } else {
        f = tool_format_detect(q25, NULL);
        CHECK_INT(f.family, TOOL_FAMILY_HERMES);
        CHECK_STR(f.think_open, "");
        CHECK(!f.think_in_prompt);
        f = tool_format_detect(q3, NULL);
        CHECK_INT(f.family, TOOL_FAMILY_HERMES);
        CHECK_STR(f.think_open, "<think>");
        CHECK_STR(f.think_close, "</think>");
        CHECK(!f.think_in_prompt); /* it writes an empty block only when thinking is off */
    }
    free(q25);
    free(q3);

    const char *d3 = shared_path("tokenizers/qwen3"), *d25 = shared_path("tokenizers/qwen2.5");
    if (!d3 || !d25) {
        SKIP_PART("the Qwen vocabularies: ../shared/tokenizers is absent");
        return;
    }
    wick_error err = {0};
    wick_tokenizer *t3 = wick_tokenizer_load(d3, &err), *t25 = wick_tokenizer_load(d25, &err);
    CHECK(t3 && t25);
    if (t3 && t25) {
        f = tool_format_detect(NULL, t3); /* the vocabulary alone */
        CHECK_INT(f.family, TOOL_FAMILY_HERMES);
        CHECK_STR(f.think_open, "<think>");
        f = tool_format_detect(NULL, t25);
        CHECK_INT(f.family, TOOL_FAMILY_HERMES);
        CHECK_STR(f.think_open, "");
        f = tool_format_detect("{{ messages }}", t25);
        CHECK_INT(f.family, TOOL_FAMILY_HERMES);
    }
    wick_tokenizer_free(t3);
    wick_tokenizer_free(t25);
}

int main(void) {
    RUN(test_detect);
    RUN(test_ids);
    RUN(test_hermes);
    RUN(test_llama3);
    RUN(test_mistral);
    RUN(test_granite);
    RUN(test_generic);
    RUN(test_stop);
    RUN(test_noise);
    RUN(test_big);
    return check_summary("test_tool_parse");
}
