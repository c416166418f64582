/*
 * test_sensed_games.c — range of motion, the Amsler grid and tone audiometry through the C ABI
 * (stepkit_session_input, docs/active-tasks.md), on a manual clock. Each game is played from a
 * script of inputs, once straight through and once saved and restored in the middle; both must
 * give the result worked out by hand from the documented rules. Refused inputs must leave the
 * state byte for byte. And a sensor task template's expansion, read with stepkit_task_info.
 */
#include <math.h>
#include <stdint.h>

#include "check.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00.000Z */
#define PI 3.14159265358979323846

/* One line of a script: at T0 + at, the input; `refused` names the code it must be refused with
 * (NULL: it must be taken). */
struct line {
    int64_t at;
    const char *input;
    const char *refused;
};

struct player {
    int64_t now;
    stepkit_task *task;
    stepkit_session *session;
};

static int64_t player_now(void *user_data)
{
    return ((struct player *)user_data)->now;
}

static void player_open(struct player *p, const char *game_step)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"identifier\": \"games\", \"steps\": [%s, {\"type\": \"completion\", \"identifier\": \"done\"}]}",
             game_step);
    p->now = T0;
    p->task = compile_ok(text);
    p->session = open_ok(p->task, "{\"seed\": 7}");
    CHECK_RC(stepkit_session_set_clock(p->session, player_now, p), STEPKIT_OK);
    drain_events(p->session);
}

/* The session replaced by its own save, restored (the state must stay the same). */
static void player_save_and_restore(struct player *p)
{
    stepkit_session *restored = NULL;
    char *saved = NULL;
    CHECK_RC(stepkit_session_save(p->session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(p->task, saved, NULL, &restored), STEPKIT_OK);
    stepkit_string_free(saved);
    if (!restored)
        return;
    CHECK_RC(stepkit_session_set_clock(restored, player_now, p), STEPKIT_OK);
    drain_events(restored);
    CHECK_SAME_STATE(restored, p->session);
    stepkit_session_free(p->session);
    p->session = restored;
}

/* Plays lines [from, to) of the script. */
static void player_play(struct player *p, const struct line *script, size_t from, size_t to)
{
    size_t i;
    for (i = from; i < to; i++) {
        char *out = NULL, *before = NULL, *after = NULL;
        json_t *error;
        p->now = T0 + script[i].at;
        if (!script[i].refused) {
            CHECK_RC(stepkit_session_input(p->session, script[i].input, &out), STEPKIT_OK);
            stepkit_string_free(out);
            continue;
        }
        before = state_text(p->session);
        CHECK(stepkit_session_input(p->session, script[i].input, &out) == STEPKIT_EANSWER);
        error = parse_json(stepkit_last_error());
        CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), script[i].refused);
        json_decref(error);
        after = state_text(p->session);
        CHECK(before && after && strcmp(before, after) == 0);
        stepkit_string_free(before);
        stepkit_string_free(after);
    }
}

static void player_close(struct player *p)
{
    stepkit_session_free(p->session);
    stepkit_task_free(p->task);
}

/* The game's result object of step `step` (the caller decrefs), or NULL. */
static json_t *player_result(struct player *p, const char *step)
{
    json_t *result = result_of(p->session), *found = NULL, *entry;
    size_t i;
    json_array_foreach(json_object_get(result, "results"), i, entry) {
        const char *id = json_str(entry, "identifier");
        if (id && strcmp(id, step) == 0)
            found = json_array_get(json_object_get(entry, "results"), 0);
    }
    if (found)
        json_incref(found);
    json_decref(result);
    return found;
}

static double number_of(const json_t *object, const char *key)
{
    const json_t *v = json_object_get(object, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

#define CHECK_NEAR(actual, expected) CHECK(fabs((actual) - (expected)) < 1e-9)

/* ---- range of motion --------------------------------------------------------------------- */

static const char ROM[] = "{\"type\": \"rangeOfMotion\", \"identifier\": \"rom\", \"joint\": \"knee\"}";

/* 85 and 15 degrees given directly, the quaternion (0.6, 0, 0, 0.8), whose angle is
 * atan2(2 x 0.8 x 0.6, 1 - 2 x 0.36) = atan(24/7) = 73.74 degrees, then -10 degrees, and the
 * tap that ends the test at 2.5 s. */
static const struct line ROM_SCRIPT[] = {
    {100, "{\"type\": \"tap\", \"target\": 0}", "notYet"},
    {500, "{\"type\": \"sample\", \"x\": 85, \"y\": 0, \"z\": 0}", NULL},
    {1000, "{\"type\": \"sample\", \"x\": 15, \"y\": 1, \"z\": 2}", NULL},
    {1500, "{\"type\": \"sample\", \"x\": 0.6, \"y\": 0, \"z\": 0, \"w\": 0.8}", NULL},
    {1600, "{\"type\": \"sample\", \"x\": 1.5, \"y\": 0, \"z\": 0, \"w\": 0.8}", "outOfRange"},
    {1700, "{\"type\": \"key\", \"key\": \"x\"}", "wrongInput"},
    {2000, "{\"type\": \"sample\", \"x\": -10, \"y\": 0, \"z\": 0}", NULL},
    {2500, "{\"type\": \"tap\", \"target\": 0}", NULL},
};

static void check_rom(struct player *p)
{
    json_t *r = player_result(p, "rom");
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK_STR(json_str(r, "type"), "rangeOfMotion");
    CHECK_STR(json_str(r, "limbOption"), "left");
    CHECK_NEAR(number_of(r, "numberOfSamples"), 4);
    CHECK_NEAR(number_of(r, "start"), 85);
    CHECK_NEAR(number_of(r, "finish"), -10);
    CHECK_NEAR(number_of(r, "minimum"), -10);
    CHECK_NEAR(number_of(r, "maximum"), 85);
    CHECK_NEAR(number_of(r, "range"), 95);
    CHECK_NEAR(number_of(r, "flexed"), 85);
    CHECK_NEAR(number_of(r, "extended"), -10);
    CHECK_NEAR(number_of(r, "finishTime"), 2.5);
    CHECK(json_is_true(json_object_get(r, "finished")));
    json_decref(r);
}

static void test_range_of_motion(void)
{
    struct player p;
    size_t n = sizeof ROM_SCRIPT / sizeof ROM_SCRIPT[0];
    json_t *state, *game;
    player_open(&p, ROM);
    player_play(&p, ROM_SCRIPT, 0, 4);
    state = state_of(p.session);
    game = json_object_get(json_object_get(state, "active"), "game");
    CHECK_NEAR(number_of(game, "angle"), atan2(24.0, 7.0) * 180.0 / PI);
    CHECK_NEAR(number_of(game, "samples"), 3);
    json_decref(state);
    player_play(&p, ROM_SCRIPT, 4, n);
    CHECK_STEP(p.session, "done");
    check_rom(&p);
    player_close(&p);

    player_open(&p, ROM);
    player_play(&p, ROM_SCRIPT, 0, 3);
    player_save_and_restore(&p);
    player_play(&p, ROM_SCRIPT, 3, n);
    check_rom(&p);
    player_close(&p);
}

/* ---- Amsler grid ------------------------------------------------------------------------- */

static const char AMSLER[] = "{\"type\": \"amslerGrid\", \"identifier\": \"amsler\", \"eyeSide\": \"left\", \"gridSize\": 5}";

/* The rectangle (0.15, 0.15)-(0.85, 0.55) on a 5 x 5 grid, lifted, then done. By hand: the
 * corners lie in squares (0, 0), (4, 0), (4, 2), (0, 2); the centres (0.1, 0.3 ... 0.9) inside it
 * are columns 1-3 of rows 1-2; so row 0: 0 4; row 1: 1 2 3; row 2: 0 1 2 3 4 — ten squares. */
static const struct line AMSLER_SCRIPT[] = {
    {500, "{\"type\": \"key\", \"key\": \"lift\"}", "noPath"},
    {1000, "{\"type\": \"sample\", \"x\": 0.15, \"y\": 0.15, \"z\": 0}", NULL},
    {1100, "{\"type\": \"sample\", \"x\": 0.85, \"y\": 0.15, \"z\": 0}", NULL},
    {1200, "{\"type\": \"sample\", \"x\": 0.85, \"y\": 0.55, \"z\": 0}", NULL},
    {1250, "{\"type\": \"sample\", \"x\": 0.5, \"y\": 1.5, \"z\": 0}", "outOfGrid"},
    {1300, "{\"type\": \"sample\", \"x\": 0.15, \"y\": 0.55, \"z\": 0}", NULL},
    {1400, "{\"type\": \"key\", \"key\": \"lift\"}", NULL},
    {1500, "{\"type\": \"key\", \"key\": \"blink\"}", "wrongInput"},
    {2000, "{\"type\": \"key\", \"key\": \"done\"}", NULL},
};

static void check_amsler(struct player *p)
{
    static const int expected[][2] = {{0, 0}, {4, 0}, {1, 1}, {2, 1}, {3, 1}, {0, 2}, {1, 2}, {2, 2}, {3, 2}, {4, 2}};
    json_t *r = player_result(p, "amsler"), *cells, *area;
    size_t i;
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK_STR(json_str(r, "type"), "amslerGrid");
    CHECK_STR(json_str(r, "eyeSide"), "left");
    CHECK_NEAR(number_of(r, "numberOfAreas"), 1);
    CHECK(json_is_true(json_object_get(r, "finished")));
    area = json_array_get(json_object_get(r, "areas"), 0);
    CHECK_NEAR(number_of(area, "startTime"), 1);
    CHECK_NEAR(number_of(area, "endTime"), 1.3);
    CHECK_NEAR(number_of(json_object_get(area, "bounds"), "maxY"), 0.55);
    cells = json_object_get(r, "markedCells");
    CHECK(json_array_size(cells) == 10);
    for (i = 0; i < 10 && i < json_array_size(cells); i++) {
        CHECK(json_integer_value(json_array_get(json_array_get(cells, i), 0)) == expected[i][0]);
        CHECK(json_integer_value(json_array_get(json_array_get(cells, i), 1)) == expected[i][1]);
    }
    CHECK(json_equal(cells, json_object_get(area, "cells")));
    json_decref(r);
}

static void test_amsler_grid(void)
{
    struct player p;
    size_t n = sizeof AMSLER_SCRIPT / sizeof AMSLER_SCRIPT[0];
    player_open(&p, AMSLER);
    player_play(&p, AMSLER_SCRIPT, 0, n);
    CHECK_STEP(p.session, "done");
    check_amsler(&p);
    player_close(&p);

    player_open(&p, AMSLER);
    player_play(&p, AMSLER_SCRIPT, 0, 3); /* saved with the rectangle half drawn */
    player_save_and_restore(&p);
    player_play(&p, AMSLER_SCRIPT, 3, n);
    check_amsler(&p);
    player_close(&p);
}

/* ---- tone audiometry --------------------------------------------------------------------- */

static const char TONES[] = "{\"type\": \"toneAudiometry\", \"identifier\": \"hear\", \"earPreference\": \"right\","
                            " \"frequencyList\": [500], \"maxRandomPreStimulusDelay\": 0, \"toneDuration\": 0.5,"
                            " \"postStimulusDelay\": 0.5}";

/* No delay, so each trial's window is [start, start + 1 s). By hand (30 to start, down 10, up 5):
 * 30 heard (at 0.2) -> 20 missed (window closes at 1.2) -> 25 asc heard at 1.5 (25: 1/1) -> 15
 * missed (2.5) -> 20 asc missed (3.5; 20: 0/1) -> 25 asc heard at 3.9 (25: 2/2): threshold 25.
 * A tap (0 below) is a response; a tick is the window closing. */
static const struct line TONE_SCRIPT[] = {
    {200, "{\"type\": \"tap\", \"target\": 0}", NULL},
    {1150, "{\"type\": \"drag\", \"from\": 0, \"to\": 1}", "wrongInput"},
    {1200, NULL, NULL},
    {1500, "{\"type\": \"tap\", \"target\": 0}", NULL},
    {2500, NULL, NULL},
    {3500, NULL, NULL},
    {3900, "{\"type\": \"tap\", \"target\": 0}", NULL},
};

static void tone_play(struct player *p, size_t from, size_t to)
{
    size_t i;
    for (i = from; i < to; i++) {
        if (TONE_SCRIPT[i].input) {
            player_play(p, TONE_SCRIPT, i, i + 1);
        } else {
            char *out = NULL;
            p->now = T0 + TONE_SCRIPT[i].at;
            CHECK_RC(stepkit_session_tick(p->session, &out), STEPKIT_OK);
            stepkit_string_free(out);
        }
    }
}

static void check_tones(struct player *p)
{
    static const int levels[] = {30, 20, 25, 15, 20, 25};
    static const int heard[] = {1, 0, 1, 0, 0, 1};
    json_t *r = player_result(p, "hear"), *sample, *units;
    size_t i;
    CHECK(r != NULL);
    if (!r)
        return;
    sample = json_array_get(json_object_get(r, "samples"), 0);
    CHECK_STR(json_str(sample, "channel"), "right");
    CHECK_NEAR(number_of(sample, "frequency"), 500);
    CHECK_NEAR(number_of(sample, "calculatedThreshold"), 25);
    units = json_object_get(sample, "units");
    CHECK(json_array_size(units) == 6);
    for (i = 0; i < 6 && i < json_array_size(units); i++) {
        json_t *u = json_array_get(units, i);
        CHECK_NEAR(number_of(u, "dBHLValue"), levels[i]);
        CHECK(json_is_true(json_object_get(u, "responded")) == heard[i]);
    }
    CHECK_NEAR(number_of(json_array_get(units, 1), "timeoutTimeStamp"), 1.2);
    CHECK_NEAR(number_of(json_array_get(units, 2), "userTapTimeStamp"), 1.5);
    CHECK_NEAR(number_of(json_array_get(units, 5), "startOfUnitTimeStamp"), 3.5);
    json_decref(r);
}

static void test_tone_audiometry(void)
{
    struct player p;
    size_t n = sizeof TONE_SCRIPT / sizeof TONE_SCRIPT[0];
    player_open(&p, TONES);
    tone_play(&p, 0, n);
    CHECK_STEP(p.session, "done");
    check_tones(&p);
    player_close(&p);

    player_open(&p, TONES);
    tone_play(&p, 0, 4);
    player_save_and_restore(&p);
    tone_play(&p, 4, n);
    check_tones(&p);
    player_close(&p);
}

/* ---- sensor task templates --------------------------------------------------------------- */

/* docs/active-tasks.md: the tremor test for the right hand, two poses left out, 7 s each: an
 * instruction, the hand's instruction, per pose an instruction, a 5 s countdown and the 7 s step
 * recording accelerometer and device motion at 100 Hz, then the conclusion. */
static void test_tremor_template(void)
{
    static const char *const poses[] = {"handInLap", "handAtShoulderLength", "handAtShoulderLengthWithElbowBent"};
    stepkit_task *task = compile_ok("{\"identifier\": \"t\", \"steps\": [{\"type\": \"sensorTask\", \"task\": \"tremor\","
                                    " \"identifier\": \"tr\", \"handOptions\": \"right\", \"activeStepDuration\": 7,"
                                    " \"options\": [\"excludeHandToNose\", \"excludeQueenWave\"]}]}");
    char *out = NULL, id[128];
    json_t *info, *steps, *recorders;
    size_t i;
    CHECK_RC(stepkit_task_info(task, &out), STEPKIT_OK);
    info = parse_json(out);
    steps = json_object_get(info, "steps");
    recorders = json_object_get(info, "recorders");
    CHECK(json_array_size(steps) == 2 + 3 * 3 + 1);
    CHECK_STR(json_str(json_array_get(steps, 0), "identifier"), "tr.instruction0");
    CHECK_STR(json_str(json_array_get(steps, 1), "identifier"), "tr.instruction1.right");
    for (i = 0; i < 3; i++) {
        json_t *countdown = json_array_get(steps, 3 + 3 * i), *active = json_array_get(steps, 4 + 3 * i);
        snprintf(id, sizeof id, "tr.tremor.%s.right", poses[i]);
        CHECK_STR(json_str(active, "identifier"), id);
        CHECK_STR(json_str(active, "type"), "active");
        CHECK_NEAR(number_of(active, "stepDuration"), 7);
        CHECK_STR(json_str(countdown, "type"), "countdown");
        CHECK_NEAR(number_of(countdown, "stepDuration"), 5);
        snprintf(id, sizeof id, "tr.tremor.%s.right.accelerometer", poses[i]);
        CHECK_STR(json_str(json_array_get(recorders, 2 * i), "identifier"), id);
        snprintf(id, sizeof id, "tr.tremor.%s.right.deviceMotion", poses[i]);
        CHECK_STR(json_str(json_array_get(recorders, 2 * i + 1), "identifier"), id);
    }
    CHECK(json_array_size(recorders) == 6);
    CHECK_STR(json_str(json_array_get(steps, 11), "identifier"), "tr.conclusion");
    json_decref(info);
    stepkit_string_free(out);
    /* An unknown template is a definition error. */
    CHECK(stepkit_task_compile("{\"identifier\": \"t\", \"steps\": [{\"type\": \"sensorTask\", \"task\": \"marathon\","
                               " \"identifier\": \"m\"}]}", &(stepkit_task *){NULL}) != STEPKIT_OK);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_range_of_motion);
    RUN(test_amsler_grid);
    RUN(test_tone_audiometry);
    RUN(test_tremor_template);
    return check_report();
}
