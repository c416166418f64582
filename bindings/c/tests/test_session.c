/*
 * test_session.c — StepKit sessions through the C ABI: a full walk and its result, calls in the
 * wrong state, rejected calls that change nothing, the clock callback, and a task freed while its
 * sessions live.
 */
#include "check.h"

/* A manual clock: the tests move `now` by hand. */
struct manual_clock {
    int64_t now;
    long calls;
};

static int64_t manual_now(void *user_data)
{
    struct manual_clock *clock = user_data;
    clock->calls++;
    return clock->now;
}

/* The `index`th step result of a task result. */
static json_t *step_result(json_t *result, size_t index)
{
    return json_array_get(json_object_get(result, "results"), index);
}

/* The question result `identifier` in a step result, or NULL. */
static json_t *question_result(json_t *step, const char *identifier)
{
    json_t *results = json_object_get(step, "results");
    size_t i;
    for (i = 0; i < json_array_size(results); i++) {
        json_t *result = json_array_get(results, i);
        const char *id = json_str(result, "identifier");
        if (id && strcmp(id, identifier) == 0)
            return result;
    }
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * A full walk
 */

static void test_walk_and_result(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session =
        open_ok(task, "{\"taskRunUUID\": \"6f1c0d5e-3b9a-4c2d-8e7f-0a1b2c3d4e5f\"}");
    char *out = NULL;
    json_t *state = state_of(session);
    json_t *result;
    json_t *navigation;
    json_t *progress;

    /* The first step. */
    CHECK_STR(json_str(state, "status"), "inProgress");
    CHECK(json_is_null(json_object_get(state, "finishReason")));
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "intro");
    CHECK_STR(json_str(json_object_get(state, "step"), "type"), "instruction");
    CHECK(json_is_null(json_object_get(state, "answer")));
    CHECK(json_is_array(json_object_get(state, "problems")));
    navigation = json_object_get(state, "navigation");
    CHECK(json_is_false(json_object_get(navigation, "canGoBack")));
    CHECK(json_is_true(json_object_get(navigation, "canGoForward")));
    CHECK(json_is_false(json_object_get(navigation, "canSkip")));
    CHECK(json_is_true(json_object_get(navigation, "hasNextStep")));
    CHECK(json_is_array(json_object_get(navigation, "arrival")));
    progress = json_object_get(state, "progress");
    CHECK(json_integer_value(json_object_get(progress, "current")) == 1);
    CHECK(json_integer_value(json_object_get(progress, "total")) == 6);
    CHECK(json_integer_value(json_object_get(progress, "presented")) == 1);
    CHECK(json_integer_value(json_object_get(progress, "fewestRemaining")) == 5);
    CHECK(json_integer_value(json_object_get(progress, "mostRemaining")) == 5);
    CHECK(json_is_null(json_object_get(state, "visibleItems")));
    CHECK(json_is_null(json_object_get(state, "restoreReport")));
    json_decref(state);

    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));

    /* A required question: forward is refused until it is answered. */
    state = state_of(session);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "smoker");
    navigation = json_object_get(state, "navigation");
    CHECK(json_is_true(json_object_get(navigation, "canGoBack")));
    CHECK(json_is_false(json_object_get(navigation, "canGoForward")));
    CHECK(json_is_false(json_object_get(navigation, "canSkip")));
    CHECK(json_array_size(json_object_get(state, "problems")) >= 1);
    CHECK(json_integer_value(json_object_get(json_object_get(state, "progress"), "current")) == 2);
    json_decref(state);

    CHECK_RC(stepkit_session_set_answer(session, "true", &out), STEPKIT_OK);
    state = parse_json(out);
    stepkit_string_free(out);
    out = NULL;
    CHECK(json_is_true(json_object_get(state, "answer")));
    CHECK(json_is_true(json_object_get(json_object_get(state, "navigation"), "canGoForward")));
    CHECK(json_array_size(json_object_get(state, "problems")) == 0);
    json_decref(state);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));

    /* The optional question: skip it. */
    state = state_of(session);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "mood");
    CHECK(json_is_true(json_object_get(json_object_get(state, "navigation"), "canSkip")));
    json_decref(state);
    CHECK_OK_OUT(stepkit_session_skip(session, &out));

    /* The form: items are set one call at a time and kept. */
    state = state_of(session);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "about");
    CHECK(json_is_object(json_object_get(state, "answer")) &&
          json_object_size(json_object_get(state, "answer")) == 0);
    CHECK(json_array_size(json_object_get(state, "visibleItems")) == 2);
    CHECK_STR(json_string_value(json_array_get(json_object_get(state, "visibleItems"), 0)), "age");
    CHECK_STR(json_string_value(json_array_get(json_object_get(state, "visibleItems"), 1)), "notes");
    CHECK_STR(json_str(json_array_get(json_object_get(state, "problems"), 0), "path"), "age");
    json_decref(state);
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"age\": 42}", &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"notes\": \"tea\"}", &out));
    state = state_of(session);
    CHECK(json_integer_value(json_object_get(json_object_get(state, "answer"), "age")) == 42);
    CHECK_STR(json_str(json_object_get(state, "answer"), "notes"), "tea");
    json_decref(state);
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"notes\": null}", &out));
    state = state_of(session);
    CHECK(json_integer_value(json_object_get(json_object_get(state, "answer"), "age")) == 42);
    CHECK(json_object_get(json_object_get(state, "answer"), "notes") == NULL ||
          json_is_null(json_object_get(json_object_get(state, "answer"), "notes")));
    json_decref(state);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));

    CHECK_STEP(session, "name");
    CHECK_OK_OUT(stepkit_session_set_answer(session, "\"Ada\"", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));

    /* The last step. */
    state = state_of(session);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "done");
    CHECK(json_is_false(json_object_get(json_object_get(state, "navigation"), "hasNextStep")));
    CHECK(json_integer_value(json_object_get(json_object_get(state, "progress"), "current")) == 6);
    json_decref(state);
    CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_OK);
    state = parse_json(out);
    stepkit_string_free(out);
    out = NULL;
    CHECK_STR(json_str(state, "status"), "finished");
    CHECK_STR(json_str(state, "finishReason"), "completed");
    CHECK(json_is_null(json_object_get(state, "step")));
    json_decref(state);

    /* The result: one step result per visit, in order. */
    result = result_of(session);
    CHECK_STR(json_str(result, "identifier"), "survey");
    CHECK_STR_NOCASE(json_str(result, "taskRunUUID"), "6f1c0d5e-3b9a-4c2d-8e7f-0a1b2c3d4e5f");
    CHECK(json_is_string(json_object_get(result, "startDate")));
    CHECK(json_is_string(json_object_get(result, "endDate")));
    CHECK(json_array_size(json_object_get(result, "results")) == 6);
    {
        static const char *const order[] = {"intro", "smoker", "mood", "about", "name", "done"};
        size_t i;
        for (i = 0; i < 6; i++) {
            json_t *step = step_result(result, i);
            CHECK_STR(json_str(step, "identifier"), order[i]);
            CHECK(json_is_string(json_object_get(step, "startDate")));
            CHECK(json_is_string(json_object_get(step, "endDate")));
            CHECK(json_is_array(json_object_get(step, "results")));
        }
    }
    {
        json_t *smoker = question_result(step_result(result, 1), "smoker");
        json_t *mood = question_result(step_result(result, 2), "mood");
        json_t *age = question_result(step_result(result, 3), "age");
        json_t *notes = question_result(step_result(result, 3), "notes");
        json_t *name = question_result(step_result(result, 4), "name");
        CHECK_STR(json_str(smoker, "type"), "boolean");
        CHECK(json_is_true(json_object_get(smoker, "answer")));
        CHECK_STR(json_str(mood, "type"), "scale");
        CHECK(mood != NULL && json_is_null(json_object_get(mood, "answer")));
        CHECK_STR(json_str(age, "type"), "numeric");
        CHECK(json_integer_value(json_object_get(age, "answer")) == 42 ||
              json_number_value(json_object_get(age, "answer")) == 42.0);
        CHECK_STR(json_str(age, "unit"), "years");
        CHECK_STR(json_str(notes, "type"), "text");
        CHECK(notes != NULL && json_is_null(json_object_get(notes, "answer")));
        CHECK_STR(json_str(name, "type"), "text");
        CHECK_STR(json_str(name, "answer"), "Ada");
    }
    json_decref(result);

    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Going back keeps the answers to prefill the step, but takes them out of the result. */
static void test_back_keeps_answers(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    json_t *state;
    json_t *result;

    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "false", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_STEP(session, "mood");
    CHECK_OK_OUT(stepkit_session_set_answer(session, "4", &out));
    CHECK_OK_OUT(stepkit_session_go_backward(session, &out));
    state = state_of(session);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "smoker");
    CHECK(json_is_false(json_object_get(state, "answer")));
    json_decref(state);
    result = result_of(session);
    CHECK(json_array_size(json_object_get(result, "results")) == 2); /* intro, smoker */
    json_decref(result);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    state = state_of(session);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "mood");
    CHECK(json_integer_value(json_object_get(state, "answer")) == 4);
    json_decref(state);

    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* ---------------------------------------------------------------------------------------------
 * Calls in the wrong state; a rejected call changes nothing
 */

/* `call` (using `out`) is refused with `status`; *out is NULL; state and result are
 * byte-identical (the session runs on a manual clock, so the result's dates do not move). */
#define EXPECT_REFUSED(session, call, status, code)                                            \
    do {                                                                                       \
        char *before_state_ = state_text(session);                                             \
        char *before_result_ = result_text(session);                                           \
        char *after_state_;                                                                    \
        char *after_result_;                                                                   \
        char *out = SENTINEL;                                                                  \
        CHECK_RC(call, status);                                                                \
        CHECK(out == NULL);                                                                    \
        json_decref(check_last_error(status, code, NULL));                                     \
        after_state_ = state_text(session);                                                    \
        after_result_ = result_text(session);                                                  \
        CHECK_STR(after_state_, before_state_);                                                \
        CHECK_STR(after_result_, before_result_);                                              \
        stepkit_string_free(before_state_);                                                    \
        stepkit_string_free(before_result_);                                                   \
        stepkit_string_free(after_state_);                                                     \
        stepkit_string_free(after_result_);                                                    \
    } while (0)

static void test_wrong_state(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    struct manual_clock clock = {1767225600000LL, 0};
    char *out = NULL;

    CHECK_RC(stepkit_session_set_clock(session, manual_now, &clock), STEPKIT_OK);

    /* The first step: an instruction. */
    EXPECT_REFUSED(session, stepkit_session_go_backward(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_set_answer(session, "true", &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_skip(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_finish(session, "completed", &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_finish(session, "nonsense", &out), STEPKIT_EINVAL, "EINVAL");
    CHECK_STEP(session, "intro");

    /* A required question without an answer. */
    clock.now += 1000;
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    EXPECT_REFUSED(session, stepkit_session_go_forward(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_skip(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_finish(session, "completed", &out), STEPKIT_ESTATE, "ESTATE");
    CHECK_STEP(session, "smoker");
    {
        /* The refusal of forward says why. */
        json_t *error;
        out = SENTINEL;
        CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_ESTATE);
        error = check_last_error(STEPKIT_ESTATE, "ESTATE", NULL);
        CHECK(json_array_size(json_object_get(error, "errors")) >= 1);
        json_decref(error);
    }

    /* A form with a required item missing, then with answers. */
    clock.now += 1000;
    CHECK_OK_OUT(stepkit_session_set_answer(session, "true", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_skip(session, &out));
    CHECK_STEP(session, "about");
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"notes\": \"x\"}", &out));
    EXPECT_REFUSED(session, stepkit_session_go_forward(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_skip(session, &out), STEPKIT_ESTATE, "ESTATE");
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"age\": 30}", &out));
    /* Rejected answers keep the draft exactly as it was. */
    EXPECT_REFUSED(session, stepkit_session_set_answer(session, "{\"age\": 200}", &out), STEPKIT_EANSWER, "EANSWER");
    EXPECT_REFUSED(session, stepkit_session_set_answer(session, "{\"age\": 50, \"notes\": 1}", &out), STEPKIT_EANSWER, "EANSWER");
    EXPECT_REFUSED(session, stepkit_session_set_answer(session, "{\"age\": ", &out), STEPKIT_EPARSE, "EPARSE");
    EXPECT_REFUSED(session, stepkit_session_set_answer(session, "\"\xff\"", &out), STEPKIT_EPARSE, "EPARSE");
    EXPECT_REFUSED(session, stepkit_session_set_answer(session, NULL, &out), STEPKIT_EINVAL, "EINVAL");
    EXPECT_REFUSED(session, stepkit_session_finish(session, "completed", &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_finish(session, NULL, &out), STEPKIT_EINVAL, "EINVAL");
    {
        json_t *state = state_of(session);
        json_t *answer = json_object_get(state, "answer");
        CHECK(json_integer_value(json_object_get(answer, "age")) == 30);
        CHECK_STR(json_str(answer, "notes"), "x");
        json_decref(state);
    }
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));

    /* The last step: "completed" is allowed there. */
    CHECK_OK_OUT(stepkit_session_set_answer(session, "\"Ada\"", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_STEP(session, "done");
    clock.now += 1000;
    CHECK_OK_OUT(stepkit_session_finish(session, "completed", &out));

    /* After the end, every navigation is refused and nothing changes. */
    EXPECT_REFUSED(session, stepkit_session_go_forward(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_go_backward(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_skip(session, &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_set_answer(session, "\"Bob\"", &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_finish(session, "completed", &out), STEPKIT_ESTATE, "ESTATE");
    EXPECT_REFUSED(session, stepkit_session_finish(session, "discarded", &out), STEPKIT_ESTATE, "ESTATE");
    {
        json_t *state = state_of(session);
        CHECK_STR(json_str(state, "status"), "finished");
        CHECK_STR(json_str(state, "finishReason"), "completed");
        json_decref(state);
    }
    stepkit_session_free(session);

    /* Forward after a "saved" finish, too. */
    session = open_ok(task, NULL);
    CHECK_OK_OUT(stepkit_session_finish(session, "saved", &out));
    CHECK_FAILS(out, stepkit_session_go_forward(session, &out), STEPKIT_ESTATE);
    stepkit_session_free(session);

    stepkit_task_free(task);
}

/* ---------------------------------------------------------------------------------------------
 * The clock
 */

static void test_manual_clock(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    struct manual_clock clock = {1767225600000LL, 0}; /* 2026-01-01T00:00:00.000Z */
    json_t *result;

    CHECK_RC(stepkit_session_set_clock(session, manual_now, &clock), STEPKIT_OK);
    clock.now = 1767225601234LL; /* + 1.234 s */
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    clock.now = 1767225602000LL;
    CHECK_OK_OUT(stepkit_session_set_answer(session, "true", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    clock.now = 1767225603000LL;
    CHECK_OK_OUT(stepkit_session_skip(session, &out));
    clock.now = 1772409599999LL; /* 2026-03-01T23:59:59.999Z */
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"age\": 42}", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "\"Ada\"", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    clock.now = 1835440496789LL; /* 2028-02-29T12:34:56.789Z, a leap day */
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK(clock.calls > 0);

    result = result_of(session);
    CHECK_STR(json_str(result, "startDate"), "2026-01-01T00:00:00.000Z");
    CHECK_STR(json_str(result, "endDate"), "2028-02-29T12:34:56.789Z");
    {
        /* Each step result's dates (NULL: not checked). */
        static const struct { size_t step; const char *start, *end; } dates[] = {
            {0, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.234Z"},
            {1, "2026-01-01T00:00:01.234Z", "2026-01-01T00:00:02.000Z"},
            {2, "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:03.000Z"},
            {3, "2026-01-01T00:00:03.000Z", "2026-03-01T23:59:59.999Z"},
            {5, NULL, "2028-02-29T12:34:56.789Z"},
        };
        size_t i;
        for (i = 0; i < sizeof dates / sizeof dates[0]; i++) {
            if (dates[i].start)
                CHECK_STR(json_str(step_result(result, dates[i].step), "startDate"), dates[i].start);
            CHECK_STR(json_str(step_result(result, dates[i].step), "endDate"), dates[i].end);
        }
    }
    json_decref(result);

    /* NULL puts the system clock back. */
    CHECK_RC(stepkit_session_set_clock(session, NULL, NULL), STEPKIT_OK);
    stepkit_session_free(session);

    /* A clock set before the first navigation also sets the start of the run; dates before
     * 1970 work too. */
    session = open_ok(task, NULL);
    clock.now = 951782400000LL; /* 2000-02-29T00:00:00.000Z */
    CHECK_RC(stepkit_session_set_clock(session, manual_now, &clock), STEPKIT_OK);
    result = result_of(session);
    CHECK_STR(json_str(result, "startDate"), "2000-02-29T00:00:00.000Z");
    json_decref(result);
    stepkit_session_free(session);

    session = open_ok(task, NULL);
    clock.now = -1; /* 1969-12-31T23:59:59.999Z */
    CHECK_RC(stepkit_session_set_clock(session, manual_now, &clock), STEPKIT_OK);
    result = result_of(session);
    CHECK_STR(json_str(result, "startDate"), "1969-12-31T23:59:59.999Z");
    json_decref(result);
    stepkit_session_free(session);

    stepkit_task_free(task);
}

/* ---------------------------------------------------------------------------------------------
 * Lifetimes
 */

static void test_task_freed_while_sessions_live(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *first = open_ok(task, NULL);
    stepkit_session *second = open_ok(task, NULL);
    json_t *state;
    json_t *result;

    stepkit_task_free(task);

    CHECK(walk_survey(first, "\"Ada\"") == 0);
    state = state_of(first);
    CHECK_STR(json_str(state, "finishReason"), "completed");
    json_decref(state);
    stepkit_session_free(first);

    /* The second session still runs after the first one, and the task handle, are gone. */
    CHECK_STEP(second, "intro");
    CHECK(walk_survey(second, "\"Grace\"") == 0);
    result = result_of(second);
    CHECK_STR(json_str(result, "identifier"), "survey");
    CHECK(json_array_size(json_object_get(result, "results")) == 6);
    json_decref(result);
    stepkit_session_free(second);
}

static void test_many_sessions(void)
{
    enum { COUNT = 200 };
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *sessions[COUNT];
    int i;
    int failures = 0;

    for (i = 0; i < COUNT; i++)
        sessions[i] = open_ok(task, NULL);
    stepkit_task_free(task);
    for (i = 0; i < COUNT; i++)
        failures += walk_survey(sessions[i], "\"Ada\"") != 0;
    CHECK(failures == 0);
    for (i = COUNT - 1; i >= 0; i--)
        stepkit_session_free(sessions[i]);
}

/* ---------------------------------------------------------------------------------------------
 * Events
 */

struct listener {
    stepkit_session *session;
    int events;          /* events received */
    int malformed;       /* events that were not {"type", "date", ...} */
    int reentrant_fails; /* calls back into the session from the callback that failed */
    int freed;           /* times free_user_data was called with this listener */
    char last_type[64];
};

static void on_event(const char *event_json, void *user_data)
{
    struct listener *listener = user_data;
    json_t *event = event_json ? json_loads(event_json, 0, NULL) : NULL;
    const char *type = json_string_value(json_object_get(event, "type"));
    char *out = NULL;

    listener->events++;
    if (!type || !json_is_string(json_object_get(event, "date")))
        listener->malformed++;
    else if (strlen(type) < sizeof listener->last_type)
        strcpy(listener->last_type, type);
    json_decref(event);
    /* The session's lock is released: the callback may call back into it. */
    if (stepkit_session_state(listener->session, &out) != STEPKIT_OK)
        listener->reentrant_fails++;
    stepkit_string_free(out);
}

static void forget(void *user_data)
{
    ((struct listener *)user_data)->freed++;
}

static void test_event_callback(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    struct listener first = {NULL, 0, 0, 0, 0, ""};
    struct listener second = {NULL, 0, 0, 0, 0, ""};
    char *out = NULL;
    json_t *state;

    first.session = session;
    second.session = session;
    CHECK_RC(stepkit_session_set_event_callback(session, on_event, &first, forget), STEPKIT_OK);

    /* The events a call produced: in its output and, one by one, to the callback. */
    CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_OK);
    state = parse_json(out);
    stepkit_string_free(out);
    out = NULL;
    CHECK(json_array_size(json_object_get(state, "events")) >= 1);
    CHECK(first.events == (int)json_array_size(json_object_get(state, "events")));
    {
        json_t *last = json_array_get(json_object_get(state, "events"),
                                      json_array_size(json_object_get(state, "events")) - 1);
        CHECK_STR(first.last_type, json_str(last, "type"));
    }
    json_decref(state);
    CHECK(first.malformed == 0);
    CHECK(first.reentrant_fails == 0);

    /* A refused call produces no event. */
    {
        int before = first.events;
        CHECK_FAILS(out, stepkit_session_go_forward(session, &out), STEPKIT_ESTATE);
        CHECK(first.events == before);
    }

    /* Replacing the callback releases the old user data, once. */
    CHECK_RC(stepkit_session_set_event_callback(session, on_event, &second, forget), STEPKIT_OK);
    CHECK(first.freed == 1);
    CHECK(second.freed == 0);
    CHECK_OK_OUT(stepkit_session_set_answer(session, "true", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK(second.events >= 1);
    CHECK(second.malformed == 0);
    CHECK(second.reentrant_fails == 0);

    /* The task's end is an event too. */
    CHECK_OK_OUT(stepkit_session_finish(session, "discarded", &out));
    CHECK_STR(second.last_type, "taskFinished");

    /* Freeing the session releases the current user data. */
    stepkit_session_free(session);
    CHECK(second.freed == 1);
    CHECK(first.freed == 1);

    /* Removing the callback (fn NULL) releases it as well. */
    session = open_ok(task, NULL);
    first.session = session;
    first.freed = 0;
    CHECK_RC(stepkit_session_set_event_callback(session, on_event, &first, forget), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_event_callback(session, NULL, NULL, NULL), STEPKIT_OK);
    CHECK(first.freed == 1);
    stepkit_session_free(session);
    CHECK(first.freed == 1);

    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_walk_and_result);
    RUN(test_back_keeps_answers);
    RUN(test_wrong_state);
    RUN(test_manual_clock);
    RUN(test_task_freed_while_sessions_live);
    RUN(test_many_sessions);
    RUN(test_event_callback);
    return check_report();
}
