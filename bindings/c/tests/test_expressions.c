/*
 * test_expressions.c — expressions through the C ABI: a nine-item screener written here, scored
 * like the PHQ-9 (items 0-3, a total, a severity band by "if", item 9 above 0 routing to a safety
 * step by a navigation rule on a score), walked with answer sets whose totals were worked out by
 * hand; the calculations in the state, the result, the task info and across save/restore; and
 * definition errors reported at once with their paths.
 */
#include <pthread.h>

#include "check.h"

/* The screener's definition, built with jansson (the caller decrefs). */
static json_t *screener(void)
{
    json_t *steps = json_array();
    json_t *total = json_array();
    int n, s;
    for (n = 1; n <= 9; n++) {
        char id[8];
        json_t *choices = json_array();
        snprintf(id, sizeof id, "q%d", n);
        for (s = 0; s <= 3; s++) {
            char value[4];
            snprintf(value, sizeof value, "v%d", s);
            json_array_append_new(choices, json_pack("{s:s, s:s, s:i}", "text", value, "value", value, "score", s));
        }
        json_array_append_new(steps, json_pack("{s:s, s:s, s:{s:s, s:o}}", "type", "question", "identifier", id,
                                               "answerFormat", "type", "textScale", "textChoices", choices));
        json_array_append_new(total, json_pack("{s:s}", "score", id));
    }
    json_array_append_new(steps, json_pack("{s:s, s:s}", "type", "instruction", "identifier", "safety"));
    json_array_append_new(steps, json_pack("{s:s, s:s, s:[s, s]}", "type", "completion", "identifier", "summary",
                                           "calculations", "total", "severity"));
    return json_pack(
        "{s:s, s:o, s:{s:{s:o}, s:o}, s:{s:{s:s, s:[{s:{s:[{s:s}, i]}, s:s}], s:s}}}",
        "identifier", "screener9", "steps", steps,
        "calculations", "total", "sum", total,
        "severity", json_loads("{\"if\": [{\"<=\": [{\"calc\": \"total\"}, 4]}, \"minimal\","
                               " {\"if\": [{\"<=\": [{\"calc\": \"total\"}, 9]}, \"mild\","
                               " {\"if\": [{\"<=\": [{\"calc\": \"total\"}, 14]}, \"moderate\","
                               " {\"if\": [{\"<=\": [{\"calc\": \"total\"}, 19]}, \"moderately severe\", \"severe\"]}]}]}]}",
                               0, NULL),
        "navigationRules", "q9", "type", "predicate", "branches", "when", ">", "score", "q9", 0,
        "destination", "safety", "defaultDestination", "summary");
}

static stepkit_task *compile_screener(void)
{
    json_t *definition = screener();
    char *text = json_dumps(definition, 0);
    stepkit_task *task = NULL;
    CHECK_RC(stepkit_task_compile(text, &task), STEPKIT_OK);
    free(text);
    json_decref(definition);
    return task;
}

static const char *step_id(json_t *state)
{
    return json_str(json_object_get(state, "step"), "identifier");
}

static stepkit_session *walk(stepkit_task *task, const int scores[9])
{
    stepkit_session *session = NULL;
    int n;
    CHECK_RC(stepkit_session_open(task, "{\"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\"}", &session), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    for (n = 0; n < 9 && session; n++) {
        char answer[16];
        char *out = NULL;
        snprintf(answer, sizeof answer, "[\"v%d\"]", scores[n]);
        CHECK_RC(stepkit_session_set_answer(session, answer, &out), STEPKIT_OK);
        stepkit_string_free(out);
        out = NULL;
        CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_OK);
        stepkit_string_free(out);
    }
    return session;
}

struct screening {
    int scores[9];
    int total;
    const char *severity;
};

static void test_totals_and_bands(void)
{
    static const struct screening cases[] = {
        {{0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, "minimal"},
        {{1, 1, 1, 1, 1, 0, 0, 0, 0}, 5, "mild"},
        {{2, 2, 2, 2, 1, 1, 0, 0, 0}, 10, "moderate"},
        {{3, 2, 2, 2, 2, 1, 1, 1, 0}, 14, "moderate"},
        {{3, 3, 3, 2, 2, 2, 2, 1, 1}, 19, "moderately severe"},
        {{3, 3, 3, 3, 3, 3, 3, 3, 3}, 27, "severe"},
    };
    stepkit_task *task = compile_screener();
    size_t i;
    for (i = 0; task && i < sizeof cases / sizeof cases[0]; i++) {
        stepkit_session *session = walk(task, cases[i].scores);
        json_t *state = state_of(session);
        json_t *calcs;
        json_t *result;
        char *text;
        char *out = NULL;
        /* Item 9 above 0 routes to the safety step. */
        CHECK_STR(step_id(state), cases[i].scores[8] > 0 ? "safety" : "summary");
        json_decref(state);
        if (cases[i].scores[8] > 0) {
            CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_OK);
            stepkit_string_free(out);
        }
        state = state_of(session);
        calcs = json_object_get(json_object_get(state, "step"), "calculations");
        CHECK(json_integer_value(json_object_get(calcs, "total")) == cases[i].total);
        CHECK_STR(json_str(calcs, "severity"), cases[i].severity);
        json_decref(state);
        text = result_text(session);
        result = parse_json(text);
        calcs = json_object_get(result, "calculations");
        CHECK(json_integer_value(json_object_get(calcs, "total")) == cases[i].total);
        CHECK_STR(json_str(calcs, "severity"), cases[i].severity);
        json_decref(result);
        stepkit_string_free(text);
        stepkit_session_free(session);
    }
    stepkit_task_free(task);
}

static void test_restore_gives_back_the_calculations(void)
{
    static const int scores[9] = {2, 1, 0, 3, 1, 2, 0, 1, 2};
    stepkit_task *task = compile_screener();
    stepkit_session *session = walk(task, scores);
    stepkit_session *back = NULL;
    char *saved = NULL;
    char *before;
    char *after;
    json_t *result;
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &back), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_clock(back, check_fixed_now, NULL), STEPKIT_OK);
    before = result_text(session);
    after = result_text(back);
    CHECK_STR(after, before);
    result = parse_json(after);
    CHECK(json_integer_value(json_object_get(json_object_get(result, "calculations"), "total")) == 12);
    CHECK_STR(json_str(json_object_get(result, "calculations"), "severity"), "moderate");
    json_decref(result);
    stepkit_string_free(before);
    stepkit_string_free(after);
    stepkit_string_free(saved);
    stepkit_session_free(back);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_info_lists_the_calculations(void)
{
    stepkit_task *task = compile_screener();
    char *out = NULL;
    json_t *info;
    json_t *severity;
    CHECK_RC(stepkit_task_info(task, &out), STEPKIT_OK);
    info = parse_json(out);
    severity = json_array_get(json_object_get(info, "calculations"), 1);
    CHECK_STR(json_str(severity, "name"), "severity");
    CHECK_STR(json_str(severity, "type"), "string");
    CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(severity, "dependsOn"), "calculations"), 0)),
              "total");
    CHECK(json_array_size(json_object_get(json_object_get(json_array_get(json_object_get(info, "calculations"), 0), "dependsOn"), "steps")) == 9);
    json_decref(info);
    stepkit_string_free(out);
    stepkit_task_free(task);
}

static void test_definition_errors_at_once(void)
{
    stepkit_task *task = SENTINEL;
    json_t *error;
    json_t *errors;
    const char *bad =
        "{\"identifier\": \"t\", \"steps\": [{\"type\": \"question\", \"identifier\": \"n\","
        " \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\"}}],"
        " \"calculations\": {\"a\": {\"calc\": \"b\"}, \"b\": {\"calc\": \"a\"},"
        " \"c\": {\"+\": [1, \"x\"]}, \"d\": {\"/\": [{\"answer\": \"nope\"}, 2]}}}";
    CHECK_RC(stepkit_task_compile(bad, &task), STEPKIT_EDEFINITION);
    CHECK(task == NULL);
    error = check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", NULL);
    errors = json_object_get(error, "errors");
    CHECK(json_array_size(errors) == 3);
    CHECK_STR(json_str(json_array_get(errors, 0), "code"), "calculationCycle");
    CHECK_STR(json_str(json_array_get(errors, 0), "message"), "The calculations read each other in a cycle: a \xe2\x86\x92 b \xe2\x86\x92 a.");
    CHECK_STR(json_str(json_array_get(errors, 1), "path"), "calculations.c[\"+\"][1]");
    CHECK_STR(json_str(json_array_get(errors, 2), "path"), "calculations.d[\"/\"][0].answer");
    json_decref(error);
}

/* A skip rule nested 180 "not"s deep (the definition's depth limit raised to 256) whose innermost
 * condition is an expression 31 levels deep: compiling, going through it and checking the task
 * run on a thread with a 256 KiB stack. */
struct deep_run {
    char *definition;
    int compiled, forward_ok, checked;
    char *state;
};

static void *deep_thread(void *arg)
{
    struct deep_run *run = arg;
    stepkit_task *task = NULL;
    stepkit_session *session = NULL;
    char *out = NULL;
    run->compiled = stepkit_task_compile_with_options(run->definition, "{\"limits\": {\"maxDepth\": 256}}", &task);
    if (run->compiled != STEPKIT_OK)
        return NULL;
    if (stepkit_session_open(task, NULL, &session) == STEPKIT_OK) {
        stepkit_session_set_answer(session, "1", NULL);
        run->forward_ok = stepkit_session_go_forward(session, &run->state);
        stepkit_session_free(session);
    }
    run->checked = stepkit_task_check(task, &out);
    stepkit_string_free(out);
    stepkit_task_free(task);
    return NULL;
}

static void test_deep_predicate_with_a_deep_expression_on_a_small_stack(void)
{
    struct deep_run run = {NULL, -1, -1, -1, NULL};
    size_t cap = 64 * 1024, len = 0;
    int i;
    pthread_attr_t attr;
    pthread_t thread;
    json_t *state;
    run.definition = malloc(cap);
    if (!run.definition)
        return;
    len += snprintf(run.definition + len, cap - len,
                    "{\"identifier\": \"deep\", \"steps\": [{\"type\": \"question\", \"identifier\": \"a\","
                    " \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\"}},"
                    " {\"type\": \"instruction\", \"identifier\": \"i\"}, {\"type\": \"completion\", \"identifier\": \"end\"}],"
                    " \"skipRules\": {\"i\": ");
    for (i = 0; i < 180; i++)
        len += snprintf(run.definition + len, cap - len, "{\"not\": ");
    len += snprintf(run.definition + len, cap - len, "{\">\": [");
    for (i = 0; i < 29; i++)
        len += snprintf(run.definition + len, cap - len, "{\"+\": [1, ");
    len += snprintf(run.definition + len, cap - len, "{\"answer\": \"a\"}");
    for (i = 0; i < 29; i++)
        len += snprintf(run.definition + len, cap - len, "]}");
    len += snprintf(run.definition + len, cap - len, ", 0]}");
    for (i = 0; i < 180; i++)
        len += snprintf(run.definition + len, cap - len, "}");
    snprintf(run.definition + len, cap - len, "}}");
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    CHECK(pthread_create(&thread, &attr, deep_thread, &run) == 0);
    pthread_join(thread, NULL);
    pthread_attr_destroy(&attr);
    CHECK(run.compiled == STEPKIT_OK);
    CHECK(run.forward_ok == STEPKIT_OK);
    CHECK(run.checked == STEPKIT_OK);
    /* An even number of "not"s of a true condition: the skip rule holds, "i" is passed over. */
    state = run.state ? parse_json(run.state) : NULL;
    CHECK_STR(step_id(state), "end");
    json_decref(state);
    stepkit_string_free(run.state);
    free(run.definition);
}

int main(void)
{
    RUN(test_totals_and_bands);
    RUN(test_restore_gives_back_the_calculations);
    RUN(test_info_lists_the_calculations);
    RUN(test_definition_errors_at_once);
    RUN(test_deep_predicate_with_a_deep_expression_on_a_small_stack);
    return check_report();
}
