/* tok_synthetic.c — tok_make_synthetic: a small deterministic byte-level BPE
 * tokenizer for random-weight test models. Layout: ids 0..255 are the bytes
 * (id b = byte b, in GPT-2 byte-level form), then one token per merge, learned
 * by plain BPE training on the built-in English sample below (most frequent
 * pair first, ties to the smallest ids; a pair whose text already exists is
 * skipped so every merge adds exactly one token), then <|endoftext|> (EOS),
 * <|im_start|>, <|im_end|>. Pre-tokenization is Qwen2's (NFC + regex split),
 * so the GGUF form uses tokenizer.ggml.pre = "qwen2". When the sample has no
 * pairs left, further merges extend the newest token by one letter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "text/tok_internal.h"

static const char SAMPLE[] =
    "Once upon a time there was a small town by the river. Every morning the baker opened his shop "
    "and the smell of fresh bread filled the street. Children walked to school, and the teacher "
    "greeted them at the door with a smile.\n"
    "The river was wide and slow. In the summer, people sat on the grass and watched the boats go "
    "by. In the winter, the water turned gray and the wind blew cold from the north. Nobody minded; "
    "they made tea, lit the stove, and told stories about the old days.\n"
    "One day a traveler came to the town. She carried a heavy bag and a map that was older than "
    "anyone could remember. \"I am looking for the bridge of seven stones,\" she said. The baker "
    "shook his head. The teacher thought for a long time and then pointed to the hills.\n"
    "They walked together through the fields, past the farms and the mill, until the road ended at "
    "a quiet stream. There it was: seven flat stones, one after another, leading to the other side. "
    "The traveler laughed, thanked them, and crossed the water without looking back.\n"
    "Questions and answers:\n"
    "Q: What is 12 + 30? A: 42.\n"
    "Q: How many days are in a week? A: There are 7 days in a week.\n"
    "Q: Which is larger, 3.5 or 2.75? A: 3.5 is larger than 2.75.\n"
    "Write a short list:\n"
    "1. Apples, pears, and plums.\n"
    "2. Bread, butter, and cheese.\n"
    "3. Water, milk, and juice.\n"
    "def add(a, b):\n"
    "    return a + b\n"
    "\n"
    "for i in range(10):\n"
    "    print(add(i, i * 2))\n"
    "The weather today is sunny with a light breeze, and tomorrow it will probably rain. "
    "It's a good day to read a book, to write a letter, or to walk in the park. We're going "
    "to the market later; they'll have fresh fruit and vegetables. I've heard the new library "
    "opens next week, and I'd like to visit it.\n"
    "Science is the careful study of the world through observation and experiment. A good "
    "scientist asks questions, makes predictions, and tests them. When the results do not match "
    "the prediction, the idea must change. This is how knowledge grows, one small step at a time.\n"
    "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG!\n"
    "Email: someone@example.com, phone: +1 (555) 010-2030, price: $19.99, discount: 15%.\n"
    "In the evening the lights of the town came on one by one, and the river reflected them like "
    "a second sky. The baker closed his shop, the teacher walked home, and the children dreamed of "
    "bridges, stones, and travelers from faraway places.\n";

typedef struct word {
    int32_t *ids;
    int n;
    int count;
} word;

typedef struct strset { /* open addressing set of token strings */
    char **s;
    size_t *len;
    size_t cap, n;
} strset;

static uint32_t h32(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static bool set_has(const strset *st, const char *s, size_t n) {
    size_t i = h32(s, n) & (st->cap - 1);
    while (st->s[i]) {
        if (st->len[i] == n && !memcmp(st->s[i], s, n)) return true;
        i = (i + 1) & (st->cap - 1);
    }
    return false;
}

static int set_add(strset *st, char *s, size_t n) { /* takes s */
    if ((st->n + 1) * 2 > st->cap) {
        size_t nc = st->cap ? st->cap * 2 : 1024;
        char **ns = calloc(nc, sizeof *ns);
        size_t *nl = calloc(nc, sizeof *nl);
        if (!ns || !nl) {
            free(ns);
            free(nl);
            return -1;
        }
        for (size_t j = 0; j < st->cap; j++) {
            if (!st->s[j]) continue;
            size_t i = h32(st->s[j], st->len[j]) & (nc - 1);
            while (ns[i]) i = (i + 1) & (nc - 1);
            ns[i] = st->s[j];
            nl[i] = st->len[j];
        }
        free(st->s);
        free(st->len);
        st->s = ns;
        st->len = nl;
        st->cap = nc;
    }
    size_t i = h32(s, n) & (st->cap - 1);
    while (st->s[i]) i = (i + 1) & (st->cap - 1);
    st->s[i] = s;
    st->len[i] = n;
    st->n++;
    return 0;
}

typedef struct pair_count {
    uint64_t key; /* UINT64_MAX empty */
    int64_t count;
} pair_count;

tokenizer *tok_make_synthetic(int n_merges, wick_error *err) {
    if (n_merges < 0 || n_merges > 200000) {
        wick_fail(err, "tok_make_synthetic: n_merges %d out of range [0, 200000]", n_merges);
        return NULL;
    }
    const int n_vocab = 256 + n_merges + 3;
    tokenizer *t = tok_new(TOK_KIND_BPE_BYTELEVEL, err);
    if (!t) return NULL;
    char **tstr = calloc((size_t)n_vocab, sizeof *tstr); /* byte-level text of each token */
    size_t *tlen = calloc((size_t)n_vocab, sizeof *tlen);
    int32_t (*mg)[2] = malloc((size_t)(n_merges ? n_merges : 1) * sizeof *mg);
    word *words = NULL;
    int n_words = 0;
    strset known = {0};
    pair_count *pc = NULL;
    size_t pc_cap = 0;
    tok_scratch s;
    memset(&s, 0, sizeof s);
    if (!tstr || !tlen || !mg) goto oom;

    /* pipeline: NFC, Qwen2 regex split, byte-level */
    t->byte_level = true;
    snprintf(t->pre_name, sizeof t->pre_name, "qwen2");
    tok_norm nfc = {.kind = NORM_NFC};
    tok_pre split = {.kind = PRE_SPLIT, .pattern = (char *)TOK_REGEX_QWEN2, .pattern_is_regex = true,
                     .behavior = SPLIT_ISOLATED};
    tok_pre bl = {.kind = PRE_BYTELEVEL};
    if (tok_add_norm(t, &nfc, err) || tok_add_pre(t, &split, err) || tok_add_pre(t, &bl, err)) goto fail;

    for (int b = 0; b < 256; b++) {
        char u[4];
        int k = tok_byte_to_utf8((unsigned char)b, u);
        tstr[b] = tok_strndup(u, (size_t)k);
        tlen[b] = (size_t)k;
        char *c = tok_strndup(u, (size_t)k);
        if (!tstr[b] || !c || set_add(&known, c, (size_t)k)) goto oom;
    }

    /* the sample's distinct words and their counts */
    if (tok_normalize(t, SAMPLE, sizeof SAMPLE - 1, &s, err) ||
        tok_pretokenize(t, s.nbuf, s.nlen, true, &s, err))
        goto fail;
    words = calloc(s.a.n ? s.a.n : 1, sizeof *words);
    if (!words) goto oom;
    for (size_t i = 0; i < s.a.n; i++) {
        const char *p = s.a.buf + s.a.p[2 * i];
        size_t n = s.a.p[2 * i + 1];
        int found = -1;
        for (int w = 0; w < n_words && found < 0; w++) {
            if ((size_t)words[w].n != n) continue;
            bool same = true;
            for (size_t j = 0; j < n && same; j++) same = words[w].ids[j] == (unsigned char)p[j];
            if (same) found = w;
        }
        if (found >= 0) {
            words[found].count++;
            continue;
        }
        words[n_words].ids = malloc(n * sizeof(int32_t));
        if (!words[n_words].ids) goto oom;
        for (size_t j = 0; j < n; j++) words[n_words].ids[j] = (unsigned char)p[j];
        words[n_words].n = (int)n;
        words[n_words].count = 1;
        n_words++;
    }

    /* training */
    int last_new = -1, fallback_letter = 0;
    for (int m = 0; m < n_merges; m++) {
        int32_t id = 256 + m;
        size_t need = 1024;
        for (int w = 0; w < n_words; w++) need += (size_t)words[w].n * 2;
        if (need > pc_cap) {
            free(pc);
            pc_cap = 1;
            while (pc_cap < need) pc_cap *= 2;
            pc = malloc(pc_cap * sizeof *pc);
            if (!pc) goto oom;
        }
        for (size_t i = 0; i < pc_cap; i++) pc[i].key = UINT64_MAX;
        for (int w = 0; w < n_words; w++) {
            for (int j = 0; j + 1 < words[w].n; j++) {
                uint64_t key = ((uint64_t)(uint32_t)words[w].ids[j] << 32) | (uint32_t)words[w].ids[j + 1];
                size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (pc_cap - 1);
                while (pc[i].key != UINT64_MAX && pc[i].key != key) i = (i + 1) & (pc_cap - 1);
                if (pc[i].key == UINT64_MAX) {
                    pc[i].key = key;
                    pc[i].count = 0;
                }
                pc[i].count += words[w].count;
            }
        }
        /* best pair whose text is new */
        int64_t best_count = 0;
        uint64_t best = UINT64_MAX;
        for (size_t i = 0; i < pc_cap; i++) {
            if (pc[i].key == UINT64_MAX) continue;
            if (pc[i].count < best_count || (pc[i].count == best_count && pc[i].key > best)) continue;
            int32_t a = (int32_t)(pc[i].key >> 32), b = (int32_t)(pc[i].key & 0xffffffffu);
            char buf[512];
            if (tlen[a] + tlen[b] > sizeof buf) continue;
            memcpy(buf, tstr[a], tlen[a]);
            memcpy(buf + tlen[a], tstr[b], tlen[b]);
            if (set_has(&known, buf, tlen[a] + tlen[b])) continue;
            best_count = pc[i].count;
            best = pc[i].key;
        }
        int32_t a, b;
        if (best != UINT64_MAX) {
            a = (int32_t)(best >> 32);
            b = (int32_t)(best & 0xffffffffu);
        } else {
            /* no pair left: extend the newest token by a letter until the text is new */
            a = last_new >= 0 ? last_new : 'a';
            for (;;) {
                b = 'a' + (fallback_letter++ % 26);
                char buf[512];
                if (tlen[a] + tlen[b] <= sizeof buf) {
                    memcpy(buf, tstr[a], tlen[a]);
                    memcpy(buf + tlen[a], tstr[b], tlen[b]);
                    if (!set_has(&known, buf, tlen[a] + tlen[b])) break;
                }
                if (fallback_letter % 26 == 0) a = (a + 1) % (256 + m); /* never loops forever */
            }
        }
        tlen[id] = tlen[a] + tlen[b];
        tstr[id] = malloc(tlen[id] + 1);
        char *c = malloc(tlen[id] + 1);
        if (!tstr[id] || !c) {
            free(c);
            goto oom;
        }
        memcpy(tstr[id], tstr[a], tlen[a]);
        memcpy(tstr[id] + tlen[a], tstr[b], tlen[b]);
        tstr[id][tlen[id]] = 0;
        memcpy(c, tstr[id], tlen[id] + 1);
        if (set_add(&known, c, tlen[id])) {
            free(c);
            goto oom;
        }
        mg[m][0] = a;
        mg[m][1] = b;
        last_new = id;
        /* apply the merge to every word */
        for (int w = 0; w < n_words; w++) {
            int o = 0;
            for (int j = 0; j < words[w].n; j++) {
                if (j + 1 < words[w].n && words[w].ids[j] == a && words[w].ids[j + 1] == b) {
                    words[w].ids[o++] = id;
                    j++;
                } else {
                    words[w].ids[o++] = words[w].ids[j];
                }
            }
            words[w].n = o;
        }
    }

    /* build the tokenizer */
    static const char *const SPECIAL[3] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
    if (tok_resize(t, n_vocab, err)) goto fail;
    for (int32_t id = 0; id < 256 + n_merges; id++)
        if (tok_set_token(t, id, tstr[id], tlen[id], 0.0f, TT_NORMAL, err)) goto fail;
    for (int k = 0; k < 3; k++)
        if (tok_set_token(t, 256 + n_merges + k, SPECIAL[k], strlen(SPECIAL[k]), 0.0f, TT_CONTROL, err))
            goto fail;
    if (tok_build_map(t, err)) goto fail;
    for (int m = 0; m < n_merges; m++)
        if (tok_add_merge(t, mg[m][0], mg[m][1], 256 + m, err)) goto fail;
    t->eos = 256 + n_merges;
    t->add_bos = false;
    t->chat_template = tok_strdup(
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] "
        "+ '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' "
        "}}{% endif %}");
    if (!t->chat_template) goto oom;
    if (tok_finalize(t, err)) goto fail;
    goto done;
oom:
    wick_fail_code(err, WICK_E_NO_MEMORY, "tok_make_synthetic: out of memory");
fail:
    tok_free(t);
    t = NULL;
done:
    if (tstr)
        for (int i = 0; i < n_vocab; i++) free(tstr[i]);
    free(tstr);
    free(tlen);
    free(mg);
    for (int w = 0; w < n_words; w++) free(words[w].ids);
    free(words);
    for (size_t i = 0; i < known.cap; i++) free(known.s[i]);
    free(known.s);
    free(known.len);
    free(pc);
    tok_scratch_free(&s);
    return t;
}
