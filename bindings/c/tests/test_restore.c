/*
 * test_restore.c — save and restore through the C ABI: a round trip gives the identical state,
 * history and answers; damaged, foreign or wrongly signed data is refused with STEPKIT_ERESTORE
 * and no session; autosave writes restorable data and a failed autosave changes nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "check.h"
#include "read_file.h"

/* A session of SURVEY_TASK on the "about" form, with history: mood was answered (4), left by
 * going back, and answered again on the way forward; the form has a draft. */
static stepkit_session *session_with_history(stepkit_task *task, const char *options)
{
    stepkit_session *session = open_ok(task, options);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "true", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "4", &out));
    CHECK_OK_OUT(stepkit_session_go_backward(session, &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"age\": 33, \"notes\": \"marker-aaaa\"}", &out));
    CHECK_STEP(session, "about");
    return session;
}

static char *save_ok(stepkit_session *session)
{
    char *saved = NULL;
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK(saved != NULL);
    return saved;
}

/* Removes startDate/endDate everywhere, and timeSpent (the time between them), to compare results
 * of runs made at different times. */
static void strip_dates(json_t *value)
{
    size_t i;
    const char *key;
    json_t *item;
    if (json_is_object(value)) {
        json_object_del(value, "startDate");
        json_object_del(value, "endDate");
        json_object_del(value, "timeSpent");
        json_object_foreach(value, key, item)
            strip_dates(item);
    } else if (json_is_array(value)) {
        json_array_foreach(value, i, item)
            strip_dates(item);
    }
}

static void test_round_trip(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *original = session_with_history(task, NULL);
    stepkit_session *restored = SENTINEL;
    char *saved = save_ok(original);
    char *before = state_text(original);
    char *after;
    json_t *state;

    CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
    CHECK(restored != NULL && restored != SENTINEL);
    if (!restored || restored == SENTINEL) {
        stepkit_string_free(saved);
        stepkit_string_free(before);
        stepkit_session_free(original);
        stepkit_task_free(task);
        return;
    }
    drain_events(restored);
    /* The identical state, draft included. */
    after = state_text(restored);
    CHECK_STR(after, before);
    stepkit_string_free(after);

    /* Saving the original did not change it. */
    after = state_text(original);
    CHECK_STR(after, before);
    stepkit_string_free(after);

    /* The back history: mood (answered 4), then smoker (true). */
    CHECK_OK_OUT(stepkit_session_go_backward(restored, &out));
    state = state_of(restored);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "mood");
    CHECK(json_integer_value(json_object_get(state, "answer")) == 4);
    json_decref(state);
    CHECK_OK_OUT(stepkit_session_go_backward(restored, &out));
    state = state_of(restored);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "smoker");
    CHECK(json_is_true(json_object_get(state, "answer")));
    json_decref(state);
    /* ... and forward again to the form, whose draft was kept. */
    CHECK_OK_OUT(stepkit_session_go_forward(restored, &out));
    CHECK_OK_OUT(stepkit_session_go_forward(restored, &out));
    state = state_of(restored);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "about");
    CHECK(json_integer_value(json_object_get(json_object_get(state, "answer"), "age")) == 33);
    json_decref(state);

    /* Both runs end with the same result (dates aside). */
    {
        static const char *const steps[] = {"forward", "name", "forward", "forward"};
        stepkit_session *sessions[2];
        json_t *results[2] = {NULL, NULL};
        size_t s, i;
        sessions[0] = original;
        sessions[1] = restored;
        for (s = 0; s < 2; s++) {
            char *out = NULL;
            for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
                if (strcmp(steps[i], "forward") == 0)
                    CHECK_OK_OUT(stepkit_session_go_forward(sessions[s], &out));
                else
                    CHECK_OK_OUT(stepkit_session_set_answer(sessions[s], "\"Ada\"", &out));
            }
            CHECK_RC(stepkit_session_result(sessions[s], &out), STEPKIT_OK);
            results[s] = parse_json(out);
            stepkit_string_free(out);
            strip_dates(results[s]);
        }
        CHECK(results[0] && results[1] && json_equal(results[0], results[1]));
        CHECK(json_array_size(json_object_get(results[1], "results")) == 6);
        json_decref(results[0]);
        json_decref(results[1]);
    }

    stepkit_string_free(saved);
    stepkit_string_free(before);
    stepkit_session_free(restored);
    stepkit_session_free(original);
    stepkit_task_free(task);
}

static void test_finished_round_trip(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = session_with_history(task, NULL);
    stepkit_session *restored = NULL;
    char *saved;
    json_t *state;

    CHECK_OK_OUT(stepkit_session_finish(session, "saved", &out));
    saved = save_ok(session);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
    state = state_of(restored);
    CHECK_STR(json_str(state, "status"), "finished");
    CHECK_STR(json_str(state, "finishReason"), "saved");
    json_decref(state);
    {
        char *out;
        CHECK_FAILS(out, stepkit_session_go_forward(restored, &out), STEPKIT_ESTATE);
    }
    stepkit_string_free(saved);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Restoring `saved` on `task` with `options` is refused with `status`; no session; when
 * `problem` is not NULL, the first problem's code is `problem`. */
static void expect_restore_refused(stepkit_task *task, const char *saved, const char *options,
                                   int status, const char *code, const char *problem)
{
    stepkit_session *session = SENTINEL;
    json_t *error;
    CHECK_RC(stepkit_session_restore(task, saved, options, &session), status);
    CHECK(session == NULL);
    error = check_last_error(status, code, NULL);
    if (error && problem)
        CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), problem);
    json_decref(error);
    if (session && session != SENTINEL)
        stepkit_session_free(session);
}

static void test_refused_data(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = session_with_history(task, NULL);
    char *saved = save_ok(session);
    char *copy;
    char *marker;
    size_t length = saved ? strlen(saved) : 0;

    if (!saved) {
        stepkit_session_free(session);
        stepkit_task_free(task);
        return;
    }
    copy = malloc(length + 1);
    if (!copy)
        return;

    /* Truncated. */
    memcpy(copy, saved, length / 2);
    copy[length / 2] = '\0';
    expect_restore_refused(task, copy, NULL, STEPKIT_ERESTORE, "ERESTORE", "damaged");
    /* Not restoration data. */
    expect_restore_refused(task, "{}", NULL, STEPKIT_ERESTORE, "ERESTORE", "notRestorationData");
    expect_restore_refused(task, "[]", NULL, STEPKIT_ERESTORE, "ERESTORE", NULL);
    expect_restore_refused(task, SURVEY_TASK, NULL, STEPKIT_ERESTORE, "ERESTORE", "notRestorationData");
    /* An answer changed by hand: the integrity check fails. */
    strcpy(copy, saved);
    marker = strstr(copy, "marker-aaaa");
    CHECK(marker != NULL);
    if (marker) {
        memcpy(marker, "marker-bbbb", 11);
        expect_restore_refused(task, copy, NULL, STEPKIT_ERESTORE, "ERESTORE", "integrityCheckFailed");
    }
    /* Another task; another version of this task. */
    {
        stepkit_task *other = compile_ok(
            "{\"identifier\": \"other\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"}]}");
        stepkit_task *changed = compile_ok(
            "{\"identifier\": \"survey\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"intro\"}]}");
        expect_restore_refused(other, saved, NULL, STEPKIT_ERESTORE, "ERESTORE", "differentTask");
        expect_restore_refused(changed, saved, NULL, STEPKIT_ERESTORE, "ERESTORE", "taskChanged");
        stepkit_task_free(other);
        stepkit_task_free(changed);
    }
    /* Options restore does not take, or does not know. */
    expect_restore_refused(task, saved, "{\"taskRunUUID\": \"0f8fad5b-d9cb-469f-a165-70867728950e\"}",
                           STEPKIT_EINVAL, "EINVAL", NULL);
    expect_restore_refused(task, saved, "{\"bogus\": 1}", STEPKIT_EINVAL, "EINVAL", NULL);

    /* The session that was saved is untouched by all this. */
    CHECK_STEP(session, "about");

    free(copy);
    stepkit_string_free(saved);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_integrity_key(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = session_with_history(task, "{\"integrityKey\": \"secret-one\"}");
    stepkit_session *restored = NULL;
    char *saved = save_ok(session);
    char *before = state_text(session);
    char *after;

    expect_restore_refused(task, saved, NULL, STEPKIT_ERESTORE, "ERESTORE", "keyRequired");
    expect_restore_refused(task, saved, "{\"integrityKey\": \"secret-two\"}", STEPKIT_ERESTORE,
                           "ERESTORE", "integrityCheckFailed");
    CHECK_RC(stepkit_session_restore(task, saved, "{\"integrityKey\": \"secret-one\"}", &restored),
             STEPKIT_OK);
    drain_events(restored);
    after = state_text(restored);
    CHECK_STR(after, before);

    stepkit_string_free(after);
    stepkit_string_free(before);
    stepkit_string_free(saved);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_autosave(void)
{
    char directory[] = "/tmp/stepkit-autosave.XXXXXX";
    char path[256];
    char options[512];
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = SENTINEL;
    stepkit_session *restored = NULL;
    char *saved;
    char *before;
    char *after;

    if (!mkdtemp(directory)) {
        CHECK(!"mkdtemp failed");
        stepkit_task_free(task);
        return;
    }
    /* A directory that does not exist: the first autosave fails, no session. */
    sprintf(options, "{\"autosave\": \"%s/missing/run.json\"}", directory);
    CHECK_RC(stepkit_session_open(task, options, &session), STEPKIT_EIO);
    CHECK(session == NULL);
    json_decref(check_last_error(STEPKIT_EIO, "EIO", NULL));

    sprintf(path, "%s/run.json", directory);
    sprintf(options, "{\"autosave\": \"%s\"}", path);
    session = open_ok(task, options);
    saved = read_file(path, NULL);
    CHECK(saved != NULL); /* written at open */
    free(saved);

    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "true", &out));
    /* The file holds the draft: restoring it gives the same state. */
    saved = read_file(path, NULL);
    CHECK(saved != NULL);
    before = state_text(session);
    if (saved) {
        CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
        drain_events(restored);
        after = state_text(restored);
        CHECK_STR(after, before);
        stepkit_string_free(after);
        stepkit_session_free(restored);
        free(saved);
    }

    /* The directory disappears: a call that changes the session fails with EIO and changes
     * nothing. */
    CHECK(unlink(path) == 0);
    CHECK(rmdir(directory) == 0);
    {
        char *out;
        CHECK_FAILS(out, stepkit_session_go_forward(session, &out), STEPKIT_EIO);
        json_decref(check_last_error(STEPKIT_EIO, "EIO", NULL));
    }
    after = state_text(session);
    CHECK_STR(after, before);
    CHECK_STEP(session, "smoker");

    stepkit_string_free(after);
    stepkit_string_free(before);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_finished_round_trip);
    RUN(test_refused_data);
    RUN(test_integrity_key);
    RUN(test_autosave);
    return check_report();
}
