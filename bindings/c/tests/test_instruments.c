/*
 * test_instruments.c — the three scored instruments of examples/tasks (issue 13) walked through
 * the C ABI with several answer sets: the result's calculations hold the totals and bands
 * computed by hand from the published scoring rules, and the mood screener's ninth item above 0
 * routes to its safety step. STEPKIT_EXAMPLES names the examples directory.
 */
#include "check.h"

static const char *OFTEN[] = {"never", "fewDays", "mostDays", "everyDay"};
static const char *FIRST[] = {"never", "monthlyOrLess", "twoToFourMonthly", "twoToThreeWeekly", "fourPlusWeekly"};
static const char *SECOND[] = {"oneTwo", "threeFour", "fiveSix", "sevenToNine", "tenPlus"};
static const char *PAST_YEAR[] = {"never", "lessThanMonthly", "monthly", "weekly", "daily"};
static const char *HARM[] = {"no", "", "notPastYear", "", "pastYear"};

static stepkit_task *load(const char *name)
{
    const char *dir = getenv("STEPKIT_EXAMPLES");
    char path[4096];
    json_error_t error;
    json_t *definition;
    char *text;
    stepkit_task *task;
    snprintf(path, sizeof path, "%s/%s.json", dir ? dir : "examples/tasks", name);
    definition = json_load_file(path, 0, &error);
    CHECK(definition != NULL);
    if (!definition)
        return NULL;
    text = json_dumps(definition, JSON_COMPACT);
    json_decref(definition);
    task = compile_ok(text);
    free(text);
    return task;
}

/* A one-choice answer: ["value"]. */
static json_t *choice(const char *value)
{
    return json_pack("[s]", value);
}

/* The answers of items prefix1..prefixN, each the one choice OFTEN[scores[i]]. */
static json_t *often_answers(const char *prefix, const int *scores, int n)
{
    json_t *answers = json_object();
    char name[16];
    int i;
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%d", prefix, i + 1);
        json_object_set_new(answers, name, choice(OFTEN[scores[i]]));
    }
    return answers;
}

/* Walks `task` answering each step named in `answers` (stolen); returns the completed result's
 * "calculations" (the caller decrefs) and whether `watch` was on the path. */
static json_t *walk(stepkit_task *task, json_t *answers, const char *watch, int *watched)
{
    stepkit_session *session = open_ok(task, NULL);
    json_t *calculations = NULL;
    int guard = 0;
    *watched = 0;
    while (session && guard++ < 100) {
        json_t *state = state_of(session);
        const char *status = json_str(state, "status");
        const char *step = json_str(json_object_get(state, "step"), "identifier");
        json_t *answer = step ? json_object_get(answers, step) : NULL;
        if (!status || strcmp(status, "inProgress") != 0) {
            CHECK_STR(json_str(state, "finishReason"), "completed");
            json_decref(state);
            break;
        }
        if (step && watch && strcmp(step, watch) == 0)
            *watched = 1;
        if (answer) {
            char *text = json_dumps(answer, JSON_COMPACT | JSON_ENCODE_ANY);
            CHECK_RC(stepkit_session_set_answer(session, text, NULL), STEPKIT_OK);
            free(text);
        }
        CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
        json_decref(state);
    }
    if (session) {
        json_t *result = result_of(session);
        calculations = json_incref(json_object_get(result, "calculations"));
        json_decref(result);
        stepkit_session_free(session);
    }
    json_decref(answers);
    return calculations;
}

static void check_scores(json_t *calculations, const char *total_name, int total, const char *band_name, const char *band)
{
    json_t *value = json_object_get(calculations, total_name);
    CHECK(json_is_number(value) && json_number_value(value) == (double)total);
    if (!(json_is_number(value) && json_number_value(value) == (double)total))
        fprintf(stderr, "  %s is %g, expected %d\n", total_name, json_number_value(value), total);
    CHECK_STR(json_str(calculations, band_name), band);
}

static void test_mood_screener(void)
{
    static const struct { int scores[9]; int total; const char *band; int safety; } cases[] = {
        {{1, 2, 3, 2, 0, 1, 2, 0, 0}, 11, "moderate", 0},
        {{0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, "minimal", 0},
        {{2, 1, 1, 1, 0, 0, 0, 0, 0}, 5, "mild", 0},
        {{3, 3, 3, 2, 2, 1, 1, 0, 0}, 15, "moderatelySevere", 0},
        {{3, 3, 3, 3, 2, 2, 2, 1, 1}, 20, "severe", 1},
    };
    stepkit_task *task = load("mood-screener");
    size_t c;
    for (c = 0; task && c < sizeof cases / sizeof cases[0]; c++) {
        int safety;
        json_t *calculations = walk(task, often_answers("mood", cases[c].scores, 9), "safety", &safety);
        check_scores(calculations, "moodTotal", cases[c].total, "moodBand", cases[c].band);
        CHECK(safety == cases[c].safety);
        json_decref(calculations);
    }
    stepkit_task_free(task);
}

static void test_worry_screener(void)
{
    static const struct { int scores[7]; int total; const char *band; } cases[] = {
        {{2, 1, 2, 3, 0, 1, 1}, 10, "moderate"},
        {{1, 1, 1, 1, 0, 0, 0}, 4, "minimal"},
        {{3, 3, 3, 3, 3, 3, 3}, 21, "severe"},
    };
    stepkit_task *task = load("worry-screener");
    size_t c;
    for (c = 0; task && c < sizeof cases / sizeof cases[0]; c++) {
        int unused;
        json_t *items = often_answers("worry", cases[c].scores, 7);
        json_t *calculations = walk(task, json_pack("{so}", "worry", items), NULL, &unused);
        check_scores(calculations, "worryTotal", cases[c].total, "worryBand", cases[c].band);
        json_decref(calculations);
    }
    stepkit_task_free(task);
}

static void test_drinking_screener(void)
{
    /* count 10: every item; count 3: item 1 "never", then items 9 and 10. */
    static const struct { int count; int scores[10]; int total; const char *zone; } cases[] = {
        {10, {3, 1, 2, 1, 0, 0, 1, 0, 0, 2}, 10, "zone2"},
        {10, {2, 2, 2, 2, 2, 2, 2, 3, 2, 0}, 19, "zone3"},
        {10, {4, 4, 3, 2, 1, 1, 1, 0, 2, 2}, 20, "zone4"},
        {3, {0, 2, 2}, 4, "zone1"},
    };
    stepkit_task *task = load("drinking-screener");
    size_t c;
    int i;
    for (c = 0; task && c < sizeof cases / sizeof cases[0]; c++) {
        const int *s = cases[c].scores;
        int n = cases[c].count, reached;
        json_t *answers = json_object();
        json_t *calculations;
        char name[16];
        json_object_set_new(answers, "drink1", choice(FIRST[s[0]]));
        if (n == 10) {
            json_object_set_new(answers, "drink2", choice(SECOND[s[1]]));
            for (i = 2; i < 8; i++) {
                snprintf(name, sizeof name, "drink%d", i + 1);
                json_object_set_new(answers, name, choice(PAST_YEAR[s[i]]));
            }
        }
        json_object_set_new(answers, "drink9", choice(HARM[s[n - 2]]));
        json_object_set_new(answers, "drink10", choice(HARM[s[n - 1]]));
        calculations = walk(task, answers, "drink2", &reached);
        check_scores(calculations, "drinkTotal", cases[c].total, "drinkZone", cases[c].zone);
        CHECK(reached == (n == 10));
        json_decref(calculations);
    }
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_mood_screener);
    RUN(test_worry_screener);
    RUN(test_drinking_screener);
    return check_report();
}
