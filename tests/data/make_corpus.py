#!/usr/bin/python3
"""make_corpus.py — writes tests/data/tokenizer_corpus.jsonl, the tokenizer
conformance corpus: one JSON string per line, deterministic (fixed seed, only
the Python standard library). Run once; the output is committed.

    /usr/bin/python3 tests/data/make_corpus.py > tests/data/tokenizer_corpus.jsonl

Content: English prose, code (C, Python, JS, Rust, SQL, JSON, shell, HTML),
text in many scripts (CJK, Arabic, Hebrew, Hindi, Thai, Cyrillic, Greek,
Vietnamese in NFC and NFD, ...), emoji (ZWJ sequences, flags, skin tones,
keycaps), whitespace runs, digit runs of every length, punctuation runs,
contractions in every case, special-token text (whole, partial, malformed),
odd characters (controls, combining marks, unusual spaces) and random
mixtures of all of these. No NUL characters and no lone surrogates (every
string is valid UTF-8).
"""
import json
import random
import sys
import unicodedata

R = random.Random(20260122)
out = []


def add(s):
    out.append(s)


# ---------------------------------------------------------------- English
ENGLISH = [
    "The quick brown fox jumps over the lazy dog.",
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park.",
    "It was the best of times, it was the worst of times, it was the age of wisdom.",
    "Call me Ishmael. Some years ago—never mind how long precisely—I thought I would sail about a little.",
    "In the beginning the Universe was created. This has made a lot of people very angry.",
    "All happy families are alike; each unhappy family is unhappy in its own way.",
    "The committee will meet on Tuesday at 3:30 p.m. to review the Q3 budget (see attachment).",
    "Please don't hesitate to contact us at support@example.com or call +1 (555) 123-4567.",
    "According to the report, revenue grew 12.5% year-over-year, reaching $4.2 billion.",
    "Dr. Smith, Ph.D., arrived at 9 a.m.; Mrs. O'Brien wasn't there yet.",
    "\"Where are you going?\" she asked. \"Nowhere,\" he replied, 'just out.'",
    "The U.S.A. and the U.K. signed the treaty in Washington, D.C., on 4 July 1776... or did they?",
    "Visit https://www.example.org/path/to/page?query=tokenizer&lang=en#section-2 for details.",
    "Machine learning models learn patterns from data; tokenizers split text into sub-word units.",
    "She sells sea-shells by the sea-shore; the shells she sells are sea-shells, I'm sure.",
    "To be, or not to be, that is the question: Whether 'tis nobler in the mind to suffer.",
    "WARNING: DO NOT OPERATE HEAVY MACHINERY WHILE USING THIS PRODUCT!!!",
    "lowercase text without any punctuation at all just words flowing on and on",
    "Mixed CASE words like iPhone, eBay, McDonald's, LaTeX and JavaScript appear often.",
    "The temperature dropped to -40°F (which is also -40°C) overnight.",
    "Footnotes¹ and superscripts² can be tricky; so can fractions like ½ and ¾.",
    "Café, naïve, résumé, coöperate, façade — loanwords keep their accents.",
    "He said: “Smart quotes” and ‘single ones’ aren't the same as \"straight\" ones.",
    "Item 1; item 2; item 3 — and so on, ad infinitum.",
    "Hello world",
    "Hello, World!",
    "hello",
    " hello",
    "HELLO",
    "A",
    "a b c d e f g",
    "The end.",
]
SUBJECTS = ["The cat", "A young engineer", "My neighbour", "The old library", "Our team", "The river",
            "A small robot", "The government", "Every student", "The weather", "This function",
            "The tokenizer", "Grandma", "The spaceship", "Nobody"]
VERBS = ["quickly discovered", "never understood", "carefully examined", "happily accepted",
         "reluctantly signed", "loudly announced", "silently watched", "finally finished",
         "accidentally deleted", "proudly presented", "barely survived", "often ignored"]
OBJECTS = ["the hidden treasure", "a strange message", "the annual report", "three red apples",
           "the broken window", "an unexpected gift", "the final exam", "the source code",
           "forty-two bananas", "the northern lights", "a very long sentence", "the new regulations"]
TAILS = [".", "!", "?", " yesterday.", " last week.", " in 1999.", " at 10:45 p.m.", ", but why?",
         "; nobody knows how.", " — again.", "...", " (allegedly).", ", didn't they?"]
for s in ENGLISH:
    add(s)
for _ in range(220):
    n = R.randint(1, 4)
    parts = []
    for _ in range(n):
        parts.append(f"{R.choice(SUBJECTS)} {R.choice(VERBS)} {R.choice(OBJECTS)}{R.choice(TAILS)}")
    add(" ".join(parts))

# ---------------------------------------------------------------- code
CODE = [
    '#include <stdio.h>\n\nint main(void) {\n    printf("Hello, world!\\n");\n    return 0;\n}\n',
    "static inline uint32_t rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }",
    "for (size_t i = 0; i < n; i++) {\n\tif (a[i] != b[i]) return -1;\n}",
    "typedef struct node {\n    struct node *next;\n    int value;\n} node;\n",
    "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#define MIN(a, b) ((a) < (b) ? (a) : (b))",
    "int *p = malloc(sizeof *p * 1024);\nif (!p) { perror(\"malloc\"); exit(1); }",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "import numpy as np\nx = np.arange(10, dtype=np.float32).reshape(2, 5)\nprint(x.T @ x)",
    "class Point:\n    def __init__(self, x: float, y: float) -> None:\n        self.x, self.y = x, y\n\n    def __repr__(self):\n        return f\"Point({self.x!r}, {self.y!r})\"\n",
    "with open('data.txt', encoding='utf-8') as f:\n    lines = [l.rstrip('\\n') for l in f if l.strip()]",
    "    # indented comment\n        deeper = {'a': 1, 'b': [1, 2, 3]}\n",
    "lambda x: x**2 if x >= 0 else -x  # noqa: E731",
    "const add = (a, b) => a + b;\nconsole.log(`sum: ${add(2, 3)}`);",
    "async function fetchJson(url) {\n  const res = await fetch(url);\n  if (!res.ok) throw new Error(res.statusText);\n  return res.json();\n}",
    "document.querySelectorAll('.item').forEach(el => el.classList.toggle('active'));",
    "let obj = { key: 'value', 'quoted-key': 42, nested: { arr: [1, 2, 3] } };",
    "x === y && y !== z || !w ?? defaultValue",
    "fn main() {\n    let v: Vec<u32> = (1..=10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}",
    "impl<T: Clone + Send> Iterator for Wrapper<T> {\n    type Item = T;\n    fn next(&mut self) -> Option<Self::Item> { self.inner.pop() }\n}",
    "match value {\n    Some(ref x) if *x > 0 => x.to_string(),\n    _ => String::new(),\n}",
    "#[derive(Debug, Clone, PartialEq)]\npub struct Config<'a> { name: &'a str, retries: usize }",
    "SELECT u.id, u.name, COUNT(o.id) AS orders\nFROM users u\nLEFT JOIN orders o ON o.user_id = u.id\nWHERE u.created_at >= '2024-01-01'\nGROUP BY u.id, u.name\nORDER BY orders DESC\nLIMIT 10;",
    "INSERT INTO products (name, price) VALUES ('Widget', 9.99), ('Gadget', 19.95);",
    "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL DEFAULT '');",
    "UPDATE accounts SET balance = balance - 100 WHERE id = 7; -- transfer",
    '{"name": "wick", "version": "0.1.0", "tags": ["llm", "inference"], "nested": {"a": null, "b": true, "c": 3.14}}',
    '{\n  "model": "qwen3",\n  "messages": [\n    {"role": "user", "content": "Hi!"}\n  ],\n  "temperature": 0.7\n}',
    '[{"id":1,"ok":false},{"id":2,"ok":true}]',
    '{"escaped": "line1\\nline2\\ttab \\"quote\\" \\\\ backslash \\u00e9"}',
    "#!/bin/sh\nset -eu\nfor f in *.txt; do\n  wc -l \"$f\"\ndone | sort -n | tail -3",
    "grep -rn 'TODO' src/ | awk -F: '{print $1}' | uniq -c",
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Test</title></head>\n<body><p class=\"x\">Hello &amp; welcome!</p></body>\n</html>",
    "<div id='main' style=\"color: red;\">&lt;tag&gt; &nbsp; &#169;</div>",
    "body { margin: 0; padding: 0 1em; font-family: -apple-system, 'Segoe UI', sans-serif; }",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}",
    "public static void main(String[] args) { System.out.println(args.length); }",
    "template <typename T>\nstd::vector<T> twice(const std::vector<T>& v) { auto r = v; r.insert(r.end(), v.begin(), v.end()); return r; }",
    "x = [i for i in range(100) if i % 3 == 0 and i % 5 != 0]",
    "if err != nil {\n\t\treturn nil, fmt.Errorf(\"open %s: %w\", path, err)\n\t}",
    "    \n    \n\treturn;\n}\n\n\n",
    "a+=1;b-=2;c*=3;d/=4;e%=5;f<<=1;g>>=2;h&=3;i|=4;j^=5;",
    "0x7FFFFFFF 0b1010_1010 0o755 1e-9 3.14159f 42ULL .5 1_000_000",
    "// comment\n/* block\n   comment */\n/// doc comment\n#pragma once",
    "regex = r'^(?P<user>[\\w.+-]+)@(?P<host>[\\w-]+\\.[\\w.]+)$'",
]
IDENTS = ["count", "total_sum", "maxValue", "HTTPServer", "parse_json", "i", "j2", "__init__", "_tmp", "userID",
          "kMaxSize", "camelCaseName", "snake_case_name", "SCREAMING_CASE", "x1y2z3"]
for s in CODE:
    add(s)
for _ in range(160):
    kind = R.randrange(6)
    a, b, c = R.sample(IDENTS, 3)
    ind = R.choice(["", "    ", "        ", "\t", "\t\t", "  "])
    if kind == 0:
        add(f"{ind}int {a} = {b} + {R.randint(0, 99999)};\n{ind}if ({a} > {c}) {{ {c} = {a}; }}")
    elif kind == 1:
        add(f"{ind}def {a}({b}, {c}=None):\n{ind}    return {b} * {R.randint(1, 999)} if {c} else []\n")
    elif kind == 2:
        add(f"{ind}const {a} = {b}.map(({c}) => {c} * {R.random():.4f});")
    elif kind == 3:
        add(f"{ind}let mut {a}: Vec<{R.choice(['u8', 'i64', 'String', 'f32'])}> = Vec::with_capacity({R.randint(1, 4096)});")
    elif kind == 4:
        add(f"SELECT {a}, {b} FROM {c} WHERE {a} {R.choice(['=', '<>', '>=', 'LIKE'])} {R.choice(['42', chr(39) + 'abc%' + chr(39), 'NULL'])};")
    else:
        add(json.dumps({a: R.randint(-1000, 1000), b: [R.random() for _ in range(R.randint(0, 3))], c: R.choice([None, True, "s"])}))

# ---------------------------------------------------------------- scripts
SCRIPTS = {
    "zh": ["今天天气很好，我们去公园散步吧。", "机器学习是人工智能的一个分支。", "我爱北京天安门，天安门上太阳升。",
           "这是一个测试句子，包含标点符号：逗号、句号。", "《红楼梦》是中国古典四大名著之一。", "请问洗手间在哪里？",
           "中华人民共和国成立于1949年10月1日。", "繁體中文與簡體中文不同。", "你好世界", "她说：“明天见！”"],
    "ja": ["こんにちは、世界！", "東京は日本の首都です。", "吾輩は猫である。名前はまだ無い。", "カタカナとひらがなと漢字を混ぜて書きます。",
           "ラーメンを食べに行きましょうか？", "今日は２０２４年１月２２日です。", "ｱｲｳｴｵ（半角カナ）", "「ありがとう」と彼は言った。"],
    "ko": ["안녕하세요, 세계!", "한국어는 한글로 씁니다.", "저는 학생입니다. 당신은요?", "서울특별시 종로구 세종대로 175",
           "오늘 날씨가 정말 좋네요 ㅎㅎ", "ᄒᆞᆫ글 옛 글자"],
    "ar": ["مرحبا بالعالم", "اللغة العربية جميلة جداً.", "السلام عليكم ورحمة الله وبركاته", "كتبتُ ٣ رسائل في عام ٢٠٢٤.",
           "هذا نصٌّ مُشَكَّلٌ بالحركات."],
    "he": ["שלום עולם", "עברית נכתבת מימין לשמאל.", "בְּרֵאשִׁית בָּרָא אֱלֹהִים", "המחיר הוא 50 ₪ בלבד."],
    "hi": ["नमस्ते दुनिया", "हिन्दी भारत की राजभाषा है।", "मैं कल दिल्ली जाऊँगा।", "संख्याएँ: १२३४५६७८९०", "क्षत्रिय ज्ञान श्री"],
    "th": ["สวัสดีครับ", "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ", "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย", "๑๒๓ บาท"],
    "ru": ["Привет, мир!", "Съешь же ещё этих мягких французских булок, да выпей чаю.", "Москва — столица России.",
           "ЁЛКА и ёлка", "Я не знаю, что сказать... Может, завтра?"],
    "el": ["Γειά σου Κόσμε!", "Η γλώσσα είναι ελληνική.", "ΑΒΓΔΕΖΗΘ αβγδεζηθ ς", "Ἐν ἀρχῇ ἦν ὁ λόγος"],
    "vi": ["Xin chào thế giới!", "Tiếng Việt có nhiều dấu thanh.", "Hà Nội là thủ đô của Việt Nam.",
           "Người ta nói rằng ở đâu có ý chí, ở đó có con đường.", "Phở bò tái chín rất ngon."],
    "other": ["Γεια", "ქართული ენა", "Հայերեն լեզու", "தமிழ் மொழி", "বাংলা ভাষা", "ગુજરાતી", "ಕನ್ನಡ", "മലയാളം",
              "తెలుగు", "ਪੰਜਾਬੀ", "සිංහල", "ພາສາລາວ", "ភាសាខ្មែរ", "မြန်မာဘာသာ", "አማርኛ", "ᏣᎳᎩ", "ᐃᓄᒃᑎᑐᑦ",
              "Türkçe ığüşöç İI", "Straße Größe ÄÖÜ äöü ß ẞ", "Zażółć gęślą jaźń", "Příliš žluťoučký kůň",
              "Ærøskøbing Ångström", "Þetta er íslenska", "Lëtzebuergesch", "ĀāĒēĪīŌōŪū", "ǅǆǈǉ ﬁ ﬂ ﬀ",
              "Ｆｕｌｌｗｉｄｔｈ　ＡＢＣ　１２３", "ℌ𝔢𝔩𝔩𝔬 𝕎𝕠𝕣𝕝𝕕 𝒜𝒷𝒸", "㍻ ㎏ ㋿ ①②③ Ⅻ ⅷ", "𠀀𠀁𪚥 𝄞 𓀀"],
}
for lang, sents in SCRIPTS.items():
    for s in sents:
        add(s)
        if lang == "vi" or R.random() < 0.3:
            add(unicodedata.normalize("NFD", s))
        if R.random() < 0.4:
            add(" " + s + " ")
# Vietnamese and others in both forms, explicitly
for s in ["Tiếng Việt", "Việt Nam", "ở đâu", "người", "Ầ ầ Ẩ ẩ Ẫ ẫ Ậ ậ", "é è ê ë", "ñ Ñ ç Ç", "Å ō ǖ"]:
    add(unicodedata.normalize("NFC", s))
    add(unicodedata.normalize("NFD", s))
    add(unicodedata.normalize("NFD", s).upper())
# combining marks in odd places
for s in ["e\u0301", "a\u0300\u0301\u0302", "\u0301start", "x\u0335\u0336y", "Z\u0351\u0352\u0353\u0354\u0355",
          "q\u0307\u0323", "\u1100\u1161\u11a8", "\u0915\u094d\u0937", "\u0e01\u0e34\u0e4a"]:
    add(s)
    add("word " + s + " word")
all_sents = [s for v in SCRIPTS.values() for s in v]
for _ in range(200):
    k = R.randint(2, 5)
    seps = [" ", "", "\n", ", ", " — ", "\t"]
    add(R.choice(seps).join(R.choice(all_sents) for _ in range(k)))

# ---------------------------------------------------------------- emoji
EMOJI = ["😀", "😂", "🥲", "❤️", "❤", "👍", "👍🏻", "👍🏽", "👍🏿", "🙏🏾", "👋🏼", "🧑‍💻", "👨‍👩‍👧‍👦", "👩‍❤️‍💋‍👨",
         "🏳️‍🌈", "🏴‍☠️", "🇺🇸", "🇯🇵", "🇩🇪", "🇧🇷", "🇺🇦", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "1️⃣", "#️⃣", "*️⃣", "©️", "™️",
         "☺️", "☺", "✔️", "⚠️", "🔥", "🚀", "🎉", "🤖", "🦀", "🐍", "🍕", "🌍", "🌈", "💯", "🫠", "🫶🏽", "🧔‍♀️",
         "👩🏽‍🚀", "🤷‍♂️", "🤦🏼‍♀️", "👁️‍🗨️", "🐻‍❄️", "😶‍🌫️", "❤️‍🔥", "🇦", "🇦🇦🇦", "\u200d", "\ufe0f"]
for e in EMOJI:
    add(e)
for _ in range(200):
    k = R.randint(1, 6)
    base = R.choice(ENGLISH + all_sents)
    words = base.split(" ")
    for _ in range(k):
        pos = R.randint(0, len(words))
        words.insert(pos, "".join(R.choice(EMOJI) for _ in range(R.randint(1, 3))))
    add(R.choice([" ", ""]).join(words))
for _ in range(20):
    add("".join(R.choice(EMOJI) for _ in range(R.randint(5, 30))))

# ---------------------------------------------------------------- whitespace
WS = [" ", "  ", "\t", "\n", "\r\n", "\r", "\n\n", " \n", "\t\t", "\u00a0", "\u3000", "\u2003", "\u2009",
      "\u202f", "\u2028", "\u2029", "\u0085", "\u000b", "\u000c", "\ufeff", "\u200b", "\u180e", "\u1680"]
for n in range(1, 33):
    add(" " * n)
    add("a" + " " * n + "b")
    add(" " * n + "word")
    add("word" + " " * n)
for n in range(1, 13):
    add("\t" * n)
    add("x" + "\t" * n + "y")
    add("\n" * n)
    add("line" + "\n" * n + "line")
    add("\r\n" * n)
    add("p" + "\r\n" * n + "q")
for w in WS:
    add(w)
    add("a" + w + "b")
    add("Hello" + w + "world" + w)
    add(w * 3 + "x" + w * 2)
for _ in range(120):
    parts = []
    for _ in range(R.randint(1, 8)):
        parts.append("".join(R.choice(WS[:10]) for _ in range(R.randint(1, 6))))
        parts.append(R.choice(["foo", "Bar", "123", "!", "über", "中文", "🙂", "x", "it's", ""]))
    add("".join(parts))

# ---------------------------------------------------------------- digits
for n in range(1, 41):
    d = "".join(R.choice("0123456789") for _ in range(n))
    add(d)
    add(" " + d)
    add("x" + d + "y")
    add("v" + d + "." + d[::-1])
for s in ["3.14159", "-42", "+7", "1,000,000", "1.000.000,50", "2024-01-22", "12:34:56.789", "0.0001", "1e10",
          "6.022e23", "0xDEADBEEF", "192.168.0.1", "+44 20 7946 0958", "(555) 555-5555", "$1,234.56", "€99,99",
          "50%", "3/4", "1st 2nd 3rd 4th 21st 102nd", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "０１２３４５６７８９", "०१२३४५६७८९",
          "১২৩", "๑๒๓", "²³¹", "½¼¾", "Ⅰ Ⅱ Ⅲ Ⅳ", "①②③", "𝟎𝟏𝟐", "123abc456def789", "a1b2c3d4e5", "007", "000000"]:
    add(s)
    add("Number: " + s + ".")
for _ in range(40):
    add(" ".join(str(R.randint(0, 10 ** R.randint(1, 15))) for _ in range(R.randint(2, 8))))

# ---------------------------------------------------------------- punctuation
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["…", "—", "–", "“", "”", "‘", "’", "«", "»", "¿", "¡", "·",
                                                        "•", "§", "¶", "†", "‡", "‰", "′", "″", "‹", "›", "、", "。",
                                                        "，", "！", "？", "：", "；", "（", "）", "【", "】", "「", "」"]
for p in PUNCT:
    add(p)
    add(p * 3)
    add("word" + p + "word")
    add(" " + p + " ")
for _ in range(120):
    k = R.randint(1, 12)
    run = "".join(R.choice(PUNCT) for _ in range(k))
    add(R.choice(["", " ", "a", "Hello", "数"]) + run + R.choice(["", " ", "b", "\n", "world"]))

# ---------------------------------------------------------------- contractions
CONTR = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"]
WORDS = ["he", "she", "it", "they", "we", "you", "I", "don", "can", "won", "that", "who", "there"]
for c in CONTR:
    for case in (str.lower, str.upper, str.title, lambda x: x[:2].upper() + x[2:] if len(x) > 2 else x.upper()):
        cc = case(c)
        add(cc)
        add(R.choice(WORDS) + cc)
        add(R.choice(WORDS).upper() + cc + " " + R.choice(OBJECTS))
        add(" " + cc + " ")
        add(R.choice(WORDS) + cc.replace("'", "’"))
        add("x" + cc + "y")
for s in ["I'm", "I'M", "i'm", "You're", "YOU'RE", "we've", "WE'VE", "They'll", "THEY'LL", "he'd", "HE'D",
          "It's", "IT'S", "Don't", "DON'T", "can't", "CAN'T", "won't", "o'clock", "rock 'n' roll", "'tis",
          "ma'am", "y'all'd've", "'''", "''s", "'s's", "it''s", "Jones's", "the '90s", "James' book", "'S", "'T",
          "'Re", "'rE", "'VE", "'Ve", "'M", "'LL", "'lL", "'D"]:
    add(s)
    add("Well, " + s + " fine.")

# ---------------------------------------------------------------- special-token text
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<unk>", "<think>", "</think>",
           "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|vision_pad|>", "<pad>", "[INST]", "[/INST]",
           "<<SYS>>", "<|eot_id|>", "<|begin_of_text|>"]
MALFORMED = ["<|im_start", "im_start|>", "<|im_end", "|im_end|>", "<|im_end|>x", "x<|im_end|>", "<|IM_START|>",
             "< |im_start|>", "<|im_start |>", "<<|im_start|>>", "<||>", "<|>", "<|", "|>", "<s", "s>", "</s", "<s >",
             "<S>", "< s>", "<</s>>", "<s><s>", "</s></s>", "<|endoftext", "endoftext|>", "<|endoftext|>>",
             "<think", "think>", "<0x41>", "<0xZZ>", "<unk", "unk>", "<|im_start|><|im_start|>", "<|im_end|><|im_end|>"]
for s in SPECIAL + MALFORMED:
    add(s)
    add(" " + s + " ")
    add("text" + s + "text")
    add("Hello " + s + " world")
    add(s + "\n" + s)
for _ in range(60):
    msgs = []
    for _ in range(R.randint(1, 3)):
        role = R.choice(["system", "user", "assistant"])
        body = R.choice(ENGLISH + all_sents + CODE[:10])
        msgs.append(f"<|im_start|>{role}\n{body}<|im_end|>\n")
    tail = R.choice(["<|im_start|>assistant\n", "<|im_start|>assistant\n<think>\n\n</think>\n\n", "", "<|endoftext|>"])
    add("".join(msgs) + tail)
for _ in range(40):
    add(f"<s>[INST] {R.choice(ENGLISH)} [/INST] {R.choice(ENGLISH)}</s>")
for _ in range(40):
    parts = []
    for _ in range(R.randint(2, 8)):
        parts.append(R.choice(SPECIAL + MALFORMED + ["", " ", "\n", "a", "Hi", "你好", "🙂", "  ", "x y"]))
    add("".join(parts))

# ---------------------------------------------------------------- odd characters
for c in ["\u0001", "\u0007", "\u001b[31mred\u001b[0m", "\u007f", "\u0080", "\u009f", "\ufffd", "\ufffe", "\uffff",
          "\ue000", "\U000f0000", "\U0010ffff", "\u00ad", "soft\u00adhyphen", "zero\u200bwidth", "\u200e\u200f",
          "\u202e reversed \u202c", "\u2060", "\U0001d400", "\U0001f9d1\U0001f3fb", "a\u034fb", "ﷺ", "ﷻ", "﷽",
          "\u00b5 \u03bc", "\u212b \u00c5", "\u2126 \u03a9", "ﬃ ﬄ", "ᾮ", "ǰ", "ΐ", "İstanbul", "ŉ", "Ⓐⓑ", "⁰₀"]:
    add(c)
    add("x" + c + "y")
for i in range(33, 127):
    add(chr(i))
for _ in range(30):
    add("".join(chr(R.randint(0x20, 0x2FFF)) for _ in range(R.randint(1, 12))))
for _ in range(30):
    cp = R.choice([R.randint(0x3000, 0x9FFF), R.randint(0xAC00, 0xD7A3), R.randint(0x1F300, 0x1FAFF),
                   R.randint(0x20000, 0x2A6DF), R.randint(0x0400, 0x04FF), R.randint(0x0600, 0x06FF)])
    add("".join(chr(cp + k) for k in range(R.randint(1, 8))))

# ---------------------------------------------------------------- long strings
add("a" * 1000)
add("ab" * 500)
add("🙂" * 200)
add("中" * 300)
add("x " * 400)
add(" ".join(ENGLISH) * 3)
add("\n".join(CODE))
add("".join(all_sents))

# ---------------------------------------------------------------- random mixtures
POOL = ENGLISH + CODE + all_sents + EMOJI + SPECIAL + MALFORMED + WS + PUNCT + CONTR + WORDS
for _ in range(420):
    k = R.randint(2, 10)
    s = ""
    for _ in range(k):
        piece = R.choice(POOL)
        if len(piece) > 40 and R.random() < 0.5:
            a = R.randrange(len(piece))
            piece = piece[a:a + R.randint(1, 40)]
        s += piece
    add(s)

add("")

# every string must be valid UTF-8 without NUL; duplicates dropped (first kept)
seen = set()
final = []
for s in out:
    assert "\0" not in s
    s.encode("utf-8")  # raises on lone surrogates
    if s in seen:
        continue
    seen.add(s)
    final.append(s)
assert len(final) >= 2000, len(final)
w = sys.stdout
for s in final:
    w.write(json.dumps(s, ensure_ascii=False) + "\n")
print(f"{len(final)} strings", file=sys.stderr)
