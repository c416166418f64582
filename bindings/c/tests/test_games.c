/*
 * test_games.c — the predefined active tasks' games through the C ABI (stepkit_session_input,
 * docs/active-tasks.md), on a manual clock. Every expected value is worked out by hand from the
 * documented rules; the seeded sequences for seed 7 are those bindings/python/tests/test_games.py
 * draws with its own PCG32, written from docs/randomization.md (spatial span "span#game1" … :
 * 4 3 5 / 5 0 2 7 / 7 5 6 / 0 1 4 5; PSAT "psat#psat": 9 2 9 2 8; Stroop "stroop#stroop":
 * (red, blue) (yellow, blue) (red, yellow)). A game saved in the middle restores and finishes
 * with the same result; bad input is refused and changes nothing.
 */
#include <stdint.h>

#include "check.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00.000Z */

#define GAME_TASK(step)                                                                        \
    "{\"identifier\": \"games\", \"steps\": [" step ","                                        \
    " {\"type\": \"completion\", \"identifier\": \"done\"}]}"

struct manual_clock {
    int64_t now;
};

static int64_t manual_now(void *user_data)
{
    return ((struct manual_clock *)user_data)->now;
}

static stepkit_session *open_game(stepkit_task *task, struct manual_clock *clock)
{
    stepkit_session *session = open_ok(task, "{\"seed\": 7}");
    CHECK_RC(stepkit_session_set_clock(session, manual_now, clock), STEPKIT_OK);
    drain_events(session);
    return session;
}

/* One input at T0 + `at` that must be taken. */
static void send_ok(stepkit_session *session, struct manual_clock *clock, int64_t at, const char *input)
{
    char *out = NULL;
    clock->now = T0 + at;
    CHECK_RC(stepkit_session_input(session, input, &out), STEPKIT_OK);
    CHECK(out != NULL);
    stepkit_string_free(out);
}

/* The game's result object in the step result `step` (the caller decrefs), or NULL. */
static json_t *game_result(stepkit_session *session, const char *step)
{
    json_t *result = result_of(session), *found = NULL;
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(result, "results"), i, entry) {
        if (strcmp(json_str(entry, "identifier") ? json_str(entry, "identifier") : "", step) == 0)
            found = json_array_get(json_object_get(entry, "results"), 0);
    }
    if (found)
        json_incref(found);
    json_decref(result);
    return found;
}

/* CHECKs that the last error has `status` and its first problem the code `code`. */
static void check_refusal(int status, const char *code)
{
    json_t *error = check_last_error(status, stepkit_status_name(status), NULL);
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), code);
    json_decref(error);
}

static json_int_t int_of(const json_t *object, const char *key)
{
    return json_integer_value(json_object_get(object, key));
}

static const char *const SPAN = GAME_TASK("{\"type\": \"spatialSpanMemory\", \"identifier\": \"span\","
                                          " \"initialSpan\": 3, \"minimumSpan\": 2, \"maximumSpan\": 5,"
                                          " \"maximumTests\": 4, \"maximumConsecutiveFailures\": 2}");

static const struct { int64_t at; int target; } SPAN_TAPS[] = {
    {3500, 4}, {4000, 3}, {4500, 5},  /* game 1 [4 3 5], shown 0–3 s: success (span 3 → 4) */
    {9000, 5}, {9500, 1},             /* game 2 [5 0 2 7], shown 4.5–8.5 s: 1 is wrong (4 → 3) */
    {13000, 7}, {13500, 5}, {14000, 6}, /* game 3 [7 5 6], shown 9.5–12.5 s: success */
    {18500, 3},                       /* game 4 [0 1 4 5]: wrong; the fourth test ends it */
};

static void tap_span(stepkit_session *session, struct manual_clock *clock, size_t from, size_t to)
{
    char input[64];
    size_t i;
    for (i = from; i < to; i++) {
        snprintf(input, sizeof input, "{\"type\": \"tap\", \"target\": %d}", SPAN_TAPS[i].target);
        send_ok(session, clock, SPAN_TAPS[i].at, input);
    }
}

static void check_span_result(stepkit_session *session)
{
    json_t *r = game_result(session, "span"), *records, *second;
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK_STR(json_str(r, "type"), "spatialSpanMemory");
    CHECK(int_of(r, "score") == 95); /* ResearchKit's (round(log2 k) + 1) x 5 a right tap and a whole sequence: 45 + 5 + 45 */
    CHECK(int_of(r, "numberOfGames") == 4);
    CHECK(int_of(r, "numberOfFailures") == 2);
    records = json_object_get(r, "gameRecords");
    CHECK(json_array_size(records) == 4);
    CHECK_STR(json_str(json_array_get(records, 0), "gameStatus"), "success");
    CHECK_STR(json_str(json_array_get(records, 1), "gameStatus"), "failure");
    second = json_object_get(json_array_get(records, 1), "sequence");
    CHECK(json_array_size(second) == 4 && json_integer_value(json_array_get(second, 0)) == 5 &&
          json_integer_value(json_array_get(second, 1)) == 0 && json_integer_value(json_array_get(second, 2)) == 2 &&
          json_integer_value(json_array_get(second, 3)) == 7);
    CHECK(int_of(json_array_get(records, 1), "score") == 5);
    CHECK(int_of(json_array_get(records, 2), "score") == 45);
    CHECK(int_of(json_array_get(records, 0), "gameSize") == 9);
    json_decref(r);
}

static void test_spatial_span_from_recorded_taps(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(SPAN);
    stepkit_session *session = open_game(task, &clock);
    tap_span(session, &clock, 0, sizeof SPAN_TAPS / sizeof SPAN_TAPS[0]);
    CHECK_STEP(session, "done");
    check_span_result(session);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Saved after game 2's first tap, restored, finished: the same result as the run without. */
static void test_spatial_span_restores_mid_game(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(SPAN);
    stepkit_session *session = open_game(task, &clock), *restored = NULL;
    char *saved = NULL;
    tap_span(session, &clock, 0, 4);
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_clock(restored, manual_now, &clock), STEPKIT_OK);
    drain_events(restored);
    CHECK_SAME_STATE(restored, session);
    tap_span(restored, &clock, 4, sizeof SPAN_TAPS / sizeof SPAN_TAPS[0]);
    check_span_result(restored);
    stepkit_string_free(saved);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Bad input is refused with its status and code, and the state stays byte for byte. */
static void test_bad_input_changes_nothing(void)
{
    struct manual_clock clock = {T0 + 1000};
    stepkit_task *task = compile_ok(SPAN);
    stepkit_session *session = open_game(task, &clock);
    char *before = state_text(session), *after, *out = NULL;
    CHECK_FAILS(out, stepkit_session_input(session, NULL, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_input(NULL, "{\"type\": \"tap\", \"target\": 4}", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"tap\"", &out), STEPKIT_EPARSE);
    CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"tap\"}", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"poke\", \"target\": 4}", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"tap\", \"target\": 4}", &out), STEPKIT_EANSWER);
    check_refusal(STEPKIT_EANSWER, "sequencePlaying");
    clock.now = T0 + 3000;
    CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"tap\", \"target\": 40}", &out), STEPKIT_EANSWER);
    check_refusal(STEPKIT_EANSWER, "noSuchTarget");
    CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"tap\", \"target\": 4, \"time\": 1767225609000}", &out), STEPKIT_EINVAL);
    check_refusal(STEPKIT_EINVAL, "inputTime");
    clock.now = T0 + 1000;
    after = state_text(session);
    CHECK_STR(after, before);
    stepkit_string_free(before);
    stepkit_string_free(after);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_psat_with_windows_and_restore(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(GAME_TASK("{\"type\": \"psat\", \"identifier\": \"psat\", \"presentationMode\": \"visual\","
                                              " \"interStimulusInterval\": 2, \"seriesLength\": 4}"));
    stepkit_session *session = open_game(task, &clock), *restored = NULL;
    char *saved = NULL;
    json_t *r;
    send_ok(session, &clock, 2600, "{\"type\": \"key\", \"key\": \"11\"}"); /* 9 + 2, 0.6 s */
    clock.now = T0 + 6000;
    CHECK_OK_OUT(stepkit_session_tick(session, &out)); /* digit 2's window closed unanswered */
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_clock(restored, manual_now, &clock), STEPKIT_OK);
    drain_events(restored);
    send_ok(restored, &clock, 6400, "{\"type\": \"key\", \"key\": \"11\"}"); /* 9 + 2, 0.4 s */
    send_ok(restored, &clock, 8300, "{\"type\": \"tap\", \"target\": 10}");  /* 2 + 8, 0.3 s */
    CHECK_STEP(restored, "done");
    r = game_result(restored, "psat");
    CHECK(r != NULL);
    if (r) {
        CHECK(int_of(r, "initialDigit") == 9);
        CHECK(int_of(r, "totalCorrect") == 3);
        CHECK(int_of(r, "totalDyad") == 1);
        /* every sample's time, the missed digit its whole 2 s interval: 0.6 + 2 + 0.4 + 0.3 */
        CHECK(json_number_value(json_object_get(r, "totalTime")) > 3.3 - 1e-9 && json_number_value(json_object_get(r, "totalTime")) < 3.3 + 1e-9);
        CHECK(json_array_size(json_object_get(r, "samples")) == 4);
        CHECK(int_of(json_array_get(json_object_get(r, "samples"), 1), "answer") == -1);
    }
    json_decref(r);
    stepkit_string_free(saved);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_stroop_and_hanoi(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(GAME_TASK("{\"type\": \"stroop\", \"identifier\": \"stroop\", \"numberOfAttempts\": 3}"));
    stepkit_session *session = open_game(task, &clock);
    json_t *r;
    send_ok(session, &clock, 1000, "{\"type\": \"key\", \"key\": \"blue\"}"); /* print blue: right */
    send_ok(session, &clock, 2500, "{\"type\": \"tap\", \"target\": 0}");     /* red for blue: wrong */
    send_ok(session, &clock, 4000, "{\"type\": \"key\", \"key\": \"Y\"}");    /* yellow: right */
    r = game_result(session, "stroop");
    CHECK(r && int_of(r, "totalCorrect") == 2 && int_of(r, "numberOfAttempts") == 3);
    CHECK(r && strcmp(json_str(json_array_get(json_object_get(r, "attempts"), 1), "text"), "yellow") == 0);
    json_decref(r);
    stepkit_session_free(session);
    stepkit_task_free(task);

    task = compile_ok(GAME_TASK("{\"type\": \"towerOfHanoi\", \"identifier\": \"hanoi\", \"numberOfDisks\": 2}"));
    session = open_game(task, &clock);
    send_ok(session, &clock, 5000, "{\"type\": \"drag\", \"from\": 0, \"to\": 1}");
    {
        char *out = NULL;
        CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"drag\", \"from\": 0, \"to\": 1}", &out), STEPKIT_EANSWER);
        check_refusal(STEPKIT_EANSWER, "illegalMove");
    }
    send_ok(session, &clock, 6000, "{\"type\": \"drag\", \"from\": 0, \"to\": 2}");
    send_ok(session, &clock, 7000, "{\"type\": \"drag\", \"from\": 1, \"to\": 2}");
    r = game_result(session, "hanoi");
    CHECK(r && json_is_true(json_object_get(r, "puzzleWasSolved")));
    CHECK(r && json_array_size(json_object_get(r, "moves")) == 3);
    json_decref(r);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* The session saved and restored onto the same clock, its state checked to be the saved one. */
static stepkit_session *save_and_restore(stepkit_task *task, stepkit_session *session, struct manual_clock *clock)
{
    stepkit_session *restored = NULL;
    char *saved = NULL;
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
    stepkit_string_free(saved);
    CHECK_RC(stepkit_session_set_clock(restored, manual_now, clock), STEPKIT_OK);
    drain_events(restored);
    CHECK_SAME_STATE(restored, session);
    return restored;
}

/* Trail making, trail B, seed 7: the layout is the one test_games.py draws ("trail#trailmaking":
 * cells 4 18 5 7 16 12 6 13 19 17 2 21 9 of the 4 × 6 grid); two errors (target 2 when 1 was
 * next, 6 when 5 was), saved after the seventh tap, restored, finished. */
static const char *const TRAIL = GAME_TASK("{\"type\": \"trailmaking\", \"identifier\": \"trail\", \"trailType\": \"B\"}");

static const struct { int64_t at; int target; } TRAIL_TAPS[] = {
    {1000, 0}, {1800, 2}, {2500, 1}, {3000, 2}, {3500, 3}, {4000, 4}, {4200, 6}, {4500, 5},
    {5000, 6}, {5500, 7}, {6000, 8}, {6500, 9}, {7000, 10}, {7500, 11}, {8000, 12},
};

static void tap_trail(stepkit_session *session, struct manual_clock *clock, size_t from, size_t to)
{
    char input[64];
    size_t i;
    for (i = from; i < to; i++) {
        snprintf(input, sizeof input, "{\"type\": \"tap\", \"target\": %d}", TRAIL_TAPS[i].target);
        send_ok(session, clock, TRAIL_TAPS[i].at, input);
    }
}

static void test_trailmaking_layout_errors_and_restore(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(TRAIL);
    stepkit_session *session = open_game(task, &clock), *restored = NULL;
    json_t *state = state_of(session), *targets, *r, *taps;
    char *out = NULL;
    size_t i;
    targets = json_object_get(json_object_get(json_object_get(state, "active"), "game"), "targets");
    CHECK(json_array_size(targets) == 13);
    CHECK_STR(json_str(json_array_get(targets, 1), "label"), "A");
    CHECK_STR(json_str(json_array_get(targets, 12), "label"), "7");
    /* cell 4: column 0, row 1; cell 18: column 2, row 4 */
    CHECK(json_number_value(json_object_get(json_array_get(targets, 0), "x")) == 0.125);
    CHECK(json_number_value(json_object_get(json_array_get(targets, 0), "y")) == 0.25);
    CHECK(json_number_value(json_object_get(json_array_get(targets, 1), "x")) == 0.625);
    CHECK(json_number_value(json_object_get(json_array_get(targets, 1), "y")) == 0.75);
    json_decref(state);
    clock.now = T0 + 500;
    CHECK_FAILS(out, stepkit_session_input(session, "{\"type\": \"tap\", \"target\": 13}", &out), STEPKIT_EANSWER);
    check_refusal(STEPKIT_EANSWER, "noSuchTarget");
    tap_trail(session, &clock, 0, 7);
    restored = save_and_restore(task, session, &clock);
    tap_trail(restored, &clock, 7, sizeof TRAIL_TAPS / sizeof TRAIL_TAPS[0]);
    CHECK_STEP(restored, "done");
    r = game_result(restored, "trail");
    CHECK(r != NULL);
    if (r) {
        CHECK_STR(json_str(r, "type"), "trailmaking");
        CHECK_STR(json_str(r, "trailType"), "B");
        CHECK(int_of(r, "numberOfErrors") == 2);
        taps = json_object_get(r, "taps");
        CHECK(json_array_size(taps) == 15);
        for (i = 0; i < json_array_size(taps); i++) {
            json_t *tap = json_array_get(taps, i);
            CHECK(int_of(tap, "index") == TRAIL_TAPS[i].target);
            CHECK(json_number_value(json_object_get(tap, "timestamp")) == (double)TRAIL_TAPS[i].at / 1000);
            CHECK(json_is_true(json_object_get(tap, "incorrect")) == (i == 1 || i == 6));
        }
    }
    json_decref(r);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Reaction time, seed 7: the delays test_games_motor.py draws ("rt#reactionTime", 2000 + a
 * number below 2001 ms: 3973, 2142, 2358, 3146). An early movement at 2 s restarts the wait
 * (stimulus 4.142 s), a response 0.35 s after it, a timeout of attempt 2 (stimulus 6.85 s, timed
 * out at 8.35 s), saved there, restored, and attempt 3 answered 0.2 s after its stimulus at
 * 11.496 s. */
static void test_reaction_time(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(GAME_TASK("{\"type\": \"reactionTime\", \"identifier\": \"rt\", \"minimumStimulusInterval\": 2,"
                                              " \"maximumStimulusInterval\": 4, \"timeout\": 1.5, \"numberOfAttempts\": 3,"
                                              " \"thresholdAcceleration\": 0.5, \"successSound\": 1013}"));
    stepkit_session *session = open_game(task, &clock), *restored = NULL;
    json_t *r, *attempts, *state;
    static const double stimulus[] = {4.142, 6.85, 11.496}, delay[] = {2.142, 2.358, 3.146}, response[] = {0.35, -1, 0.2};
    size_t i;
    send_ok(session, &clock, 1000, "{\"type\": \"sample\", \"x\": 0.1, \"y\": 0.1, \"z\": 0.1}");
    send_ok(session, &clock, 2000, "{\"type\": \"sample\", \"x\": 0.5, \"y\": 0, \"z\": 0}");
    clock.now = T0 + 4142;
    CHECK_OK_OUT(stepkit_session_tick(session, &out));
    send_ok(session, &clock, 4492, "{\"type\": \"sample\", \"x\": 0, \"y\": 0, \"z\": -0.8}");
    state = state_of(session);
    CHECK(int_of(json_object_get(json_object_get(json_object_get(state, "active"), "game"), "lastOutcome"), "sound") == 1013);
    json_decref(state);
    clock.now = T0 + 8350;
    CHECK_OK_OUT(stepkit_session_tick(session, &out));
    restored = save_and_restore(task, session, &clock);
    send_ok(restored, &clock, 11696, "{\"type\": \"sample\", \"x\": 0.6, \"y\": 0, \"z\": 0}");
    CHECK_STEP(restored, "done");
    r = game_result(restored, "rt");
    CHECK(r != NULL);
    if (r) {
        CHECK(int_of(r, "numberOfAttempts") == 3);
        CHECK(int_of(r, "numberOfTimeouts") == 1);
        attempts = json_object_get(r, "attempts");
        CHECK(json_array_size(attempts) == 3);
        for (i = 0; i < 3 && i < json_array_size(attempts); i++) {
            json_t *a = json_array_get(attempts, i), *rt = json_object_get(a, "responseTime");
            CHECK(json_number_value(json_object_get(a, "timestamp")) == stimulus[i]);
            CHECK(json_number_value(json_object_get(a, "stimulusDelay")) == delay[i]);
            CHECK(response[i] < 0 ? json_is_null(rt) : json_number_value(rt) == response[i]);
            CHECK(json_is_true(json_object_get(a, "timedOut")) == (response[i] < 0));
            CHECK(int_of(a, "earlyResponses") == (i == 0));
        }
    }
    json_decref(r);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* The verify report for `result` (a JSON tree, borrowed) against `task`. */
static json_t *verify_report(stepkit_task *task, json_t *result)
{
    char *text = json_dumps(result, JSON_COMPACT), *out = NULL;
    json_error_t error;
    json_t *report;
    CHECK_RC(stepkit_task_verify_result(task, text, NULL, &out), STEPKIT_OK);
    report = out ? json_loads(out, 0, &error) : NULL;
    CHECK(report != NULL);
    stepkit_string_free(out);
    free(text);
    return report;
}

/* The report has exactly one divergence, `code` at `path`. */
static void check_one_divergence(json_t *report, const char *code, const char *path)
{
    json_t *list = json_object_get(report, "divergences");
    CHECK(json_is_false(json_object_get(report, "verified")));
    CHECK(json_array_size(list) == 1);
    CHECK_STR(json_str(json_array_get(list, 0), "code"), code);
    CHECK_STR(json_str(json_array_get(list, 0), "path"), path);
}

/* Verify recomputes a game from the inputs its result records (issue 35): the genuine result
 * verifies, its recorded inputs are the ones sent (at their step times), and a forged field,
 * a forged recorded input or a result without its recording is refused, naming the field. */
static void test_verify_recomputes_the_game(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(GAME_TASK("{\"type\": \"stroop\", \"identifier\": \"stroop\", \"numberOfAttempts\": 3}"));
    stepkit_session *session = open_game(task, &clock);
    json_t *result, *game, *report, *inputs;
    send_ok(session, &clock, 1000, "{\"type\": \"key\", \"key\": \"blue\"}"); /* print blue: right */
    send_ok(session, &clock, 2500, "{\"type\": \"tap\", \"target\": 0}");     /* red for blue: wrong */
    send_ok(session, &clock, 4000, "{\"type\": \"key\", \"key\": \"Y\"}");    /* yellow: right */
    result = result_of(session);
    game = json_array_get(json_object_get(json_array_get(json_object_get(result, "results"), 0), "results"), 0);
    CHECK(int_of(game, "totalCorrect") == 2);
    inputs = json_object_get(json_object_get(game, "recorded"), "inputs");
    CHECK(json_array_size(inputs) == 3);
    CHECK(int_of(json_array_get(inputs, 0), "at") == 1000 && strcmp(json_str(json_array_get(inputs, 0), "key"), "blue") == 0);
    CHECK(int_of(json_array_get(inputs, 1), "at") == 2500 && int_of(json_array_get(inputs, 1), "target") == 0);
    CHECK(int_of(json_object_get(game, "recorded"), "time") == 4000);

    report = verify_report(task, result);
    CHECK(json_is_true(json_object_get(report, "verified")));
    json_decref(report);

    /* a forged score */
    json_object_set_new(game, "totalCorrect", json_integer(3));
    report = verify_report(task, result);
    check_one_divergence(report, "gameMismatch", "results[0].results[0].totalCorrect");
    json_decref(report);
    json_object_set_new(game, "totalCorrect", json_integer(2));

    /* a recorded input changed (the wrong tap made right, red -> blue): the fields no longer follow */
    json_object_set_new(json_array_get(inputs, 1), "target", json_integer(2));
    report = verify_report(task, result);
    CHECK(json_is_false(json_object_get(report, "verified")));
    CHECK(json_array_size(json_object_get(report, "divergences")) == 2); /* totalCorrect and attempts */
    CHECK_STR(json_str(json_array_get(json_object_get(report, "divergences"), 0), "path"), "results[0].results[0].totalCorrect");
    CHECK_STR(json_str(json_array_get(json_object_get(report, "divergences"), 1), "path"), "results[0].results[0].attempts");
    json_decref(report);

    /* no recording: the fields cannot be recomputed */
    json_object_del(game, "recorded");
    report = verify_report(task, result);
    check_one_divergence(report, "gameMismatch", "results[0].results[0].recorded");
    json_decref(report);

    json_decref(result);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Two-finger tapping: the engine's buttons are x 50-150 and 225-325, y 517-617 (left and top
 * edges in); the test runs 2 s from the first touch on a button (1 s), so a touch at 3 s is
 * refused; saved after the third touch, restored, finished by a tick at the end. */
static void test_tapping_interval(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(GAME_TASK("{\"type\": \"tappingInterval\", \"identifier\": \"tap\", \"duration\": 2}"));
    stepkit_session *session = open_game(task, &clock), *restored = NULL;
    char *out = NULL;
    json_t *r, *samples;
    static const char *const buttons[] = {"left", "right", "none", "left", "right"};
    size_t i;
    send_ok(session, &clock, 500, "{\"type\": \"touch\", \"x\": 10, \"y\": 10}");              /* before the start, on neither */
    send_ok(session, &clock, 1000, "{\"type\": \"touch\", \"x\": 60, \"y\": 520}");            /* left: starts */
    send_ok(session, &clock, 1200, "{\"type\": \"touch\", \"x\": 300, \"y\": 600, \"duration\": 80}"); /* right */
    restored = save_and_restore(task, session, &clock);
    send_ok(restored, &clock, 1400, "{\"type\": \"touch\", \"x\": 150, \"y\": 560}");          /* the right edge: none */
    send_ok(restored, &clock, 1600, "{\"type\": \"touch\", \"x\": 50, \"y\": 517}");           /* the corner: left */
    send_ok(restored, &clock, 2999, "{\"type\": \"touch\", \"x\": 324.5, \"y\": 616.5}");      /* right */
    clock.now = T0 + 3000;
    CHECK_FAILS(out, stepkit_session_input(restored, "{\"type\": \"touch\", \"x\": 60, \"y\": 520}", &out), STEPKIT_EANSWER);
    check_refusal(STEPKIT_EANSWER, "gameOver");
    CHECK_OK_OUT(stepkit_session_tick(restored, &out));
    CHECK_STEP(restored, "done");
    r = game_result(restored, "tap");
    CHECK(r != NULL);
    if (r) {
        CHECK(int_of(r, "totalTaps") == 4 && int_of(r, "leftTaps") == 2 && int_of(r, "rightTaps") == 2);
        CHECK(json_number_value(json_object_get(json_object_get(r, "stepViewSize"), "width")) == 375);
        CHECK(json_number_value(json_object_get(json_object_get(r, "buttonRect2"), "x")) == 225);
        samples = json_object_get(r, "samples");
        CHECK(json_array_size(samples) == 5);
        for (i = 0; i < 5 && i < json_array_size(samples); i++)
            CHECK_STR(json_str(json_array_get(samples, i), "buttonIdentifier"), buttons[i]);
        CHECK(json_number_value(json_object_get(json_array_get(samples, 1), "duration")) == 0.08);
        CHECK(json_number_value(json_object_get(json_array_get(samples, 4), "timestamp")) == 2.999);
        CHECK(json_number_value(json_object_get(json_object_get(json_array_get(samples, 4), "location"), "x")) == 324.5);
    }
    json_decref(r);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Hole peg, placing 3 pegs leftwards into a hole turned 90 degrees (threshold 0.2: 0.2 board
 * units, 18 degrees): from (0.75, 0.5) to the hole at (0.25, 0.5). */
static void test_hole_peg(void)
{
    struct manual_clock clock = {T0};
    stepkit_task *task = compile_ok(GAME_TASK("{\"type\": \"holePegTestPlace\", \"identifier\": \"peg\", \"numberOfPegs\": 3, \"rotated\": true}"));
    stepkit_session *session = open_game(task, &clock), *restored = NULL;
    json_t *r, *samples;
    send_ok(session, &clock, 1000, "{\"type\": \"touch\", \"x\": 0.25, \"y\": 0.5, \"rotation\": 90}");   /* success: 1 s, 0.5 */
    send_ok(session, &clock, 2500, "{\"type\": \"touch\", \"x\": 0.25, \"y\": 0.75, \"rotation\": 90}");  /* 0.25 away: failure */
    restored = save_and_restore(task, session, &clock);
    send_ok(restored, &clock, 3000, "{\"type\": \"touch\", \"x\": 0.375, \"y\": 0.5, \"rotation\": 30}");  /* 60 degrees off: failure */
    send_ok(restored, &clock, 4000, "{\"type\": \"touch\", \"x\": 0.375, \"y\": 0.5, \"rotation\": 460}"); /* success: 3 s, 0.375 */
    send_ok(restored, &clock, 4500, "{\"type\": \"touch\", \"x\": 0.25, \"y\": 0.5, \"rotation\": -270}"); /* success: 0.5 s, 0.5 */
    CHECK_STEP(restored, "done");
    r = game_result(restored, "peg");
    CHECK(r != NULL);
    if (r) {
        CHECK_STR(json_str(r, "type"), "holePegTestPlace");
        CHECK(int_of(r, "totalSuccesses") == 3 && int_of(r, "totalFailures") == 2);
        CHECK(json_number_value(json_object_get(r, "totalTime")) == 4.5);
        CHECK(json_number_value(json_object_get(r, "totalDistance")) == 1.375);
        samples = json_object_get(r, "samples");
        CHECK(json_array_size(samples) == 3);
        CHECK(json_number_value(json_object_get(json_array_get(samples, 1), "time")) == 3);
        CHECK(json_number_value(json_object_get(json_array_get(samples, 1), "distance")) == 0.375);
    }
    json_decref(r);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_spatial_span_from_recorded_taps);
    RUN(test_spatial_span_restores_mid_game);
    RUN(test_bad_input_changes_nothing);
    RUN(test_psat_with_windows_and_restore);
    RUN(test_stroop_and_hanoi);
    RUN(test_trailmaking_layout_errors_and_restore);
    RUN(test_reaction_time);
    RUN(test_verify_recomputes_the_game);
    RUN(test_tapping_interval);
    RUN(test_hole_peg);
    return check_report();
}
