/*
 * check.h — a few macros and helpers shared by StepKit's C tests. No framework: each test is a
 * function; CHECK records a failure and carries on; the program ends with "N passed, M failed".
 */
#ifndef STEPKIT_TEST_CHECK_H
#define STEPKIT_TEST_CHECK_H

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_file.h"
#include "stepkit.h"

static int check_passed = 0;
static int check_failed = 0;
static const char *check_current = "";

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (cond) {                                                                            \
            check_passed++;                                                                    \
        } else {                                                                               \
            check_failed++;                                                                    \
            fprintf(stderr, "FAIL %s (%s:%d): %s\n", check_current, __FILE__, __LINE__, #cond); \
        }                                                                                      \
    } while (0)

/* CHECK for a status code, printing the codes and the error JSON when they differ. */
#define CHECK_RC(call, expected)                                                               \
    do {                                                                                       \
        int check_rc_ = (call);                                                                \
        if (check_rc_ == (expected)) {                                                         \
            check_passed++;                                                                    \
        } else {                                                                               \
            const char *check_err_ = stepkit_last_error();                                     \
            check_failed++;                                                                    \
            fprintf(stderr, "FAIL %s (%s:%d): %s returned %d, expected %d (%s)\n",             \
                    check_current, __FILE__, __LINE__, #call, check_rc_, (int)(expected),       \
                    check_err_ ? check_err_ : "no error JSON");                                \
        }                                                                                      \
    } while (0)

#define CHECK_STR(actual, expected)                                                            \
    do {                                                                                       \
        const char *check_a_ = (actual);                                                       \
        const char *check_e_ = (expected);                                                     \
        if (check_a_ && check_e_ && strcmp(check_a_, check_e_) == 0) {                         \
            check_passed++;                                                                    \
        } else {                                                                               \
            check_failed++;                                                                    \
            fprintf(stderr, "FAIL %s (%s:%d): %s is \"%s\", expected \"%s\"\n", check_current,  \
                    __FILE__, __LINE__, #actual, check_a_ ? check_a_ : "(null)",               \
                    check_e_ ? check_e_ : "(null)");                                           \
        }                                                                                      \
    } while (0)

/* CHECK_STR ignoring ASCII case (UUIDs: the engine may normalize their case). */
#define CHECK_STR_NOCASE(actual, expected)                                                     \
    do {                                                                                       \
        const char *check_a_ = (actual);                                                       \
        const char *check_e_ = (expected);                                                     \
        int check_same_ = check_a_ && check_e_ && strlen(check_a_) == strlen(check_e_);        \
        size_t check_i_;                                                                       \
        for (check_i_ = 0; check_same_ && check_a_[check_i_]; check_i_++)                      \
            check_same_ = tolower((unsigned char)check_a_[check_i_]) ==                        \
                          tolower((unsigned char)check_e_[check_i_]);                          \
        if (check_same_) {                                                                     \
            check_passed++;                                                                    \
        } else {                                                                               \
            check_failed++;                                                                    \
            fprintf(stderr, "FAIL %s (%s:%d): %s is \"%s\", expected \"%s\" (any case)\n",     \
                    check_current, __FILE__, __LINE__, #actual, check_a_ ? check_a_ : "(null)", \
                    check_e_ ? check_e_ : "(null)");                                           \
        }                                                                                      \
    } while (0)

#define RUN(test)                                                                              \
    do {                                                                                       \
        check_current = #test;                                                                 \
        test();                                                                                \
    } while (0)

static inline int check_report(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed == 0 && check_passed > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A pointer value no library call should ever store: used to see that *out is reset to NULL. */
#define SENTINEL ((void *)&check_passed)

/* CHECKs that `call` fails with `expected` and resets its output pointer `out` (set to SENTINEL
 * first) to NULL. */
#define CHECK_FAILS(out, call, expected)                                                       \
    do {                                                                                       \
        (out) = SENTINEL;                                                                      \
        CHECK_RC(call, expected);                                                              \
        CHECK((out) == NULL);                                                                  \
    } while (0)

/* The text of the test data file dir/name (free() it), or NULL and a failed check. */
static inline char *read_in(const char *dir, const char *name)
{
    char path[4096];
    char *text;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    text = read_file(path, NULL);
    if (!text) {
        fprintf(stderr, "FAIL %s: cannot read %s\n", check_current, path);
        check_failed++;
    }
    return text;
}

/* Parses JSON text; NULL (and a failed check) if it is not an object or array. */
static inline json_t *parse_json(const char *text)
{
    json_error_t error;
    json_t *value;
    if (!text) {
        CHECK(!"JSON text expected, got NULL");
        return NULL;
    }
    value = json_loads(text, JSON_DECODE_ANY, &error);
    if (!value) {
        fprintf(stderr, "FAIL %s: not JSON (%s): %s\n", check_current, error.text, text);
        check_failed++;
    }
    return value;
}

/* The string at `key` of an object, or NULL. */
static inline const char *json_str(const json_t *object, const char *key)
{
    return json_string_value(json_object_get(object, key));
}

/* Checks that the last error is well-formed error JSON for `status` (and `code`), that its path
 * equals `path` when `path` is not NULL, and returns it parsed (the caller decrefs) or NULL. */
static inline json_t *check_last_error(int status, const char *code, const char *path)
{
    const char *text = stepkit_last_error();
    json_t *error;
    json_t *errors;
    CHECK(text != NULL);
    if (!text)
        return NULL;
    error = parse_json(text);
    if (!error)
        return NULL;
    CHECK(json_is_object(error));
    CHECK(json_integer_value(json_object_get(error, "status")) == status);
    CHECK_STR(json_str(error, "code"), code);
    CHECK(json_str(error, "message") != NULL && json_str(error, "message")[0] != '\0');
    CHECK(json_is_string(json_object_get(error, "path")));
    if (path)
        CHECK_STR(json_str(error, "path"), path);
    errors = json_object_get(error, "errors");
    CHECK(json_is_array(errors) && json_array_size(errors) >= 1);
    if (json_is_array(errors) && json_array_size(errors) >= 1) {
        json_t *first = json_array_get(errors, 0);
        const char *message = json_str(error, "message");
        const char *first_message = json_str(first, "message");
        CHECK(json_is_string(json_object_get(first, "code")));
        /* "path" repeats the first problem's; so does "message" when there is one problem, and
         * with several it says how many and then the first's. */
        if (json_array_size(errors) == 1) {
            CHECK_STR(message, first_message);
        } else {
            CHECK(message && first_message && strstr(message, first_message) != NULL);
        }
        CHECK_STR(json_str(first, "path"), json_str(error, "path"));
    }
    return error;
}

/* Compiles a task that must compile. */
static inline stepkit_task *compile_ok(const char *json)
{
    stepkit_task *task = NULL;
    CHECK_RC(stepkit_task_compile(json, &task), STEPKIT_OK);
    CHECK(task != NULL);
    return task;
}

/* Reads (and discards) the state once: the events queued by open or restore are delivered with
 * the first state, so that later states of an unchanged session are byte-identical. */
static inline void drain_events(stepkit_session *session)
{
    char *out = NULL;
    CHECK_RC(stepkit_session_state(session, &out), STEPKIT_OK);
    stepkit_string_free(out);
}

/* Opens a session that must open (its queued events drained). */
static inline stepkit_session *open_ok(stepkit_task *task, const char *options)
{
    stepkit_session *session = NULL;
    CHECK_RC(stepkit_session_open(task, options, &session), STEPKIT_OK);
    CHECK(session != NULL);
    if (session)
        drain_events(session);
    return session;
}

/* A call's output JSON parsed (the caller decrefs) and freed, or NULL for no output. */
static inline json_t *parse_out(char *out)
{
    json_t *value = out ? parse_json(out) : NULL;
    stepkit_string_free(out);
    return value;
}

/* The output of `read` (stepkit_session_state, stepkit_session_result, any call taking only the
 * session and `out`), which must succeed, as text (the caller frees with stepkit_string_free), or
 * NULL. */
static inline char *session_output(int (*read)(stepkit_session *, char **), stepkit_session *session)
{
    char *out = NULL;
    CHECK_RC(read(session, &out), STEPKIT_OK);
    return out;
}

/* The session's state as text (the caller frees with stepkit_string_free), or NULL. */
static inline char *state_text(stepkit_session *session)
{
    return session_output(stepkit_session_state, session);
}

/* The session's state, parsed (the caller decrefs), or NULL. */
static inline json_t *state_of(stepkit_session *session)
{
    return parse_out(state_text(session));
}

/* The session's result as text (the caller frees with stepkit_string_free), or NULL. */
static inline char *result_text(stepkit_session *session)
{
    return session_output(stepkit_session_result, session);
}

/* The session's result, parsed (the caller decrefs), or NULL. */
static inline json_t *result_of(stepkit_session *session)
{
    return parse_out(result_text(session));
}

/* CHECKs that two sessions' states are the same text, byte for byte. */
#define CHECK_SAME_STATE(actual_session, expected_session)                                     \
    do {                                                                                       \
        char *check_actual_ = state_text(actual_session);                                      \
        char *check_expected_ = state_text(expected_session);                                  \
        CHECK_STR(check_actual_, check_expected_);                                             \
        stepkit_string_free(check_actual_);                                                    \
        stepkit_string_free(check_expected_);                                                  \
    } while (0)

/* The identifier of the current step ("" when finished); the caller frees. */
static inline char *current_step(stepkit_session *session)
{
    json_t *state = state_of(session);
    const char *identifier = NULL;
    char *copy;
    if (state)
        identifier = json_str(json_object_get(state, "step"), "identifier");
    copy = malloc(strlen(identifier ? identifier : "") + 1);
    if (copy)
        strcpy(copy, identifier ? identifier : "");
    json_decref(state);
    return copy;
}

/* CHECKs that the current step is `expected`. */
#define CHECK_STEP(session, expected)                                                          \
    do {                                                                                       \
        char *check_step_ = current_step(session);                                             \
        CHECK_STR(check_step_, expected);                                                      \
        free(check_step_);                                                                     \
    } while (0)

/* 2026-01-01T00:00:00.000Z: the time a fixed clock (check_fixed_now) gives, so results' dates
 * stay put from run to run. */
#define CHECK_T0 1767225600000LL

/* A stepkit_now_fn that always answers CHECK_T0. */
static inline int64_t check_fixed_now(void *user_data)
{
    (void)user_data;
    return CHECK_T0;
}

/* Opens a session of `task` that must open, on the fixed clock (check_fixed_now). */
static inline stepkit_session *open_fixed(stepkit_task *task)
{
    stepkit_session *session = open_ok(task, NULL);
    if (session)
        CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    return session;
}

/* Saves `session`, restores what it saved as a new session of `task`, and CHECKs that the new
 * session saves the same text byte for byte (restoring keeps everything). Returns the new session
 * (the caller frees it), or NULL and a failed check. */
static inline stepkit_session *restore_same(stepkit_task *task, stepkit_session *session)
{
    stepkit_session *back = NULL;
    char *saved = NULL, *again = NULL;
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &back), STEPKIT_OK);
    if (back) {
        CHECK_RC(stepkit_session_save(back, &again), STEPKIT_OK);
        CHECK_STR(again, saved);
    }
    stepkit_string_free(saved);
    stepkit_string_free(again);
    return back;
}

/* The state's "instances" entry for the repeating block `block` (a new reference the caller
 * decrefs), or NULL. */
static inline json_t *instances_of(stepkit_session *session, const char *block)
{
    json_t *state = state_of(session);
    json_t *entry = json_object_get(json_object_get(state, "instances"), block);
    json_incref(entry);
    json_decref(state);
    return entry;
}

/* An integer member ("count", "current", ...) of the state's "instances" entry for `block`. */
static inline json_int_t instances_int(stepkit_session *session, const char *block, const char *key)
{
    json_t *entry = instances_of(session, block);
    json_int_t n = json_integer_value(json_object_get(entry, key));
    json_decref(entry);
    return n;
}

/* What a refused call must leave as it was: the session's state and its restoration data, as
 * text (snapshot_of takes them, snapshot_free frees them). */
typedef struct {
    char *state;
    char *saved;
} check_snapshot;

static inline check_snapshot snapshot_of(stepkit_session *session)
{
    check_snapshot taken = {NULL, NULL};
    CHECK_RC(stepkit_session_state(session, &taken.state), STEPKIT_OK);
    CHECK_RC(stepkit_session_save(session, &taken.saved), STEPKIT_OK);
    return taken;
}

static inline void snapshot_free(check_snapshot *taken)
{
    stepkit_string_free(taken->state);
    stepkit_string_free(taken->saved);
    taken->state = taken->saved = NULL;
}

/* CHECKs that a call was refused: its status `rc` is `status`, the error JSON is well formed
 * with `code` as its first problem's code, and the state and the restoration data are still
 * those of `before`, byte for byte. */
static inline void check_call_refused(stepkit_session *session, int rc, int status, const char *code, check_snapshot before)
{
    check_snapshot now;
    json_t *error;
    CHECK(rc == status);
    error = check_last_error(status, stepkit_status_name(status), NULL);
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), code);
    json_decref(error);
    now = snapshot_of(session);
    CHECK_STR(now.state, before.state);
    CHECK_STR(now.saved, before.saved);
    snapshot_free(&now);
}

/* A call returning output JSON that must succeed; the output is discarded. */
#define CHECK_OK_OUT(call_with_out)                                                            \
    do {                                                                                       \
        char *out = NULL;                                                                      \
        CHECK_RC(call_with_out, STEPKIT_OK);                                                   \
        CHECK(out != NULL);                                                                    \
        stepkit_string_free(out);                                                              \
    } while (0)

/* A small survey used by the tests: instruction, a required boolean question, an optional
 * scale question, a form (a required integer item and an optional text item), a required text
 * question, completion. */
#define SURVEY_TASK                                                                            \
    "{\"identifier\": \"survey\", \"steps\": ["                                                \
    "{\"type\": \"instruction\", \"identifier\": \"intro\", \"title\": \"Welcome\"},"          \
    "{\"type\": \"question\", \"identifier\": \"smoker\", \"title\": \"Do you smoke?\","       \
    " \"answerFormat\": {\"type\": \"boolean\"}},"                                            \
    "{\"type\": \"question\", \"identifier\": \"mood\", \"title\": \"Mood\", \"optional\": true," \
    " \"answerFormat\": {\"type\": \"scale\", \"minimum\": 1, \"maximum\": 5}},"                \
    "{\"type\": \"form\", \"identifier\": \"about\", \"title\": \"About you\", \"formItems\": [" \
    "{\"identifier\": \"age\", \"text\": \"Age\", \"answerFormat\": {\"type\": \"numeric\","    \
    " \"style\": \"integer\", \"minimum\": 18, \"maximum\": 90, \"unit\": \"years\"}},"        \
    "{\"sectionTitle\": \"Optional\"},"                                                       \
    "{\"identifier\": \"notes\", \"text\": \"Notes\", \"optional\": true,"                     \
    " \"answerFormat\": {\"type\": \"text\", \"maximumLength\": 20}}]},"                        \
    "{\"type\": \"question\", \"identifier\": \"name\", \"title\": \"Your name\","            \
    " \"answerFormat\": {\"type\": \"text\"}},"                                               \
    "{\"type\": \"completion\", \"identifier\": \"done\", \"title\": \"Thank you\"}]}"

/* Walks a session of SURVEY_TASK from its first step to a "completed" finish, without CHECK (so
 * threads may call it). Returns 0, or the 1-based number of the call that failed. */
static inline int walk_survey(stepkit_session *session, const char *name_answer)
{
    char *out = NULL;
    int call = 0;
#define WALK_STEP(expr)                                                                        \
    do {                                                                                       \
        call++;                                                                                \
        if ((expr) != STEPKIT_OK || out == NULL)                                               \
            return call;                                                                       \
        stepkit_string_free(out);                                                              \
        out = NULL;                                                                            \
    } while (0)
    WALK_STEP(stepkit_session_go_forward(session, &out));                     /* intro */
    WALK_STEP(stepkit_session_set_answer(session, "true", &out));             /* smoker */
    WALK_STEP(stepkit_session_go_forward(session, &out));
    WALK_STEP(stepkit_session_skip(session, &out));                           /* mood */
    WALK_STEP(stepkit_session_set_answer(session, "{\"age\": 42, \"notes\": \"none\"}", &out));
    WALK_STEP(stepkit_session_go_forward(session, &out));                     /* about */
    WALK_STEP(stepkit_session_set_answer(session, name_answer, &out));        /* name */
    WALK_STEP(stepkit_session_go_forward(session, &out));
    WALK_STEP(stepkit_session_go_forward(session, &out));                     /* done */
#undef WALK_STEP
    return 0;
}

#endif
