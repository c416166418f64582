/*
 * test_handles.c — the handle registry (stepkit.h, "Handles"): a call with a handle that was
 * freed, or with a pointer that never was a handle of that kind, returns STEPKIT_EINVAL without
 * touching memory; freeing such a handle again is a no-op.
 *
 * (Passing a freed handle is what the header promises to survive; a separate program, so that a
 * library that does not keep the promise crashes only this test.)
 */
#include "check.h"

static void expect_einval_session(stepkit_session *session)
{
    char *out;
    CHECK_FAILS(out, stepkit_session_state(session, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_set_answer(session, "true", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_go_forward(session, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_go_backward(session, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_skip(session, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_finish(session, "discarded", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_result(session, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_save(session, &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_set_clock(session, NULL, NULL), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
}

static void expect_einval_task(stepkit_task *task)
{
    char *out;
    stepkit_session *session;
    CHECK_FAILS(out, stepkit_task_info(task, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_task_check(task, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_task_graph(task, &out), STEPKIT_EINVAL);
    CHECK_FAILS(session, stepkit_session_open(task, NULL, &session), STEPKIT_EINVAL);
    CHECK_FAILS(session, stepkit_session_restore(task, "{}", NULL, &session), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
}

static void test_freed_session(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    stepkit_session *other = open_ok(task, NULL);

    stepkit_session_free(session);
    expect_einval_session(session);
    stepkit_session_free(session); /* a double free: a no-op */
    /* The other session is unharmed. */
    CHECK_STEP(other, "intro");
    CHECK(walk_survey(other, "\"Ada\"") == 0);
    stepkit_session_free(other);
    stepkit_task_free(task);
}

static void test_freed_task(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);

    stepkit_task_free(task);
    expect_einval_task(task);
    stepkit_task_free(task); /* a double free: a no-op */
    /* The session keeps the task alive. */
    CHECK(walk_survey(session, "\"Ada\"") == 0);
    stepkit_session_free(session);
}

static void test_pointers_that_never_were_handles(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    long not_a_handle[16] = {0};

    expect_einval_session((stepkit_session *)(void *)not_a_handle);
    expect_einval_task((stepkit_task *)(void *)not_a_handle);
    /* A handle of the other kind. */
    expect_einval_session((stepkit_session *)(void *)task);
    expect_einval_task((stepkit_task *)(void *)session);
    stepkit_session_free((stepkit_session *)(void *)not_a_handle);
    stepkit_task_free((stepkit_task *)(void *)not_a_handle);
    stepkit_session_free((stepkit_session *)(void *)task);
    stepkit_task_free((stepkit_task *)(void *)session);
    /* Both real handles still work. */
    CHECK_STEP(session, "intro");
    {
        char *out = NULL;
        CHECK_RC(stepkit_task_info(task, &out), STEPKIT_OK);
        stepkit_string_free(out);
    }
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_freed_session);
    RUN(test_freed_task);
    RUN(test_pointers_that_never_were_handles);
    return check_report();
}
