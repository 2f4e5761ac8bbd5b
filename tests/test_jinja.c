/* test_jinja.c — the Jinja interpreter (src/template/jinja*.c) and the chat
 * template layer (src/template/chat_template.c): every supported feature against
 * the output of Python Jinja2 3.1 configured as transformers configures it
 * (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, its
 * tojson and raise_exception), errors with their line and column, hostile
 * templates under limits, and random mutations that must never crash. */
#include <stdint.h>

#include "check.h"
#include "core/fileio.h"
#include "template/chat_template.h"
#include "template/jinja.h"

static char *render_lim(const char *tmpl, const char *vars, const jinja_limits *lim, wick_error *err) {
    jinja_template *t = jinja_parse(tmpl, strlen(tmpl), err);
    if (!t) return NULL;
    cJSON *v = vars ? cJSON_Parse(vars) : NULL;
    if (vars && !v) {
        snprintf(err->msg, sizeof err->msg, "test: bad vars JSON");
        jinja_free(t);
        return NULL;
    }
    char *out = jinja_render(t, v, lim, NULL, err);
    cJSON_Delete(v);
    jinja_free(t);
    return out;
}

static char *render(const char *tmpl, const char *vars, wick_error *err) {
    return render_lim(tmpl, vars, NULL, err);
}

/* Renders and compares; prints the template on a mismatch. */
static void expect(const char *name, const char *tmpl, const char *vars, const char *want) {
    wick_error err = {0};
    char *got = render(tmpl, vars, &err);
    CHECK_MSG(got && strcmp(got, want) == 0, "%s\n  template: %s\n  got:  %s\n  want: %s", name, tmpl,
              got ? got : err.msg, want);
    free(got);
}

/* Must fail with a message that starts with `prefix`. */
static void expect_err_lim(const char *tmpl, const char *vars, const jinja_limits *lim, const char *prefix) {
    wick_error err = {0};
    char *got = render_lim(tmpl, vars, lim, &err);
    CHECK_MSG(!got && strncmp(err.msg, prefix, strlen(prefix)) == 0,
              "template: %.200s\n  got:  %s\n  want an error starting: %s", tmpl, got ? got : err.msg, prefix);
    free(got);
}

static void expect_err(const char *tmpl, const char *vars, const char *prefix) {
    expect_err_lim(tmpl, vars, NULL, prefix);
}

/* ------------------------------------------------------------- features */

/* {name, template, variables (JSON or NULL), Python Jinja2's output} */
static const struct {
    const char *name, *tmpl, *vars, *want;
} CASES[] = {
    {"text passes through",
     "Hello, world!",
     NULL,
     "Hello, world!"},
    {"arithmetic",
     "{{ 1 + 2 }}|{{ 7 - 10 }}|{{ 2 * 3.5 }}|{{ 7 / 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}|{{ 2 ** -1 }}",
     NULL,
     "3|-3|7.0|3.5|3|-4|2|1024|0.5"},
    {"precedence",
     "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 10 - 2 - 3 }} {{ -2 ** 2 }} {{ 2 ** 3 ** 2 }} {{ not 1 == 2 }} {{ 'a' ~ 1 ~ 2 }}",
     NULL,
     "7 9 5 4 64 True a12"},
    {"string and list operators",
     "{{ 'a' + 'b' }}|{{ 'ab' * 3 }}|{{ [1] + [2, 3] }}|{{ 'a' ~ 1 ~ 2.0 ~ none ~ true ~ nothing }}",
     NULL,
     "ab|ababab|[1, 2, 3]|a12.0NoneTrue"},
    {"comparisons",
     "{{ 1 == 1.0 }} {{ 1 != 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ [1, 2] == [1, 2] }} {{ {'a': 1} == {'a': 1} }}",
     NULL,
     "True True True True True False True True"},
    {"in and not in",
     "{{ 'b' in 'abc' }} {{ 'x' not in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'k' not in {} }} {{ 1 in nothing }}",
     NULL,
     "True True True True True False"},
    {"and or not",
     "{{ true and 'x' }}|{{ false and 'x' }}|{{ '' or 'y' }}|{{ 0 or [] }}|{{ not 0 }}|{{ none or 'd' }}",
     NULL,
     "x|False|y|[]|True|d"},
    {"conditional expressions",
     "{{ 'yes' if 1 else 'no' }}|{{ 'yes' if 0 else 'no' }}|{{ 'x' if false }}|{{ 'a' if false else 'b' if false else 'c' }}",
     NULL,
     "yes|no||c"},
    {"literals print as Python",
     "{{ \"it's\" }} {{ ['it\\'s', \"q\\\"\", 'a\\nb', '\303\251', none, true, 1.0] }} {{ {'k': none} }} {{ (1,) }} {{ () }}",
     NULL,
     "it's [\"it's\", 'q\"', 'a\\nb', '\303\251', None, True, 1.0] {'k': None} (1,) ()"},
    {"floats print as Python",
     "{{ 1e16 }} {{ 1e15 }} {{ 0.1 + 0.2 }} {{ 1e-5 }} {{ 0.0001 }} {{ 3.0 }} {{ 2.0 ** 0.5 }}",
     NULL,
     "1e+16 1000000000000000.0 0.30000000000000004 1e-05 0.0001 3.0 1.4142135623730951"},
    {"string escapes",
     "{{ \"\\u00e9\\x41\\101\" }}|{{ 'a' 'b' \"c\" }}|{{ '\\q' }}|{{ 1_000 + 1 }}",
     NULL,
     "\303\251AA|abc|\\q|1001"},
    {"if elif else",
     "{% set x = 5 %}{% if x > 3 %}big{% elif x > 1 %}mid{% else %}small{% endif %}|{% if x < 3 %}a{% elif x < 10 %}b{% endif %}|{% if none %}n{% else %}e{% endif %}",
     NULL,
     "big|b|e"},
    {"loop variables",
     "{% for i in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
     NULL,
     "1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;"},
    {"loop previtem nextitem cycle",
     "{% for x in [1, 2, 3] %}{{ loop.previtem }}-{{ loop.nextitem }}{{ loop.cycle('a', 'b') }};{% endfor %}",
     NULL,
     "-2a;1-3b;2-a;"},
    {"for over strings and dicts",
     "{% for c in 'h\303\251llo' %}[{{ c }}]{% endfor %}|{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}|{% for k, v in {'b': 1, 'a': 2}.items() %}{{ k }}={{ v }},{% endfor %}|{% for k, v in {'x': 'y'}|items %}{{ k }}{{ v }}{% endfor %}",
     NULL,
     "[h][\303\251][l][l][o]|ba|b=1,a=2,|xy"},
    {"for else, filter, break, continue",
     "{% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1, 2, 3, 4, 5] if x is odd %}{{ x }}{{ loop.index }}{% endfor %}|{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}",
     NULL,
     "empty|113253|1"},
    {"for else after continue",
     "{% for x in [1, 2] %}{% continue %}{% else %}E{% endfor %}|{% for x in [1, 2] %}{{ x }}{% else %}E{% endfor %}",
     NULL,
     "E|12"},
    {"for tuple unpacking",
     "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}|{% for (a, b) in [(1, 2)] %}{{ a }}{{ b }}{% endfor %}",
     NULL,
     "37|12"},
    {"namespace",
     "{% set ns = namespace(count=0, items=[]) %}{% for i in range(5) %}{% set ns.count = ns.count + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.count }} {{ ns.items }}",
     NULL,
     "10 [0, 1, 2, 3, 4]"},
    {"set scoping",
     "{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}|{% if true %}{% set y = 3 %}{% endif %}{{ y }}|{% for i in [1, 2] %}{% if loop.first %}{% set z = 1 %}{% endif %}[{{ z }}]{% endfor %}",
     NULL,
     "21|3|[1][]"},
    {"set forms",
     "{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set t = (1, 2) %}{{ t }}|{% set c %}captured {{ a }}{% endset %}[{{ c }}]|{% set d | upper %}shout{% endset %}{{ d }}",
     NULL,
     "12|(1, 2)|[captured 1]|SHOUT"},
    {"macros",
     "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', 'Hi') }} {{ greet(name='Cy', greeting='Yo') }} [{{ greet() }}]",
     NULL,
     "Hello, Ann! Hi, Bob! Yo, Cy! [Hello, !]"},
    {"macro varargs kwargs",
     "{% macro m() %}{{ varargs }}|{{ kwargs }}{% endmacro %}{{ m(1, 2, a=3) }}",
     NULL,
     "(1, 2)|{'a': 3}"},
    {"macro recursion",
     "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}",
     NULL,
     "120"},
    {"call blocks",
     "{% macro outer() %}<{{ caller() }}>{% endmacro %}{% call outer() %}inside{% endcall %}|{% macro lst(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) lst([1, 2]) %}[{{ x }}]{% endcall %}",
     NULL,
     "<inside>|[1][2]"},
    {"with and filter blocks",
     "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]|{% filter upper %}shout {{ 'it' }}{% endfilter %}",
     NULL,
     "3[]|SHOUT IT"},
    {"slicing",
     "{{ 'abcdef'[1:3] }}|{{ 'abcdef'[::-1] }}|{{ 'abcdef'[-2:] }}|{{ 'abcdef'[:-2] }}|{{ 'abcdef'[::2] }}|{{ [1, 2, 3, 4][1:] }}|{{ [1, 2, 3][::-1] }}|{{ 'h\303\251llo'[::-1] }}|{{ [1, 2, 3][-5:] }}|{{ [1, 2, 3, 4, 5][4:1:-1] }}",
     NULL,
     "bc|fedcba|ef|abcd|ace|[2, 3, 4]|[3, 2, 1]|oll\303\251h|[1, 2, 3]|[5, 4, 3]"},
    {"attribute and subscript access",
     "{{ x.a }}|{{ x['a'] }}|{{ x.b.c }}|{{ x['b']['c'] }}|{{ x.missing }}|{{ x.missing is defined }}|{{ x.l[0] }}|{{ x.l.1 }}|{{ x.l[-1] }}|{{ x.l[9] is defined }}|{{ 'abc'[1] }}{{ 'abc'[-1] }}",
     "{\"x\": {\"a\": 1, \"b\": {\"c\": \"deep\"}, \"l\": [10, 20, 30]}}",
     "1|1|deep|deep||False|10|20|30|False|bc"},
    {"dict attribute finds the method first",
     "{{ x['items'] }} {{ x.get('items') }} {{ x.items()|list|length }}",
     "{\"x\": {\"items\": 5}}",
     "5 5 1"},
    {"string methods: case",
     "{{ 'Hello World'.upper() }}|{{ 'Hello World'.lower() }}|{{ 'hello world'.title() }}|{{ \"they're bill's\".title() }}|{{ 'hello WORLD'.capitalize() }}|{{ '\303\211COLE'.lower() }}",
     NULL,
     "HELLO WORLD|hello world|Hello World|They'Re Bill'S|Hello world|\303\251cole"},
    {"string methods: strip",
     "{{ '  x  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\\n\\nhi\\n'.lstrip('\\n') }}|{{ '\\n\\nhi\\n\\n'.rstrip('\\n') }}|{{ ' \\n hi'.lstrip('\\n') }}|{{ '  a  '.lstrip() }}.",
     NULL,
     "x|hi|hi\n|\n\nhi| \n hi|a  ."},
    {"string methods: split",
     "{{ 'a,b,,c'.split(',') }}|{{ '  a  b c '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ 'a\\nb\\r\\nc'.splitlines() }}|{{ 'x</think>y</think>z'.split('</think>')[-1] }}",
     NULL,
     "['a', 'b', '', 'c']|['a', 'b', 'c']|['a', 'b c']|['a,b', 'c']|['a', 'b', 'c']|z"},
    {"string methods: search and replace",
     "{{ 'hello'.startswith('he') }} {{ 'hello'.endswith('lo') }} {{ 'hello'.startswith(('x', 'h')) }} {{ 'hello'.replace('l', 'L') }} {{ 'hello'.replace('l', 'L', 1) }} {{ 'hello'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.count('l') }} {{ '-'.join(['a', 'b']) }}",
     NULL,
     "True True True heLLo heLlo 2 3 2 a-b"},
    {"string methods: predicates",
     "{{ '123'.isdigit() }} {{ 'abc'.isalpha() }} {{ 'ab1'.isalnum() }} {{ ' \\t'.isspace() }} {{ 'abc'.islower() }} {{ 'ABC'.isupper() }} {{ ''.isdigit() }}",
     NULL,
     "True True True True True True False"},
    {"dict methods",
     "{{ d.get('a') }}|{{ d.get('zz') }}|{{ d.get('zz', 'def') }}|{{ d.keys()|list }}|{{ d.values()|list }}|{{ d.items()|list }}",
     "{\"d\": {\"a\": 1, \"b\": [true, null]}}",
     "1|None|def|['a', 'b']|[1, [True, None]]|[('a', 1), ('b', [True, None])]"},
    {"filters: length count first last",
     "{{ [3, 1, 2]|length }} {{ 'h\303\251llo'|length }} {{ {'a': 1}|length }} {{ [1, 2]|count }} {{ nothing|length }} {{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }} {{ []|first is defined }}",
     NULL,
     "3 5 1 2 0 1 3 a False"},
    {"filters: join list string",
     "{{ [1, 2, 3]|join }} {{ [1, 2, 3]|join(', ') }} {{ users|join(', ', attribute='name') }} {{ 'abc'|list }} {{ {'a': 1}|list }} {{ 1|string }} {{ [1, 'a']|string }} {{ none|string }}",
     "{\"users\": [{\"name\": \"ann\"}, {\"name\": \"bob\"}]}",
     "123 1, 2, 3 ann, bob ['a', 'b', 'c'] ['a'] 1 [1, 'a'] None"},
    {"filters: case and trim",
     "{{ 'Hi'|upper }} {{ 'Hi'|lower }} {{ 'hello world'|title }} {{ \"they're bill's-friends\"|title }} {{ 'hELLO'|capitalize }} [{{ '  x  '|trim }}] {{ 'xxaxx'|trim('x') }}",
     NULL,
     "HI hi Hello World They're Bill's-Friends Hello [x] a"},
    {"filters: default",
     "{{ nothing|default('d') }} {{ none|default('d') }} [{{ ''|default('d') }}] {{ ''|default('d', true) }} {{ 0|d('zero', boolean=true) }} {{ 'v'|default }} [{{ nothing|default }}]",
     NULL,
     "d None [] d zero v []"},
    {"filters: tojson",
     "{{ 'x'|tojson }} {{ [1, '\303\251', none, true, 1.5]|tojson }} {{ {'b': 1, 'a': [1, 2]}|tojson }} {{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }} {{ '\303\251\\n\"\\\\'|tojson }} {{ '\303\251'|tojson(ensure_ascii=true) }} {{ 'ctrl\\x01\\x7f'|tojson }} {{ [1, 2]|tojson(separators=(',', ':')) }}",
     NULL,
     "\"x\" [1, \"\303\251\", null, true, 1.5] {\"b\": 1, \"a\": [1, 2]} {\"a\": 2, \"b\": 1} \"\303\251\\n\\\"\\\\\" \"\\u00e9\" \"ctrl\\u0001\177\" [1,2]"},
    {"filters: tojson indent",
     "{{ {'a': [1, {'b': 2}], 'c': {}, 'd': []}|tojson(indent=2) }}",
     NULL,
     "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ],\n  \"c\": {},\n  \"d\": []\n}"},
    {"filters: tojson of context values",
     "{{ x|tojson }}",
     "{\"x\": {\"name\": \"f\", \"params\": {\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"string\", \"description\": \"\346\227\245\346\234\254\350\252\236 \360\237\231\202\"}}}, \"n\": 3, \"f\": 0.25, \"neg\": -1.5e-07, \"t\": true, \"z\": null}}",
     "{\"name\": \"f\", \"params\": {\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"string\", \"description\": \"\346\227\245\346\234\254\350\252\236 \360\237\231\202\"}}}, \"n\": 3, \"f\": 0.25, \"neg\": -1.5e-07, \"t\": true, \"z\": null}"},
    {"filters: numbers",
     "{{ -3|abs }} {{ 2.5|int }} {{ '42'|int }} {{ ' 7 '|int }} {{ '3.9'|int }} {{ 'x'|int }} {{ 'x'|int(5) }} {{ '2.5'|float }} {{ 3|float }} {{ 2.567|round(2) }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.1|round(method='ceil') }}",
     NULL,
     "3 2 42 7 3 0 5 2.5 3.0 2.57 2.0 4.0 3.0"},
    {"filters: sort unique sum min max reverse",
     "{{ [3, 1, 2]|sort }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ [3, 1, 2]|sort(reverse=true) }} {{ users|sort(attribute='age')|map(attribute='name')|join(',') }} {{ [1, 2, 2, 'a', 'A']|unique|list }} {{ [1, 2, 3]|sum }} {{ [3, 1, 2]|max }} {{ [3, 1, 2]|min }} {{ [1, 2]|reverse|list }} {{ 'abc'|reverse }}",
     "{\"users\": [{\"name\": \"a\", \"age\": 30}, {\"name\": \"b\", \"age\": 20}, {\"name\": \"c\", \"age\": 25}]}",
     "[1, 2, 3] ['A', 'b', 'c'] ['A', 'b', 'c'] [3, 2, 1] b,c,a [1, 2, 'a'] 6 3 1 [2, 1] cba"},
    {"filters: select map",
     "{{ msgs|selectattr('role', 'equalto', 'user')|map(attribute='content')|join('|') }} {{ msgs|rejectattr('role', 'eq', 'user')|list|length }} {{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('even')|list }} {{ ['a', 'B']|map('upper')|list }} {{ [0, 1, '', 'x']|select|list }}",
     "{\"msgs\": [{\"role\": \"user\", \"content\": \"u1\"}, {\"role\": \"assistant\", \"content\": \"a1\"}, {\"role\": \"user\", \"content\": \"u2\"}]}",
     "u1|u2 1 [1, 3] [1, 3] ['A', 'B'] [1, 'x']"},
    {"filters: dictsort batch indent format",
     "{{ {'b': 1, 'a': 2}|dictsort }} {{ {'b': 1, 'a': 2}|dictsort(by='value') }} {{ [1, 2, 3, 4, 5]|batch(2)|list }} [{{ 'a\\nb\\n\\nc'|indent }}] [{{ 'x'|indent('>> ', first=true) }}] {{ '%s=%d %.2f%%'|format('k', 3, 1.5) }} {{ '%(a)s-%(b)s' % {'a': 1, 'b': 2} }}",
     NULL,
     "[('a', 2), ('b', 1)] [('b', 1), ('a', 2)] [[1, 2], [3, 4], [5]] [a\n    b\n\n    c] [>> x] k=3 1.50% 1-2"},
    {"tests",
     "{{ x is defined }} {{ y is undefined }} {{ none is none }} {{ 'a' is string }} {{ 1 is number }} {{ 1.0 is float }} {{ 1 is integer }} {{ true is boolean }} {{ {} is mapping }} {{ [] is iterable }} {{ 'a' is iterable }} {{ [] is sequence }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ true is true }} {{ 0 is false }} {{ 'a' is lower }} {{ 'A' is upper }} {{ 2 is in [1, 2] }} {{ 3 is gt 2 }} {{ 3 is eq(3) }} {{ x is not none }} {{ range is callable }}",
     "{\"x\": 1}",
     "True True True True True True True True True True True True True True True True False True True True True True True True"},
    {"globals",
     "{{ range(3)|list }} {{ range(1, 4)|list }} {{ range(10, 0, -3)|list }} {{ dict(a=1, b=2) }} {{ namespace(a=1).a }}",
     NULL,
     "[0, 1, 2] [1, 2, 3] [10, 7, 4, 1] {'a': 1, 'b': 2} 1"},
    {"messages idioms",
     "{{ messages[0]['role'] }} {{ messages[-1].content[:5] }} {{ messages|length - 1 }} {% for m in messages %}{{ m.role[0]|upper }}:{{ m.content }}{% if not loop.last %}, {% endif %}{% endfor %}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"hello world\"}, {\"role\": \"assistant\", \"content\": \"fine\"}]}",
     "user fine 1 U:hello world, A:fine"},
    {"trim_blocks and lstrip_blocks",
     "{% for i in [1, 2] %}\n  {{ i }}\n{% endfor %}\n  {% if true %}\n    line\n  {% endif %}\nend\n",
     NULL,
     "  1\n  2\n    line\nend"},
    {"whitespace control",
     "a  {%- if true -%}  b  {%- endif -%}  c|{{- ' x ' -}}   |\n  {%+ if true %}keep{% endif %}\n{% if true +%}\nnl{% endif %}\n",
     NULL,
     "abc| x |\n  keep\nnl"},
    {"comments",
     "a  {# comment #}  b\n  {# own line #}\nc\n{#- strip -#}   d",
     NULL,
     "a    b\ncd"},
    {"raw",
     "{% raw %}{{ not parsed }} {% if %}{% endraw %}|{%- raw -%}   spaced   {%- endraw -%}|",
     NULL,
     "{{ not parsed }} {% if %}|spaced|"},
    {"braces inside strings and dicts",
     "{{ \"}}\" }}{{ {'a': {'b': 1}}['a']['b'] }}{{ '{%' }}",
     NULL,
     "}}1{%"},
    {"trailing newline dropped",
     "x\n",
     NULL,
     "x"},
    {"undefined is falsy and prints empty",
     "[{{ nothing }}]{% if nothing %}T{% else %}F{% endif %}{% for x in nothing %}x{% endfor %}[{{ nothing.attr }}]",
     NULL,
     "[]F[]"},

};

static void test_features(void) {
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        expect(CASES[i].name, CASES[i].tmpl, CASES[i].vars, CASES[i].want);
}

static void test_context_variables(void) {
    /* numbers from JSON: integral values are ints, others floats; key order kept */
    expect("json numbers", "{{ a }} {{ b }} {{ c }} {{ d|tojson }}",
           "{\"a\": 1, \"b\": 1.5, \"c\": -0.25, \"d\": {\"z\": 1, \"a\": [1e2, 2.5]}}",
           "1 1.5 -0.25 {\"z\": 1, \"a\": [100, 2.5]}");
    expect("json null and bools", "{{ n }} {{ n is none }} {{ t }} {{ f is false }}",
           "{\"n\": null, \"t\": true, \"f\": false}", "None True True True");
    /* a duplicated key keeps its first position and its last value, as JSON parsers do */
    expect("duplicate keys", "{{ d|tojson }}", "{\"d\": {\"a\": 1, \"b\": 2, \"a\": 3}}", "{\"a\": 3, \"b\": 2}");
    /* a large dict (hash index) */
    char vars[8192] = "{\"d\": {", *p = vars + strlen(vars);
    for (int i = 0; i < 200; i++) p += sprintf(p, "%s\"k%d\": %d", i ? ", " : "", i, i * i);
    strcpy(p, "}}");
    expect("large dict", "{{ d.k0 }} {{ d.k150 }} {{ d['k199'] }} {{ d|length }} {{ d.k200 is defined }}", vars,
           "0 22500 39601 200 False");
    /* the same template renders many times */
    wick_error err;
    jinja_template *t = jinja_parse("{{ x * 2 }}", 11, &err);
    CHECK(t != NULL);
    for (int i = 0; i < 3; i++) {
        char json[32];
        snprintf(json, sizeof json, "{\"x\": %d}", i);
        cJSON *v = cJSON_Parse(json);
        size_t len = 99;
        char *out = jinja_render(t, v, NULL, &len, &err);
        char want[8];
        snprintf(want, sizeof want, "%d", 2 * i);
        CHECK_STR(out, want);
        CHECK_INT(len, strlen(want));
        free(out);
        cJSON_Delete(v);
    }
    jinja_free(t);
    /* no variables at all */
    expect("no vars", "{{ x is defined }}", NULL, "False");
    expect_err("x", "[1, 2]", "line 1, column 1: template variables must be a JSON object");
}

/* --------------------------------------------------------------- errors */

static void test_syntax_errors(void) {
    expect_err("{{ x", NULL, "line 1, column 1: unexpected end of template");
    expect_err("a\n  {% if x %}abc", NULL, "line 2, column 6: unexpected end of template: '{% if %}' is not closed");
    expect_err("{% for x in y %}", NULL, "line 1, column 4: unexpected end of template: '{% for %}' is not closed");
    expect_err("ok\n{# never closed", NULL, "line 2, column 1: unexpected end of template: comment not closed");
    expect_err("{{ 'abc }}", NULL, "line 1, column 4: unterminated string literal");
    expect_err("{% endif %}", NULL, "line 1, column 4: unknown or unexpected tag 'endif'");
    expect_err("{% include 'x' %}", NULL, "line 1, column 4: unknown or unexpected tag 'include'");
    expect_err("{{ 1 + }}", NULL, "line 1, column 8: unexpected '}}'");
    expect_err("{{ x y }}", NULL, "line 1, column 6: expected '}}', got 'y'");
    expect_err("{% if x %}{% else %}{% elif y %}{% endif %}", NULL, "line 1, column 24: unknown or unexpected tag 'elif'");
    expect_err("{% break %}", NULL, "line 1, column 4: 'break' outside of a loop");
    expect_err("{% macro m(a, a) %}{% endmacro %}", NULL, "line 1, column 15: duplicate parameter 'a'");
    expect_err("{{ 'a' $ 'b' }}", NULL, "line 1, column 8: unexpected character '$'");
    expect_err("{{ '\\xZZ' }}", NULL, "line 1, column 5: invalid \\x escape");
    expect_err("{{ 99999999999999999999 }}", NULL, "line 1, column 4: integer literal too large");
    expect_err("{% for m in messages %}\n{{ m.content }\n{% endfor %}", NULL,
               "line 2, column 1: '{{' is not closed: expected '}}' before the '{%' at line 3, column 1");
    expect_err("{% set x.y.z = 1 %}", NULL, "line 1, column 11: expected '%}', got '.'");
}

static void test_runtime_errors(void) {
    /* unknown filters and tests fail when used, not when parsed (as in Jinja2's conditionals) */
    expect_err("{{ x|nosuch }}", NULL, "line 1, column 6: no filter named 'nosuch'");
    expect_err("{{ x is nosuch }}", NULL, "line 1, column 6: no test named 'nosuch'");
    expect("unknown filter in a branch not taken", "{% if false %}{{ x|nosuch }}{% endif %}ok", NULL, "ok");
    expect_err("{{ 1 is odd(2) }}", NULL, "line 1, column 6: test 'odd' takes no arguments");
    expect_err("{{ 1|indent }}", NULL, "line 1, column 6: indent needs a string, not int");
    expect("slicing what cannot be sliced is undefined", "[{{ 1[1:] }}][{{ none[0] }}][{{ {}[:1] is defined }}]", NULL, "[][][False]");
    expect_err("line one\n  {{ raise_exception('Conversation roles must alternate') }}", NULL,
               "line 2, column 6: Conversation roles must alternate");
    expect_err("{{ 1 + 'a' }}", NULL, "line 1, column 6: unsupported operand type(s) for +: 'int' and 'str'");
    expect_err("{{ nothing + 1 }}", NULL, "line 1, column 12: 'nothing' is undefined");
    expect("a string plus undefined or none is the string (as llama.cpp renders it)",
           "[{{ 'a' + nothing }}][{{ nothing + 'b' }}][{{ 'c' + none }}][{{ none + 'd' }}]", NULL, "[a][b][c][d]");
    expect_err("{{ none + 1 }}", NULL, "line 1, column 9: unsupported operand type(s) for +: 'NoneType' and 'int'");
    expect_err("{{ 1 / 0 }}", NULL, "line 1, column 6: division by zero");
    expect_err("{{ 5 // 0 }}", NULL, "line 1, column 6: integer division or modulo by zero");
    expect_err("{% for x in 5 %}{% endfor %}", NULL, "line 1, column 13: 'int' object is not iterable");
    expect_err("{{ none.x + 1 }}", NULL, "line 1, column 11: 'x' is undefined");
    expect_err("{{ 'a' in none }}", NULL, "line 1, column 4: argument of type 'NoneType' is not iterable");
    expect_err("{{ 1 < 'a' }}", NULL, "line 1, column 4: '<' not supported between instances of 'int' and 'str'");
    expect_err("{{ foo() }}", NULL, "line 1, column 4: 'foo' is undefined");
    expect_err("{{ (1)() }}", NULL, "line 1, column 5: 'int' object is not callable");
    expect_err("{% set x = 1 %}{% set x.y = 2 %}", NULL, "line 1, column 25: cannot assign attribute on non-namespace object");
    expect_err("{% set a, b = [1] %}", NULL, "line 1, column 8: not enough values to unpack (expected 2, got 1)");
    expect_err("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", NULL, "line 1, column 34: macro 'm' takes not more than 1 argument(s)");
    expect_err("{% macro m(a) %}{% endmacro %}{{ m(b=2) }}", NULL, "line 1, column 34: macro 'm' takes no keyword argument 'b'");
    expect_err("{{ nothing|tojson }}", NULL, "line 1, column 12: Object of type Undefined is not JSON serializable");
    expect_err("{{ 'x'.split('') }}", NULL, "line 1, column 7: empty separator");
    expect_err("{{ range(0, 10, 0) }}", NULL, "line 1, column 4: range() arg 3 must not be zero");
    expect_err("{{ 9223372036854775807 + 1 }}", NULL, "line 1, column 24: integer overflow");
    expect_err("{{ '%d' % 'x' }}", NULL, "line 1, column 9: %d format: a real number is required, not str");
    expect_err("{{ {1: 2} }}", NULL, "line 1, column 5: dict keys must be strings, not int");
    expect_err("{{ [1][1:2:0] }}", NULL, "line 1, column 7: slice step cannot be zero");
}

/* -------------------------------------------------------------- hostile */

static char *repeat(const char *a, int n, const char *mid, const char *b, int m) {
    size_t la = strlen(a), lb = strlen(b), lm = strlen(mid);
    char *s = malloc(la * (size_t)n + lm + lb * (size_t)m + 1), *p = s;
    for (int i = 0; i < n; i++, p += la) memcpy(p, a, la);
    memcpy(p, mid, lm);
    p += lm;
    for (int i = 0; i < m; i++, p += lb) memcpy(p, b, lb);
    *p = 0;
    return s;
}

static void test_hostile(void) {
    char *s;
    s = repeat("(", 100000, "1", ")", 100000);
    char *t = malloc(strlen(s) + 8);
    sprintf(t, "{{ %s }}", s);
    expect_err(t, NULL, "line 1, column ");
    free(t);
    free(s);
    s = repeat("{% if true %}", 5000, "x", "{% endif %}", 5000);
    expect_err(s, NULL, "line 1, column ");
    free(s);
    s = repeat("{{ 1", 1, "", " ~ 1", 20000);
    t = malloc(strlen(s) + 4);
    sprintf(t, "%s }}", s);
    expect_err(t, NULL, "line 1, column ");
    free(t);
    free(s);
    s = repeat("{{ x", 1, "", "|string", 20000);
    t = malloc(strlen(s) + 4);
    sprintf(t, "%s }}", s);
    expect_err(t, NULL, "line 1, column ");
    free(t);
    free(s);
    s = repeat("{{ [", 20000, "", "]", 20000);
    expect_err(s, NULL, "line 1, column ");
    free(s);
    s = repeat("{{ not", 20000, " 1 }}", "", 0);
    expect_err(s, NULL, "line 1, column ");
    free(s);

    jinja_limits lim = jinja_default_limits();
    lim.max_steps = 200000;
    expect_err_lim("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", NULL, &lim,
                   "line 1, column 41: template takes too many steps");
    expect_err_lim("{% set ns = namespace(i=0) %}{% for a in range(100000) %}{% for b in range(100000) %}"
                   "{% set ns.i = ns.i + 1 %}{% endfor %}{% endfor %}", NULL, &lim, "line 1, column ");
    expect_err("{{ range(1000000000)|length }}", NULL,
               "line 1, column 4: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    lim = jinja_default_limits();
    lim.max_string = 1 << 20;
    expect_err_lim("{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                   NULL, &lim, "line 1, column 76: string longer than the limit of 1048576 bytes");
    expect_err_lim("{{ 'x' * 100000000 }}", NULL, &lim, "line 1, column 8: string longer than the limit");
    expect_err_lim("{% for i in range(100000) %}{{ 'abcdefghijklmnopqrstuvwxyz' }}{% endfor %}", NULL, &lim,
                   "line 1, column 32: string longer than the limit");
    lim = jinja_default_limits();
    lim.max_memory = 16 << 20;
    expect_err_lim("{% set ns = namespace(s=[1]) %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
                   NULL, &lim, "line 1, column ");
    expect_err("{{ [1, 2] * 1000000000000 }}", NULL, "line 1, column 11: list too long");
    expect_err("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", NULL, "line 1, column 19: template recursion too deep");
    expect_err("{% macro m(n) %}{{ m(n + 1) ~ n }}{% endmacro %}{{ m(0) }}", NULL, "line 1, column ");
    /* cycles and deep values: errors, not crashes; memory is freed (see the SAN build) */
    expect_err("{% set ns = namespace() %}{% set ns.self = ns %}{{ ns }}", NULL, "line 1, column 52: value nested too deeply to print");
    expect("namespace compares by identity", "{% set ns = namespace() %}{% set ns.self = ns %}{{ ns.self == ns }}", NULL, "True");
    expect("namespace cycle freed", "{% set ns = namespace() %}{% set ns.self = ns %}{% set ns.x = [ns, ns] %}ok", NULL, "ok");
    expect("macro closure cycle freed", "{% for i in range(3) %}{% macro m() %}{{ i }}{% endmacro %}{{ m() }}{% endfor %}", NULL, "012");
    expect("deep list freed", "{% set ns = namespace(l=[]) %}{% for i in range(50000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l|length }}", NULL, "1");
    expect_err("{% set ns = namespace(l=[]) %}{% for i in range(50000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l|tojson }}",
               NULL, "line 1, column ");
    /* invalid UTF-8 in the template and in values does not break anything */
    expect("invalid utf-8", "\xff{{ s|length }}{{ s[::-1]|length }}{{ s.upper()|length }}\xc3", "{\"s\": \"a\\u00e9b\"}", "\xff" "333\xc3");
    wick_error err;
    jinja_template *tp = jinja_parse("{{ s|upper }}{{ s[1:] }}{{ s.split() }}", 39, &err);
    CHECK(tp != NULL);
    if (tp) {
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "s", "\xe2\x28\xa1 \xf0\x9f\x98 x\xc0\xaf");
        char *out = jinja_render(tp, v, NULL, NULL, &err);
        CHECK(out != NULL);
        free(out);
        cJSON_Delete(v);
        jinja_free(tp);
    }
    /* NUL bytes in the template source are data */
    tp = jinja_parse("a\0b{{ 1 }}", 10, &err);
    CHECK(tp != NULL);
    if (tp) {
        size_t len = 0;
        char *out = jinja_render(tp, NULL, NULL, &len, &err);
        CHECK(out && len == 4 && memcmp(out, "a\0b1", 4) == 0);
        free(out);
        jinja_free(tp);
    }
}

/* Random byte mutations of real-looking templates must parse or fail cleanly,
 * and render or fail cleanly, never crash or hang. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static void test_mutations(void) {
    static const char *const pieces[] = {"{{", "}}", "{%", "%}", "{#", "#}", "-", "+", " if ", " for ",
                                         " in ", " endif ", " endfor ", " else ", "(", ")", "[", "]", "{",
                                         "}", "'", "\"", "|", ".", ",", ":", "~", "x", "loop", "ns", "1", "\n"};
    const char *seeds[] = {chat_template_builtin("chatml"), chat_template_builtin("llama3"),
                           chat_template_builtin("llama2"), chat_template_builtin("mistral"),
                           CASES[13].tmpl, CASES[18].tmpl, CASES[24].tmpl, CASES[26].tmpl};
    const char *vars = "{\"messages\": [{\"role\": \"system\", \"content\": \"s\"}, {\"role\": \"user\", \"content\": \"u\"},"
                       " {\"role\": \"assistant\", \"content\": \"a\"}], \"bos_token\": \"<s>\", \"eos_token\": \"</s>\","
                       " \"add_generation_prompt\": true, \"x\": [1, 2]}";
    cJSON *v = cJSON_Parse(vars);
    jinja_limits lim = jinja_default_limits();
    lim.max_steps = 100000;
    lim.max_string = 1 << 20;
    int parsed = 0, rendered = 0;
    for (int iter = 0; iter < 3000; iter++) {
        const char *seed = seeds[iter % (sizeof seeds / sizeof seeds[0])];
        size_t n = strlen(seed);
        char buf[4096];
        if (n >= sizeof buf - 64) n = sizeof buf - 64;
        memcpy(buf, seed, n);
        int edits = 1 + (int)(next_rand() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = n ? next_rand() % n : 0;
            switch (next_rand() % 3) {
            case 0: /* delete a span */ {
                size_t k = 1 + next_rand() % 8;
                if (at + k > n) k = n - at;
                memmove(buf + at, buf + at + k, n - at - k);
                n -= k;
                break;
            }
            case 1: /* insert a piece */ {
                const char *p = pieces[next_rand() % (sizeof pieces / sizeof pieces[0])];
                size_t k = strlen(p);
                if (n + k >= sizeof buf) break;
                memmove(buf + at + k, buf + at, n - at);
                memcpy(buf + at, p, k);
                n += k;
                break;
            }
            default: /* flip a byte */
                if (n) buf[at] = (char)next_rand();
            }
        }
        wick_error err;
        jinja_template *t = jinja_parse(buf, n, &err);
        if (!t) {
            CHECK(strncmp(err.msg, "line ", 5) == 0);
            continue;
        }
        parsed++;
        char *out = jinja_render(t, v, &lim, NULL, &err);
        if (out) rendered++;
        else CHECK_MSG(strncmp(err.msg, "line ", 5) == 0, "%s", err.msg);
        free(out);
        jinja_free(t);
    }
    cJSON_Delete(v);
    CHECK(parsed > 100);
    CHECK(rendered > 50);
}

/* ------------------------------------------------------- chat templates */

static const char CONV[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Hi\"},"
    " {\"role\": \"assistant\", \"content\": \" Hello \"}, {\"role\": \"user\", \"content\": \"Bye\"}]}";

static char *apply(const char *name, const char *conv, chat_template_opts o, wick_error *err) {
    cJSON *ctx = chat_template_context(conv, &o, err);
    if (!ctx) return NULL;
    char *out = chat_template_render_cjson(chat_template_builtin(name), ctx, NULL, err);
    cJSON_Delete(ctx);
    return out;
}

static void test_builtin_templates(void) {
    wick_error err;
    chat_template_opts o = {.add_generation_prompt = -1, .enable_thinking = -1, .bos_token = "<s>", .eos_token = "</s>"};
    char *out = apply("chatml", CONV, o, &err);
    CHECK_STR(out, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
                   " Hello <|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
    free(out);
    o.add_generation_prompt = 0;
    out = apply("chatml", CONV, o, &err);
    const char *tail = "user\nBye<|im_end|>\n"; /* no generation prompt after the last turn */
    CHECK(out && strlen(out) > strlen(tail) && strcmp(out + strlen(out) - strlen(tail), tail) == 0);
    free(out);
    o.bos_token = "<|begin_of_text|>";
    o.add_generation_prompt = 1;
    out = apply("llama3", CONV, o, &err);
    CHECK_STR(out, "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                   "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                   "<|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|>"
                   "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
                   "<|start_header_id|>assistant<|end_header_id|>\n\n");
    free(out);
    o.bos_token = "<s>";
    out = apply("llama2", CONV, o, &err);
    CHECK_STR(out, "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello </s><s>[INST] Bye [/INST]");
    free(out);
    out = apply("mistral", CONV, o, &err);
    CHECK_STR(out, "<s>[INST] Be brief.\n\nHi [/INST] Hello </s>[INST] Bye [/INST]");
    free(out);
    out = apply("mistral", "[{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"user\", \"content\": \"b\"}]", o, &err);
    CHECK(out == NULL);
    CHECK_STR(err.msg, "chat template: line 11, column 13: Conversation roles must alternate user/assistant/user/assistant/...");
    free(out);
    CHECK(chat_template_builtin("nope") == NULL);
    CHECK(chat_template_builtin(NULL) == NULL);
}

/* llama.cpp's named formats: its test conversation (tests/test-chat-template.cpp)
 * rendered by each name, as llama.cpp's built-in formatter writes it */
static const char LLAMACPP_CONV[] =
    "[{\"role\": \"system\", \"content\": \"You are a helpful assistant\"}, {\"role\": \"user\", \"content\": \"Hello\"},"
    " {\"role\": \"assistant\", \"content\": \"Hi there\"}, {\"role\": \"user\", \"content\": \"Who are you\"},"
    " {\"role\": \"assistant\", \"content\": \"   I am an assistant   \"}, {\"role\": \"user\", \"content\": \"Another question\"}]";

static const struct {
    const char *name, *want;
} LLAMACPP_NAMED[] = {
    {"chatml",
     "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n"},
    {"llama3",
     "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"chatglm3",
     "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question<|assistant|>"},
    {"chatglm4",
     "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
    {"command-r",
     "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
    {"deepseek",
     "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\nAnother question\n### Response:\n"},
    {"deepseek2",
     "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there<\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c"">User: Who are you\n\nAssistant:    I am an assistant   <\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c"">User: Another question\n\nAssistant:"},
    {"deepseek3",
     "You are a helpful assistant\n\n<\xef""\xbd""\x9c""User\xef""\xbd""\x9c"">Hello<\xef""\xbd""\x9c""Assistant\xef""\xbd""\x9c"">Hi there<\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c""><\xef""\xbd""\x9c""User\xef""\xbd""\x9c"">Who are you<\xef""\xbd""\x9c""Assistant\xef""\xbd""\x9c"">   I am an assistant   <\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c""><\xef""\xbd""\x9c""User\xef""\xbd""\x9c"">Another question<\xef""\xbd""\x9c""Assistant\xef""\xbd""\x9c"">"},
    {"exaone3",
     "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
    {"falcon3",
     "<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\nHi there\n<|user|>\nWho are you\n<|assistant|>\n   I am an assistant   \n<|user|>\nAnother question\n<|assistant|>\n"},
    {"gemma",
     "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n"},
    {"gigachat",
     "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi there<|message_sep|>user<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>   I am an assistant   <|message_sep|>user<|role_sep|>Another question<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>"},
    {"glmedge",
     "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
    {"granite",
     "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>Hi there<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>   I am an assistant   <|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>\n"},
    {"llama2-sys",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
    {"llama2-sys-bos",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]"},
    {"llama2-sys-strip",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>[INST] Another question [/INST]"},
    {"megrez",
     "<|role_start|>system<|role_end|>You are a helpful assistant<|turn_end|><|role_start|>user<|role_end|>Hello<|turn_end|><|role_start|>assistant<|role_end|>Hi there<|turn_end|><|role_start|>user<|role_end|>Who are you<|turn_end|><|role_start|>assistant<|role_end|>   I am an assistant   <|turn_end|><|role_start|>user<|role_end|>Another question<|turn_end|><|role_start|>assistant<|role_end|>"},
    {"minicpm",
     "You are a helpful assistant<\xe7""\x94""\xa8""\xe6""\x88""\xb7"">Hello<AI>Hi there<\xe7""\x94""\xa8""\xe6""\x88""\xb7"">Who are you<AI>I am an assistant<\xe7""\x94""\xa8""\xe6""\x88""\xb7"">Another question<AI>"},
    {"mistral-v1",
     " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]"},
    {"mistral-v3",
     "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an assistant</s>[INST] Another question[/INST]"},
    {"mistral-v3-tekken",
     "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]"},
    {"mistral-v7",
     "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]"},
    {"monarch",
     "system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n<s>assistant\n"},
    {"openchat",
     "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   <|end_of_turn|>GPT4 Correct User: Another question<|end_of_turn|>GPT4 Correct Assistant:"},
    {"orion",
     "Human: You are a helpful assistant\n\nHello\n\nAssistant: </s>Hi there</s>Human: Who are you\n\nAssistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: </s>"},
    {"phi3",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
    {"phi4",
     "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   <|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant<|im_sep|>"},
    {"rwkv-world",
     "You are a helpful assistant\n\nUser: Hello\n\nAssistant:Hi there\n\nUser: Who are you\n\nAssistant:   I am an assistant   \n\nUser: Another question\n\nAssistant:"},
    {"vicuna",
     "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"vicuna-orca",
     "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"zephyr",
     "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n   I am an assistant   <|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n<|assistant|>\n"},
};

static void test_llamacpp_named_templates(void) {
    wick_error err;
    /* no BOS text: llama.cpp's formats leave BOS to tokenization */
    chat_template_opts o = {.add_generation_prompt = 1, .enable_thinking = -1, .bos_token = "", .eos_token = "</s>"};
    for (size_t i = 0; i < sizeof LLAMACPP_NAMED / sizeof LLAMACPP_NAMED[0]; i++) {
        CHECK(chat_template_builtin(LLAMACPP_NAMED[i].name) != NULL);
        char *out = apply(LLAMACPP_NAMED[i].name, LLAMACPP_CONV, o, &err);
        if (!out || strcmp(out, LLAMACPP_NAMED[i].want)) printf("  %s: %s\n", LLAMACPP_NAMED[i].name, out ? out : err.msg);
        CHECK_STR(out, LLAMACPP_NAMED[i].want);
        free(out);
    }
    /* the server suite's exact /apply-template answer */
    char *out = apply("command-r",
                      "[{\"role\": \"system\", \"content\": \"You are a test.\"}, {\"role\": \"user\", \"content\": \"Hi there\"}]",
                      o, &err);
    CHECK_STR(out, "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a test.<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|>"
                   "<|USER_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>");
    free(out);
    /* every listed name is a built-in */
    char names[2048];
    snprintf(names, sizeof names, "%s", chat_template_builtin_names());
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(names, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save), n++)
        CHECK(chat_template_builtin(tok) != NULL);
    CHECK(n == 34);
}

/* --no-jinja: a model's template read as the built-in format it writes,
 * from the markers of the families' own templates */
static void test_detect(void) {
    static const struct {
        const char *tmpl, *want;
    } cases[] = {
        {"{{'<|im_start|>' + message['role'] + '\\n'}}", "chatml"},
        {"{{'<|im_start|>' + message['role'] + '<|im_sep|>'}}", "phi4"},
        {"{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}", "llama3"},
        {"{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{{ '<<SYS>>\\n' }}", "llama2-sys-strip"},
        {"{{ bos_token + '[INST] ' + content + ' [/INST]' }}{{ '<<SYS>>\\n' }}", "llama2-sys-bos"},
        {"{{ '[INST] ' + content + ' [/INST]' }}{{ '<<SYS>>\\n' }}", "llama2-sys"},
        {"{{ '[INST] ' + message['content'] + ' [/INST]' }}", "mistral"},
        {"{{ ' [INST] ' + system_message + '\\n\\n' }}", "mistral-v1"},
        {"{{ '[AVAILABLE_TOOLS] ' }}{{ '[INST] ' + message['content'] }}", "mistral-v3"},
        {"{{ '[AVAILABLE_TOOLS]' }}{{ '[INST]' + message['content'] }}", "mistral-v3-tekken"},
        {"{{ '[SYSTEM_PROMPT]' + system + '[/SYSTEM_PROMPT]' }}{{ '[INST]' }}", "mistral-v7"},
        {"{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' }}", "command-r"},
        {"{{ '<start_of_turn>' + role + '\\n' }}", "gemma"},
        {"{{ '[gMASK]sop' }}", "chatglm3"},
        {"[gMASK]<sop>{{ '<|user|>' }}", "chatglm4"},
        {"{{ '<|start_of_role|>' + message['role'] + '<|end_of_role|>' }}", "granite"},
        {"{{ '<|role_start|>' + message['role'] + '<|role_end|>' }}", "megrez"},
        {"{{ '[|system|]' }}{{ '[|assistant|]' }}{{ '[|endofturn|]' }}", "exaone3"},
        {"{{ '<\xef\xbd\x9cUser\xef\xbd\x9c>' + c + '<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>' }}", "deepseek3"},
        {"{{ '### Instruction:\\n' + c }}{{ '<|EOT|>' }}", "deepseek"},
        {"{{ 'Assistant: ' + message['content'] + eos_token }}", "deepseek2"},
        {"{{ '<\xe7\x94\xa8\xe6\x88\xb7>' + c + '<AI>' }}", "minicpm"},
        {"{{ message['content'] + '<|message_sep|>' }}", "gigachat"},
        {"{{ 'GPT4 Correct ' + role }}", "openchat"},
        {"{{ 'Human: ' + c + '\\n\\nAssistant: ' + eos_token }}", "orion"},
        {"{{ '<|user|>\\n' + c + '<|end|>\\n<|assistant|>\\n' }}", "phi3"},
        {"{{ '<|user|>\\n' + c + '<|endoftext|>\\n<|assistant|>' }}", "zephyr"},
        {"{{ '<|system|>\\n' }}{{ '<|user|>\\n' + c + '\\n<|assistant|>\\n' }}", "falcon3"},
        {"{{ 'USER: ' + c + ' ASSISTANT: ' }}", "vicuna"},
        {"{{ 'SYSTEM: ' + s + 'USER: ' + c + ' ASSISTANT: ' }}", "vicuna-orca"},
        {"{{ bos_token + message['role'] + '\\n' + message['content'] }}", "monarch"},
        {"{{ 'User: ' + c + '\\n\\n' }}{{ 'Assistant:' }}", "rwkv-world"},
        {"{{ messages[0]['content'] }}", NULL},
        {"", NULL},
        {NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = chat_template_detect(cases[i].tmpl);
        if (cases[i].want) CHECK_STR(got, cases[i].want);
        else CHECK(got == NULL);
    }
    /* built-ins written with the markers of their families' templates are
     * recognised as themselves */
    static const char *const self[] = {"chatml", "llama3", "chatglm3", "chatglm4", "command-r", "deepseek",
                                       "deepseek3", "exaone3", "gemma", "gigachat", "glmedge", "granite",
                                       "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "megrez", "minicpm",
                                       "mistral-v7", "openchat", "orion", "phi3", "phi4", "rwkv-world", "vicuna",
                                       "vicuna-orca", "zephyr"};
    for (size_t i = 0; i < sizeof self / sizeof self[0]; i++)
        CHECK_STR(chat_template_detect(chat_template_builtin(self[i])), self[i]);
}

static void test_context(void) {
    wick_error err;
    chat_template_opts o = {.add_generation_prompt = -1, .enable_thinking = -1};
    const char *t = "{{ add_generation_prompt }}|{{ enable_thinking }}|{{ enable_thinking is defined }}|{{ bos_token }}|{{ tools|length }}|{{ extra }}|{{ messages[0].tool_calls[0].function.name }}";
    const char *conv = "{\"messages\": [{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": {}}}]}],"
                       " \"tools\": [{\"type\": \"function\"}], \"extra\": \"kept\"}";
    cJSON *ctx = chat_template_context(conv, &o, &err);
    char *out = chat_template_render_cjson(t, ctx, NULL, &err);
    CHECK_STR(out, "True||False||1|kept|f");
    free(out);
    cJSON_Delete(ctx);
    o = (chat_template_opts){.add_generation_prompt = 0, .enable_thinking = 0, .bos_token = "<s>"};
    ctx = chat_template_context(conv, &o, &err);
    out = chat_template_render_cjson(t, ctx, NULL, &err);
    CHECK_STR(out, "False|False|True|<s>|1|kept|f");
    free(out);
    cJSON_Delete(ctx);
    /* the conversation's own values stand unless an option overrides them */
    o = (chat_template_opts){.add_generation_prompt = -1, .enable_thinking = -1};
    ctx = chat_template_context("{\"messages\": [], \"add_generation_prompt\": false, \"enable_thinking\": true}", &o, &err);
    out = chat_template_render_cjson("{{ add_generation_prompt }} {{ enable_thinking }}", ctx, NULL, &err);
    CHECK_STR(out, "False True");
    free(out);
    cJSON_Delete(ctx);
    /* a bare array is the messages */
    ctx = chat_template_context("[{\"role\": \"user\", \"content\": \"x\"}]", NULL, &err);
    out = chat_template_render_cjson("{{ messages[0].content }}", ctx, NULL, &err);
    CHECK_STR(out, "x");
    free(out);
    cJSON_Delete(ctx);
    /* bad conversations */
    CHECK(chat_template_context("{\"messages\": [", NULL, &err) == NULL);
    CHECK(strncmp(err.msg, "conversation is not valid JSON", 30) == 0);
    CHECK(chat_template_context("{\"msgs\": []}", NULL, &err) == NULL);
    CHECK_STR(err.msg, "conversation has no \"messages\" array");
    CHECK(chat_template_context("{\"messages\": [1]}", NULL, &err) == NULL);
    CHECK_STR(err.msg, "message 0 is not a JSON object");
    CHECK(chat_template_context("42", NULL, &err) == NULL);
    /* chat_template_render with a JSON string */
    out = chat_template_render("{% for m in messages %}{{ m.role }}{% endfor %}", "{\"messages\": [{\"role\": \"u\"}]}", &err);
    CHECK_STR(out, "u");
    free(out);
    CHECK(chat_template_render("{{ x", "{}", &err) == NULL);
    CHECK_STR(err.msg, "chat template: line 1, column 1: unexpected end of template: the tag opened here is not closed (expected '}}')");
    CHECK(chat_template_render("x", "[", &err) == NULL);
}

/* The real Qwen3 template (when ../shared is there): thinking history is
 * dropped before the last user turn, kept after it; enable_thinking=false adds
 * the empty think block. */
static void test_qwen3(void) {
    const char *dir = shared_path("tokenizers/qwen3/tokenizer_config.json");
    if (!dir) SKIP("../shared/tokenizers/qwen3 not found");
    wick_error err;
    char *text = file_read_all(dir, NULL, &err);
    cJSON *cfg = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(cfg, "chat_template");
    CHECK(cJSON_IsString(tmpl));
    if (!cJSON_IsString(tmpl)) {
        cJSON_Delete(cfg);
        return;
    }
    chat_template_opts o = {.add_generation_prompt = 1, .enable_thinking = 0, .eos_token = "<|im_end|>"};
    cJSON *ctx = chat_template_context(
        "{\"messages\": [{\"role\": \"user\", \"content\": \"2+2?\"},"
        " {\"role\": \"assistant\", \"content\": \"<think>\\nadd\\n</think>\\n\\n4\"},"
        " {\"role\": \"user\", \"content\": \"3+3?\"}]}", &o, &err);
    char *out = chat_template_render_cjson(tmpl->valuestring, ctx, NULL, &err);
    CHECK_STR(out, "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n"
                   "<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    free(out);
    cJSON_Delete(ctx);
    cJSON_Delete(cfg);
}

int main(void) {
    RUN(test_features);
    RUN(test_context_variables);
    RUN(test_syntax_errors);
    RUN(test_runtime_errors);
    RUN(test_hostile);
    RUN(test_mutations);
    RUN(test_builtin_templates);
    RUN(test_llamacpp_named_templates);
    RUN(test_detect);
    RUN(test_context);
    RUN(test_qwen3);
    return check_summary("test_jinja");
}
