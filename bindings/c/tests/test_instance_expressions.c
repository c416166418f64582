/*
 * test_instance_expressions.c — expressions over repeating blocks through the C ABI
 * (docs/expressions.md, "Repeating blocks: scope"): a medication list whose instances are added
 * and removed, with aggregates (count with a filter, sum of a per-instance calculation, max, all),
 * an indexed read and a per-instance visibleWhen, read from the result and the state; and a read
 * of an item inside the block from outside it, refused when the task compiles. The expected
 * values are worked out by hand from the answers given.
 */
#include "check.h"

#define BLOCK "{\"step\": \"list\", \"block\": \"medication\"}"
#define ITEM(name) "{\"step\": \"list\", \"block\": \"medication\", \"item\": \"" name "\"}"

static const char *TASK =
    "{\"identifier\": \"meds\", \"steps\": ["
    "  {\"type\": \"form\", \"identifier\": \"list\", \"formItems\": ["
    "    {\"identifier\": \"medication\", \"text\": \"Medications\", \"repeat\": {\"minCount\": 1, \"maxCount\": 4},"
    "     \"items\": [{\"identifier\": \"name\", \"text\": \"Name\", \"answerFormat\": {\"type\": \"text\"}},"
    "                {\"identifier\": \"dose\", \"text\": \"Dose\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\"}},"
    "                {\"identifier\": \"daily\", \"text\": \"Daily?\", \"answerFormat\": {\"type\": \"boolean\"}},"
    "                {\"identifier\": \"times\", \"text\": \"Times a day\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\"},"
    "                 \"visibleWhen\": {\"result\": " ITEM("daily") ", \"equals\": true}}]}]},"
    "  {\"type\": \"completion\", \"identifier\": \"done\"}],"
    " \"calculations\": {"
    "   \"count\": {\"count\": {\"over\": " BLOCK "}},"
    "   \"daily\": {\"count\": {\"over\": " BLOCK ", \"where\": {\"answer\": " ITEM("daily") "}}},"
    "   \"perDay\": {\"forEach\": " BLOCK ", \"value\": {\"*\": [{\"answer\": " ITEM("dose") "}, {\"coalesce\": [{\"answer\": " ITEM("times") "}, 1]}]}},"
    "   \"total\": {\"sum\": {\"over\": " BLOCK ", \"of\": {\"calc\": \"perDay\"}}},"
    "   \"largest\": {\"max\": {\"over\": " BLOCK ", \"of\": {\"answer\": " ITEM("dose") "}}},"
    "   \"allDaily\": {\"all\": {\"over\": " BLOCK ", \"of\": {\"answer\": " ITEM("daily") "}}},"
    "   \"second\": {\"answer\": {\"step\": \"list\", \"block\": \"medication\", \"item\": \"name\", \"index\": 1}}}}";

static double calc_number(stepkit_session *session, const char *name)
{
    json_t *result = result_of(session);
    double value = json_number_value(json_object_get(json_object_get(result, "calculations"), name));
    json_decref(result);
    return value;
}

static void test_aggregates_follow_the_instances(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_ok(task, NULL);
    char *out = NULL;
    json_t *result, *calcs, *state, *hidden;
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(session, "{\"medication\": [{\"name\": \"Metformin\", \"dose\": 500, \"daily\": true, \"times\": 2}]}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(session, "medication", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(session, "{\"medication\": [{}, {\"name\": \"Ibuprofen\", \"dose\": 200, \"daily\": false, \"times\": 3}]}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(session, "medication", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(session, "{\"medication\": [{}, {}, {\"name\": \"Vitamin D\", \"dose\": 25, \"daily\": true, \"times\": 1}]}", &out), STEPKIT_OK);
    /* The second is not daily: its "times" is hidden there alone. */
    state = parse_out(out);
    hidden = json_object_get(json_object_get(json_object_get(state, "instances"), "medication"), "hidden");
    CHECK(json_array_size(hidden) == 3);
    CHECK(json_array_size(json_array_get(hidden, 0)) == 0);
    CHECK_STR(json_string_value(json_array_get(json_array_get(hidden, 1), 0)), "times");
    CHECK(json_array_size(json_array_get(hidden, 2)) == 0);
    json_decref(state);
    /* 500 x 2 + 200 x 1 (hidden: 1) + 25 x 1 = 1225. */
    result = result_of(session);
    calcs = json_object_get(result, "calculations");
    CHECK(json_number_value(json_object_get(calcs, "total")) == 1225);
    CHECK(json_number_value(json_object_get(calcs, "count")) == 3);
    CHECK(json_number_value(json_object_get(calcs, "daily")) == 2);
    CHECK(json_number_value(json_object_get(calcs, "largest")) == 500);
    CHECK(json_is_false(json_object_get(calcs, "allDaily")));
    CHECK_STR(json_string_value(json_object_get(calcs, "second")), "Ibuprofen");
    CHECK(json_array_size(json_object_get(calcs, "perDay")) == 3);
    CHECK(json_number_value(json_array_get(json_object_get(calcs, "perDay"), 1)) == 200);
    json_decref(result);
    /* Removing the second: 1000 + 25, all daily, and the second is now Vitamin D. */
    CHECK_RC(stepkit_session_remove_instance(session, "medication", 1, NULL), STEPKIT_OK);
    CHECK(calc_number(session, "total") == 1025);
    CHECK(calc_number(session, "count") == 2);
    result = result_of(session);
    calcs = json_object_get(result, "calculations");
    CHECK(json_is_true(json_object_get(calcs, "allDaily")));
    CHECK_STR(json_string_value(json_object_get(calcs, "second")), "Vitamin D");
    json_decref(result);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK(calc_number(session, "total") == 1025);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_a_read_outside_the_block_is_refused(void)
{
    static const char *bad =
        "{\"identifier\": \"meds\", \"steps\": ["
        "  {\"type\": \"form\", \"identifier\": \"list\", \"formItems\": ["
        "    {\"identifier\": \"medication\", \"text\": \"Medications\", \"repeat\": {\"maxCount\": 4},"
        "     \"items\": [{\"identifier\": \"dose\", \"text\": \"Dose\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\"}}]}]}],"
        " \"calculations\": {\"dose\": {\"answer\": " ITEM("dose") "}}}";
    stepkit_task *task = NULL;
    json_t *error;
    CHECK_RC(stepkit_task_compile(bad, &task), STEPKIT_EDEFINITION);
    CHECK(task == NULL);
    error = check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", NULL);
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), "outsideInstance");
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "path"), "calculations.dose.answer");
    json_decref(error);
}

int main(void)
{
    test_aggregates_follow_the_instances();
    test_a_read_outside_the_block_is_refused();
    return check_report();
}
