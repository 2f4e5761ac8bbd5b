/* cmd_chat.c — `wick chat`: an interactive multi-turn REPL. Each line read
 * from stdin is a user message; the reply streams to stdout. Every turn
 * reuses the KV cache of the previous ones (see wick_chat in wick.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static bool print_token(int32_t token, const char *text, size_t len, void *user) {
    (void)token;
    (void)user;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    return true;
}

int cmd_chat(int argc, char **argv) {
    const char *model = NULL, *system = NULL, *template_name = NULL, *thinking = NULL;
    int n_predict = -1;
    cli_runtime rt;
    cli_runtime_init(&rt);
    bool verbose = false;
    cli_sampling sf;
    cli_sampling_init(&sf);
    cli_list stops = {.n = 0};
    cli_opt opts[32] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--system", NULL, OPT_STR, &system, NULL},
        {"--template", NULL, OPT_STR, &template_name, NULL},
        {"--enable-thinking", NULL, OPT_STR, &thinking, NULL},
        {"--n-predict", "-n", OPT_INT, &n_predict, NULL},
        {"--stop", NULL, OPT_LIST, &stops, NULL},
        {"--verbose", "-v", OPT_FLAG, &verbose, NULL},
    };
    int n_opts = cli_runtime_opts(opts, cli_sampling_opts(opts, 7, &sf), &rt);
    const int prc = cli_parse("chat", argc, argv, opts, n_opts);
    if (prc) return prc < 0;
    if (cli_runtime_check("chat", &rt) < 0 || cli_sampling_check("chat", &sf) < 0) return 1;
    if (n_predict < -1) return cli_error("chat: -n must be >= -1");
    int enable_thinking = -1;
    if (thinking) {
        if (strcmp(thinking, "true") == 0) enable_thinking = 1;
        else if (strcmp(thinking, "false") == 0) enable_thinking = 0;
        else return cli_error("chat: --enable-thinking takes true or false");
    }
    wick_model *m = cli_runtime_model("chat", model, &rt);
    if (!m) return 1;
    wick_error err;
    wick_context *c = cli_runtime_context(m, &rt);
    wick_chat *chat = c ? wick_chat_new(c, system, template_name, enable_thinking, &err) : NULL;
    if (!chat) {
        if (c) cli_error("%s", err.msg);
        wick_context_free(c);
        wick_model_free(m);
        return 1;
    }
    cli_sampling_apply_model(&sf, m);
    wick_generate_params gp = {.n_predict = n_predict, .sampling = sf.v, .on_token = print_token,
                               .stop = stops.v, .n_stop = stops.n};
    bool tty = isatty(STDIN_FILENO);
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    for (;;) {
        if (tty) {
            fputs("> ", stdout);
            fflush(stdout);
        }
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0) break;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (n == 0) continue;
        if (strcmp(line, "/exit") == 0 || strcmp(line, "/quit") == 0) break;
        wick_timings tm;
        wick_finish fin;
        if (wick_chat_send(chat, line, &gp, NULL, &fin, &tm, &err) < 0) {
            rc = cli_error("%s", err.msg);
            break;
        }
        fputc('\n', stdout);
        if (verbose)
            fprintf(stderr, "[prompt %d tokens, prefilled %d, generated %d, %.1f tok/s]\n", tm.prompt_tokens,
                    tm.prefill_tokens, tm.generated_tokens,
                    tm.decode_ms > 0 ? tm.generated_tokens * 1000.0 / tm.decode_ms : 0.0);
        fflush(stdout);
    }
    free(line);
    wick_chat_free(chat);
    wick_context_free(c);
    wick_model_free(m);
    return rc;
}
