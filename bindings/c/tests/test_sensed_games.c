/*
 * test_sensed_games.c — range of motion, the Amsler grid and tone audiometry through the C ABI
 * (stepkit_session_input, docs/active-tasks.md), on a manual clock. Each game is played from a
 * script of inputs, once straight through and once saved and restored in the middle; both must
 * give the result worked out by hand from the documented rules. Refused inputs must leave the
 * state byte for byte.
 */
#include <math.h>
#include <stdint.h>

#include "check.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00.000Z */

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
    CHECK_NEAR(number_of(game, "angle"), atan2(24.0, 7.0) * 180.0 / M_PI);
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

int main(void)
{
    RUN(test_range_of_motion);
    return check_report();
}
