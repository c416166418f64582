/* libFuzzer target: task compilation. The input is a task definition (any bytes).
 * A definition that compiles is also described, checked, opened, walked a little, saved and
 * restored, so the compiler's output is exercised by the session code too. */
#include "fuzz_common.h"

static int64_t fixed_clock(void *user_data) { (void)user_data; return 1767225600000LL; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    fuzz_skip_byte_compare_hooks_of("compile", *argc, *argv); /* fuzz_common.h */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    stepkit_task *task = (stepkit_task *)0x1;
    int rc = stepkit_task_compile(text, &task);
    FUZZ_CHECK(fuzz_known_status(rc), "unknown status %d", rc);
    if (rc != STEPKIT_OK) {
        FUZZ_CHECK(task == NULL, "task not NULL on failure");
        FUZZ_CHECK(rc == STEPKIT_EINVAL || rc == STEPKIT_EPARSE || rc == STEPKIT_EDEFINITION, "compile rc %d", rc);
        fuzz_check_error(rc);
        free(text);
        return 0;
    }
    char *out = NULL;
    rc = stepkit_task_info(task, &out);
    FUZZ_CHECK(rc == STEPKIT_OK, "task_info rc %d", rc);
    fuzz_check_json(out);
    stepkit_string_free(out);
    rc = stepkit_task_check(task, &out);
    FUZZ_CHECK(rc == STEPKIT_OK, "task_check rc %d", rc);
    fuzz_check_json(out);
    stepkit_string_free(out);
    rc = stepkit_task_graph(task, &out);
    FUZZ_CHECK(rc == STEPKIT_OK, "task_graph rc %d", rc);
    fuzz_check_json(out);
    stepkit_string_free(out);

    stepkit_session *s = NULL;
    rc = stepkit_session_open(task, "{\"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\"}", &s);
    FUZZ_CHECK(rc == STEPKIT_OK, "open rc %d", rc);
    stepkit_task_free(task); /* the session keeps it alive */
    stepkit_session_set_clock(s, fixed_clock, NULL);
    for (int i = 0; i < 8; i++) {
        rc = stepkit_session_state(s, &out);
        FUZZ_CHECK(rc == STEPKIT_OK, "state rc %d", rc);
        fuzz_check_json(out);
        stepkit_string_free(out);
        rc = stepkit_session_go_forward(s, NULL);
        if (rc != STEPKIT_OK) {
            fuzz_check_error(rc);
            rc = stepkit_session_skip(s, NULL);
            if (rc != STEPKIT_OK) fuzz_check_error(rc);
        }
    }
    rc = stepkit_session_result(s, &out);
    FUZZ_CHECK(rc == STEPKIT_OK, "result rc %d", rc);
    fuzz_check_json(out);
    stepkit_string_free(out);
    char *saved = NULL;
    rc = stepkit_session_save(s, &saved);
    FUZZ_CHECK(rc == STEPKIT_OK, "save rc %d", rc);
    stepkit_session *r = NULL;
    /* the task handle was released: restore needs a live one, so compile again */
    stepkit_task *again = NULL;
    rc = stepkit_task_compile(text, &again);
    FUZZ_CHECK(rc == STEPKIT_OK, "second compile of the same text failed: %d", rc);
    rc = stepkit_session_restore(again, saved, NULL, &r);
    FUZZ_CHECK(rc == STEPKIT_OK, "restoring fresh restoration data failed: %d\n%.500s", rc, saved);
    stepkit_session_free(r);
    stepkit_task_free(again);
    stepkit_string_free(saved);
    stepkit_session_free(s);
    free(text);
    return 0;
}
