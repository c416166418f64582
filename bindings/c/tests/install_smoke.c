/* Built against an installed StepKit with `pkg-config --cflags --libs stepkit`: the header, the
 * library and its soname links are where the pkg-config file says. */
#include <stdio.h>
#include <string.h>

#include <stepkit.h>

int main(void)
{
    const char *task_json =
        "{\"identifier\": \"smoke\", \"steps\": ["
        "{\"type\": \"question\", \"identifier\": \"ok\", \"title\": \"OK?\", \"answerFormat\": {\"type\": \"boolean\"}},"
        "{\"type\": \"completion\", \"identifier\": \"done\", \"title\": \"Done\"}]}";
    stepkit_task *task = NULL;
    stepkit_session *session = NULL;
    char *out = NULL;
    int failed = 0;

    if (strcmp(stepkit_version(), STEPKIT_VERSION) != 0 ||
        stepkit_version_number() != STEPKIT_VERSION_NUMBER) {
        fprintf(stderr, "header %s, library %s\n", STEPKIT_VERSION, stepkit_version());
        return 1;
    }
    if (stepkit_task_compile(task_json, &task) != STEPKIT_OK ||
        stepkit_session_open(task, NULL, &session) != STEPKIT_OK) {
        fprintf(stderr, "%s\n", stepkit_last_error());
        stepkit_task_free(task);
        return 1;
    }
    stepkit_task_free(task);
    failed |= stepkit_session_set_answer(session, "true", &out) != STEPKIT_OK;
    stepkit_string_free(out);
    out = NULL;
    failed |= stepkit_session_go_forward(session, &out) != STEPKIT_OK;
    stepkit_string_free(out);
    out = NULL;
    failed |= stepkit_session_go_forward(session, &out) != STEPKIT_OK;
    failed |= out == NULL || strstr(out, "\"completed\"") == NULL;
    stepkit_string_free(out);
    out = NULL;
    if (!failed) {
        failed |= stepkit_session_result(session, &out) != STEPKIT_OK;
        if (out)
            printf("%s\n", out);
        stepkit_string_free(out);
    }
    if (failed)
        fprintf(stderr, "%s\n", stepkit_last_error() ? stepkit_last_error() : "unexpected state");
    stepkit_session_free(session);
    printf("StepKit %s installed and working: %s\n", stepkit_version(), failed ? "no" : "yes");
    return failed;
}
