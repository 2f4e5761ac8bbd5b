/* test_prompt_system.c — system messages for templates without a system role
 * (serve/prompt_system.c): a template that raises on one, or leaves its text
 * out, gets each system text folded into the next user message (joined by a
 * newline; before another role, a user message of its own); a template that
 * renders the system text, or a conversation without one, is left as is. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "serve/prompt.h"

/* Gemma 2's way: raise on a system message */
static const char RAISES[] =
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ '<start_of_turn>' + m['role'] + '\\n' + m['content'] + '<end_of_turn>\\n' }}{% endfor %}";
/* a template that drops system messages without a word */
static const char DROPS[] =
    "{% for m in messages %}{% if m['role'] != 'system' %}{{ m['role'] + ': ' + m['content'] + '\\n' }}{% endif %}"
    "{% endfor %}";
static const char TAKES[] = "{% for m in messages %}{{ m['role'] + ': ' + m['content'] + '\\n' }}{% endfor %}";

/* fold ctx's messages for tmpl; the messages after, as compact JSON */
static char *folded(const char *tmpl, const char *messages) {
    cJSON *ctx = cJSON_CreateObject();
    cJSON_AddItemToObject(ctx, "messages", cJSON_Parse(messages));
    cJSON_AddStringToObject(ctx, "bos_token", "<bos>");
    fld_error e = {0};
    char *out = NULL;
    if (prompt_fold_system(tmpl, ctx, &e) == 0)
        out = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(ctx, "messages"));
    cJSON_Delete(ctx);
    return out;
}

static void folds(void) {
    char *out = folded(RAISES, "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]");
    CHECK_STR(out, "[{\"role\":\"user\",\"content\":\"Be brief.\\nHi\"}]");
    free(out);
    out = folded(DROPS, "[{\"role\":\"system\",\"content\":\"A\"},{\"role\":\"system\",\"content\":\"B\"},"
                        "{\"role\":\"user\",\"content\":\"\"},{\"role\":\"assistant\",\"content\":\"ok\"}]");
    CHECK_STR(out, "[{\"role\":\"user\",\"content\":\"A\\nB\"},{\"role\":\"assistant\",\"content\":\"ok\"}]");
    free(out);
    /* before an assistant message, and at the end: a user message of their own */
    out = folded(RAISES, "[{\"role\":\"system\",\"content\":\"S\"},{\"role\":\"assistant\",\"content\":\"a\"},"
                         "{\"role\":\"user\",\"content\":\"u\"},{\"role\":\"system\",\"content\":\"T\"}]");
    CHECK_STR(out, "[{\"role\":\"user\",\"content\":\"S\"},{\"role\":\"assistant\",\"content\":\"a\"},"
                   "{\"role\":\"user\",\"content\":\"u\"},{\"role\":\"user\",\"content\":\"T\"}]");
    free(out);
}

static void leaves(void) {
    const char *conv = "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]";
    char *out = folded(TAKES, conv);
    CHECK_STR(out, conv);
    free(out);
    const char *no_system = "[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":\"Hello\"}]";
    out = folded(RAISES, no_system);
    CHECK_STR(out, no_system);
    free(out);
}

int main(void) {
    RUN(folds);
    RUN(leaves);
    return check_summary("prompt_system");
}
