/*
 * test_active.c — active steps through the C ABI, on a manual clock: a countdown that starts by
 * itself and moves on when its time is up (stepkit_session_tick), an active step the host
 * starts, suspends and resumes (stepkit_session_active), a recorder fed with samples
 * (stepkit_session_record) whose file becomes a file result; exact restore of a running step
 * when the host sets its clock after the restore; host clocks at INT64_MIN, INT64_MAX and jumps
 * back (issue #11: none may trap).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define ACTIVE_TASK                                                                            \
    "{\"identifier\": \"walk\", \"steps\": ["                                                  \
    "{\"type\": \"instruction\", \"identifier\": \"intro\", \"title\": \"A short walk\"},"     \
    "{\"type\": \"countdown\", \"identifier\": \"countdown\", \"stepDuration\": 3},"           \
    "{\"type\": \"active\", \"identifier\": \"walking\", \"title\": \"Walk\", \"stepDuration\": 10," \
    " \"recorderConfigurations\": [{\"type\": \"accelerometer\", \"identifier\": \"acc\"}]},"  \
    "{\"type\": \"completion\", \"identifier\": \"done\", \"title\": \"Thank you\"}]}"

#define T0 1767225600000LL /* 2026-01-01T00:00:00.000Z */

struct manual_clock {
    int64_t now;
};

static int64_t manual_now(void *user_data)
{
    return ((struct manual_clock *)user_data)->now;
}

/* The state's active.status, or "" (the caller frees). */
static char *active_status(json_t *state)
{
    const char *status = json_str(json_object_get(state, "active"), "status");
    char *copy = malloc(strlen(status ? status : "") + 1);
    if (copy)
        strcpy(copy, status ? status : "");
    return copy;
}

#define CHECK_ACTIVE(state, expected)                                                          \
    do {                                                                                       \
        char *check_status_ = active_status(state);                                           \
        CHECK_STR(check_status_, expected);                                                    \
        free(check_status_);                                                                   \
    } while (0)

/* Calls `call` (using `out`), which must succeed, and returns its state parsed. */
#define STATE_AFTER(call, state)                                                               \
    do {                                                                                       \
        char *out = NULL;                                                                      \
        CHECK_RC(call, STEPKIT_OK);                                                            \
        state = out ? parse_json(out) : NULL;                                                  \
        stepkit_string_free(out);                                                              \
    } while (0)

/* Whether the state's events include one of `type`. */
static int has_event(json_t *state, const char *type)
{
    json_t *events = json_object_get(state, "events");
    size_t i;
    for (i = 0; i < json_array_size(events); i++) {
        const char *t = json_str(json_array_get(events, i), "type");
        if (t && strcmp(t, type) == 0)
            return 1;
    }
    return 0;
}

static void remove_tree(const char *directory)
{
    DIR *dir = opendir(directory);
    struct dirent *entry;
    char path[512];
    if (!dir)
        return;
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        sprintf(path, "%.300s/%.200s", directory, entry->d_name);
        unlink(path);
    }
    closedir(dir);
    rmdir(directory);
}

static void test_countdown_and_active_step(void)
{
    char directory[] = "/tmp/stepkit-active.XXXXXX";
    char options[256];
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(ACTIVE_TASK);
    stepkit_session *session;
    json_t *state;
    json_t *result;

    if (!mkdtemp(directory)) {
        CHECK(!"mkdtemp failed");
        stepkit_task_free(task);
        return;
    }
    sprintf(options, "{\"outputDirectory\": \"%s\"}", directory);
    session = open_ok(task, options);
    CHECK_RC(stepkit_session_set_clock(session, manual_now, &clock), STEPKIT_OK);

    /* Not an active step: the ops do not apply; an unknown op is invalid. */
    {
        char *out;
        CHECK_FAILS(out, stepkit_session_active(session, "start", &out), STEPKIT_ESTATE);
        CHECK_FAILS(out, stepkit_session_active(session, "jump", &out), STEPKIT_EINVAL);
        CHECK_FAILS(out, stepkit_session_record(session, "acc", "{\"x\": 1}", &out), STEPKIT_ESTATE);
    }
    /* Nothing due: tick is harmless. */
    STATE_AFTER(stepkit_session_tick(session, &out), state);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "intro");
    CHECK(json_is_null(json_object_get(state, "active")));
    json_decref(state);

    /* The countdown starts by itself, with a deadline 3 s away. */
    STATE_AFTER(stepkit_session_go_forward(session, &out), state);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "countdown");
    CHECK_ACTIVE(state, "running");
    CHECK_STR(json_str(state, "nextDeadline"), "2026-01-01T00:00:03.000Z");
    CHECK(has_event(state, "activeStepStarted"));
    json_decref(state);
    {
        char *out;
        CHECK_FAILS(out, stepkit_session_go_forward(session, &out), STEPKIT_ESTATE); /* not finished */
    }
    clock.now = T0 + 2000;
    STATE_AFTER(stepkit_session_tick(session, &out), state);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "countdown");
    json_decref(state);

    /* Its time is up: it finishes and moves on to the active step, which waits for the host. */
    clock.now = T0 + 3000;
    STATE_AFTER(stepkit_session_tick(session, &out), state);
    CHECK(has_event(state, "activeStepFinished"));
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "walking");
    CHECK_ACTIVE(state, "prepared");
    json_decref(state);

    /* Start, record, suspend (time stops), resume. */
    clock.now = T0 + 4000;
    STATE_AFTER(stepkit_session_active(session, "start", &out), state);
    CHECK_ACTIVE(state, "running");
    CHECK(has_event(state, "recorderStarted"));
    CHECK_STR(json_str(state, "nextDeadline"), "2026-01-01T00:00:14.000Z");
    json_decref(state);
    STATE_AFTER(stepkit_session_record(session, "acc", "[{\"x\": 0.1, \"y\": 0.2, \"z\": 9.8}]", &out), state);
    json_decref(state);
    {
        char *out;
        CHECK_FAILS(out, stepkit_session_record(session, "acc", "[{\"x\": ", &out), STEPKIT_EPARSE);
        CHECK_FAILS(out, stepkit_session_record(session, "gyro", "{\"x\": 1}", &out), STEPKIT_ESTATE);
    }
    clock.now = T0 + 6000; /* 2 s of walking */
    STATE_AFTER(stepkit_session_active(session, "suspend", &out), state);
    CHECK_ACTIVE(state, "suspended");
    json_decref(state);
    clock.now = T0 + 60000; /* suspended: does not count */
    STATE_AFTER(stepkit_session_tick(session, &out), state);
    CHECK_ACTIVE(state, "suspended");
    json_decref(state);
    STATE_AFTER(stepkit_session_active(session, "resume", &out), state);
    CHECK_ACTIVE(state, "running");
    CHECK_STR(json_str(state, "nextDeadline"), "2026-01-01T00:01:08.000Z"); /* 8 s left */
    json_decref(state);
    STATE_AFTER(stepkit_session_record(session, "acc", "{\"x\": 0.3, \"y\": 0.1, \"z\": 9.7}", &out), state);
    json_decref(state);

    /* Its time is up: it finishes but stays (shouldContinueOnFinish is false for "active"). */
    clock.now = T0 + 68000;
    STATE_AFTER(stepkit_session_tick(session, &out), state);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "walking");
    CHECK_ACTIVE(state, "finished");
    CHECK(has_event(state, "recorderStopped"));
    json_decref(state);
    {
        char *out;
        CHECK_FAILS(out, stepkit_session_active(session, "suspend", &out), STEPKIT_ESTATE);
    }
    STATE_AFTER(stepkit_session_go_forward(session, &out), state);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "done");
    json_decref(state);
    STATE_AFTER(stepkit_session_go_forward(session, &out), state);
    CHECK_STR(json_str(state, "finishReason"), "completed");
    json_decref(state);

    /* The recorder's file is a file result of the active step, and it is on disk, as JSON. */
    {
        char *out = NULL;
        CHECK_RC(stepkit_session_result(session, &out), STEPKIT_OK);
        result = parse_json(out);
        stepkit_string_free(out);
    }
    {
        json_t *steps = json_object_get(result, "results");
        json_t *walking = NULL;
        json_t *file = NULL;
        size_t i;
        for (i = 0; i < json_array_size(steps); i++)
            if (strcmp(json_str(json_array_get(steps, i), "identifier") ? json_str(json_array_get(steps, i), "identifier") : "",
                       "walking") == 0)
                walking = json_array_get(steps, i);
        CHECK(walking != NULL);
        file = json_array_get(json_object_get(walking, "results"), 0);
        CHECK_STR(json_str(file, "type"), "file");
        CHECK_STR(json_str(file, "contentType"), "application/json");
        CHECK(json_str(file, "fileName") != NULL);
        if (json_str(file, "fileName")) {
            char path[512];
            json_t *content;
            json_error_t error;
            const char *name = json_str(file, "fileName");
            const char *base = strrchr(name, '/');
            sprintf(path, "%.300s/%.200s", directory, base ? base + 1 : name);
            content = json_load_file(path, 0, &error);
            CHECK(content != NULL);
            CHECK(json_array_size(json_object_get(content, "items")) == 2);
            json_decref(content);
        }
    }
    json_decref(result);

    stepkit_session_free(session);
    stepkit_task_free(task);
    remove_tree(directory);
}

/* The system clock in milliseconds (what stepkit_session_restore() anchors a restored run on). */
static int64_t system_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Opens the walk on a manual clock with "walking" started and run for 4 s. */
static stepkit_session *walking_session(stepkit_task *task, struct manual_clock *clock, const char *directory)
{
    char options[320];
    stepkit_session *session;
    sprintf(options, "{\"outputDirectory\": \"%.200s\", \"continueOnRecorderFailure\": true}", directory);
    session = open_ok(task, options);
    CHECK_RC(stepkit_session_set_clock(session, manual_now, clock), STEPKIT_OK);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    clock->now += 3000;
    CHECK_OK_OUT(stepkit_session_tick(session, &out));
    CHECK_STEP(session, "walking");
    CHECK_OK_OUT(stepkit_session_active(session, "start", &out));
    clock->now += 4000;
    drain_events(session);
    return session;
}

/* Restore, then the system clock moves on (the test waits until it has, by at least 3 ms: not a
 * sleep that hopes, a condition), then the host sets its clock: the state and the restoration
 * data written again equal the saved ones, byte for byte. Before the fix the restored step had
 * run for the milliseconds between the restore and set_clock. */
static void test_restore_is_exact_when_the_clock_is_set_later(void)
{
    char directory[] = "/tmp/stepkit-active.XXXXXX";
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(ACTIVE_TASK);
    stepkit_session *session, *restored = NULL;
    char *saved = NULL, *again = NULL;
    int64_t mark;

    if (!mkdtemp(directory)) {
        CHECK(!"mkdtemp failed");
        stepkit_task_free(task);
        return;
    }
    session = walking_session(task, &clock, directory);
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, "{\"continueOnRecorderFailure\": true}", &restored), STEPKIT_OK);
    mark = system_ms();
    while (system_ms() - mark < 3) {
    }
    CHECK_RC(stepkit_session_set_clock(restored, manual_now, &clock), STEPKIT_OK);
    drain_events(restored);
    CHECK_SAME_STATE(restored, session);
    CHECK_RC(stepkit_session_save(restored, &again), STEPKIT_OK);
    CHECK_STR(again, saved);
    stepkit_string_free(again);
    /* Both go on alike: 6 s later the step's 10 s are up on both. */
    clock.now += 6000;
    CHECK_OK_OUT(stepkit_session_tick(session, &out));
    CHECK_OK_OUT(stepkit_session_tick(restored, &out));
    CHECK_SAME_STATE(restored, session);
    {
        json_t *state = state_of(restored);
        CHECK_ACTIVE(state, "finished");
        json_decref(state);
    }
    stepkit_string_free(saved);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
    remove_tree(directory);
}

/* Every call succeeds and returns JSON whatever the host clock says (issue #11: a running step,
 * a clock at a very negative value; suspend at INT64_MAX, resume at -2e12, tick). */
static void test_extreme_clocks_never_trap(void)
{
    static const int64_t values[] = {INT64_MIN, -2000000000000LL, 0, INT64_MIN + 1, T0 - 1, INT64_MAX, INT64_MAX - 1, T0};
    char directory[] = "/tmp/stepkit-active.XXXXXX";
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(ACTIVE_TASK);
    stepkit_session *session;
    size_t i;

    if (!mkdtemp(directory)) {
        CHECK(!"mkdtemp failed");
        stepkit_task_free(task);
        return;
    }
    session = walking_session(task, &clock, directory);
    /* Jumps back: the running step counts no time while the clock is behind its start. */
    for (i = 0; values[i] != INT64_MAX; i++) {
        json_t *state;
        clock.now = values[i];
        STATE_AFTER(stepkit_session_tick(session, &out), state);
        CHECK_ACTIVE(state, "running");
        json_decref(state);
    }
    clock.now = INT64_MAX;
    CHECK_OK_OUT(stepkit_session_active(session, "suspend", &out));
    clock.now = -2000000000000LL;
    CHECK_OK_OUT(stepkit_session_active(session, "resume", &out));
    {
        json_t *state;
        STATE_AFTER(stepkit_session_tick(session, &out), state);
        CHECK_ACTIVE(state, "finished");
        CHECK(has_event(state, "activeStepFinished"));
        /* Not wrapped around, and not before the run's latest date (the step's start): the
         * session's time never goes back, so a clock far behind reads as that date. */
        CHECK_STR(json_str(json_array_get(json_object_get(state, "events"), 0), "date"), "2026-01-01T00:00:03.000Z");
        json_decref(state);
    }
    /* Every value, with a save and restore at each. */
    for (i = 0; i < sizeof values / sizeof values[0]; i++) {
        char *saved = NULL;
        stepkit_session *restored = NULL;
        clock.now = values[i];
        CHECK_OK_OUT(stepkit_session_tick(session, &out));
        CHECK_OK_OUT(stepkit_session_state(session, &out));
        CHECK_OK_OUT(stepkit_session_result(session, &out));
        CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
        CHECK_RC(stepkit_session_restore(task, saved, "{\"continueOnRecorderFailure\": true}", &restored), STEPKIT_OK);
        CHECK_RC(stepkit_session_set_clock(restored, manual_now, &clock), STEPKIT_OK);
        CHECK_OK_OUT(stepkit_session_tick(restored, &out));
        stepkit_string_free(saved);
        stepkit_session_free(restored);
    }
    clock.now = INT64_MIN;
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_result(session, &out));
    stepkit_session_free(session);
    stepkit_task_free(task);
    remove_tree(directory);
}

int main(void)
{
    RUN(test_countdown_and_active_step);
    RUN(test_restore_is_exact_when_the_clock_is_set_later);
    RUN(test_extreme_clocks_never_trap);
    return check_report();
}
