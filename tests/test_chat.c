/* test_chat.c — multi-turn chat through the library: the second turn reuses
 * the KV cache and prefills exactly the tokens that differ from what the
 * cache holds (checked against an independent count), never the whole
 * conversation. */
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "cli/testmodel.h"
#include "wick.h"

typedef struct capture {
    int32_t ids[512];
    int n;
} capture;

static bool on_token(int32_t token, const char *text, size_t len, void *user) {
    (void)text;
    (void)len;
    capture *c = user;
    if (token >= 0 && c->n < 512) c->ids[c->n++] = token;
    return true;
}

static int tokenize(wick_model *m, const char *text, int32_t *out, int cap) {
    wick_error err;
    return wick_tokenize(m, text, strlen(text), false, out, cap, &err);
}

static void second_turn_prefills_only_new_tokens(void) {
    char dir[] = "/tmp/wick-chat-XXXXXX";
    if (!mkdtemp(dir)) return;
    char path[128];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    wick_error err;
    test_model_params p = {.arch = "qwen3", .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 11, .out = path};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    if (!m) return;
    wick_context_params cp = {.n_ctx = 512, .n_seq = 1, .n_threads = 2, .prefill_chunk = 16};
    wick_context *c = wick_context_new(m, &cp, &err);
    wick_chat *chat = wick_chat_new(c, "You are terse.", NULL, -1, &err);
    CHECK_MSG(chat != NULL, "%s", err.msg);
    if (!chat) return;

    static int32_t p1[1024], p2[1024], cached[2048];
    char *prompt1 = wick_chat_prompt(chat, "Hello there!", &err);
    int n1 = tokenize(m, prompt1, p1, 1024);
    CHECK(n1 > 10);
    capture cap1 = {.n = 0};
    wick_generate_params gp = {.n_predict = 12, .on_token = on_token, .user = &cap1};
    wick_timings tm;
    wick_finish fin;
    CHECK_MSG(wick_chat_send(chat, "Hello there!", &gp, NULL, &fin, &tm, &err) == 0, "%s", err.msg);
    CHECK_INT(tm.prompt_tokens, n1);
    CHECK_INT(tm.prefill_tokens, n1); /* first turn: nothing cached */

    /* What the prefix cache holds now: the first prompt and every generated
     * token that was fed back (all but the last one when the turn hit -n).
     * The sequence itself was let go when the turn ended. */
    int n_cached = 0;
    for (int i = 0; i < n1; i++) cached[n_cached++] = p1[i];
    int fed = fin == WICK_FINISH_LENGTH ? cap1.n - 1 : cap1.n;
    for (int i = 0; i < fed; i++) cached[n_cached++] = cap1.ids[i];
    CHECK_INT(wick_seq_len(c, 0), 0);

    char *prompt2 = wick_chat_prompt(chat, "And now?", &err);
    CHECK(prompt2 && prompt1 && strncmp(prompt2, prompt1, strlen(prompt1) - 30) == 0);
    int n2 = tokenize(m, prompt2, p2, 1024);
    int common = 0;
    while (common < n_cached && common < n2 - 1 && cached[common] == p2[common]) common++;
    capture cap2 = {.n = 0};
    gp.user = &cap2;
    CHECK(wick_chat_send(chat, "And now?", &gp, NULL, &fin, &tm, &err) == 0);
    CHECK_INT(tm.prompt_tokens, n2);
    CHECK_INT(tm.prefill_tokens, n2 - common);
    CHECK_MSG(common >= n1 - 2, "reused %d tokens, first prompt had %d", common, n1);
    CHECK_MSG(tm.prefill_tokens < n2 - n1 + 2 + fed, "prefilled %d of %d", tm.prefill_tokens, n2);

    free(prompt1);
    free(prompt2);
    wick_chat_free(chat);
    wick_context_free(c);
    wick_model_free(m);
    unlink(path);
    rmdir(dir);
}

int main(void) {
    RUN(second_turn_prefills_only_new_tokens);
    return check_summary("test_chat");
}
