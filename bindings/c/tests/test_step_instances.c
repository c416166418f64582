/*
 * test_step_instances.c — repeating sections (a block of steps walked once per instance)
 * through the C ABI: forward through each instance, back into an earlier one with its answers
 * kept, the state's "instances" for the section, adding, removing and entering an instance, the
 * result nested per instance, exact save and restore, and bad input (adding past maxCount,
 * removing below the count, an index out of range, entering an instance not reached, a
 * count out of bounds) refused with a clear error that
 * changes nothing (state and restoration data compared).
 */
#include "check.h"

static const char *TASK =
    "{\"identifier\": \"household\", \"steps\": ["
    "  {\"type\": \"question\", \"identifier\": \"howMany\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 0, \"maximum\": 20}},"
    "  {\"type\": \"section\", \"identifier\": \"child\", \"repeat\": {\"maxCount\": 3, \"count\": {\"answer\": \"howMany\"}, \"title\": \"Child {{index}}: {{name}}\"},"
    "   \"steps\": ["
    "     {\"type\": \"question\", \"identifier\": \"name\", \"answerFormat\": {\"type\": \"text\"}},"
    "     {\"type\": \"question\", \"identifier\": \"age\", \"optional\": true, \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 0}}]},"
    "  {\"type\": \"completion\", \"identifier\": \"done\"}]}";

/* The state's instances of "child" (a new reference the caller decrefs), or NULL. */
static json_t *child_of(stepkit_session *session)
{
    return instances_of(session, "child");
}

/* An integer member ("count", "current", ...) of the state's instances of "child". */
static json_int_t child_int(stepkit_session *session, const char *key)
{
    return instances_int(session, "child", key);
}

/* The current step's answer as a string (a copy the caller frees), or NULL. */
static char *answer_text(stepkit_session *session)
{
    json_t *state = parse_out(session_output(stepkit_session_state, session));
    const char *s = json_string_value(json_object_get(state, "answer"));
    char *copy = NULL;
    if (s) {
        copy = malloc(strlen(s) + 1);
        if (copy) strcpy(copy, s);
    }
    json_decref(state);
    return copy;
}

static void step(stepkit_session *session, const char *answer)
{
    if (answer) CHECK_RC(stepkit_session_set_answer(session, answer, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
}

static void test_walk_back_and_result(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_ok(task, NULL);
    json_t *result, *block, *instances, *titles;
    char *text;
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    step(session, "2");
    CHECK_STEP(session, "name");
    CHECK(child_int(session, "count") == 2);
    CHECK(child_int(session, "current") == 0);
    step(session, "\"Ann\"");
    step(session, "7");
    /* The second child's first step, in instance 1, unanswered. */
    CHECK_STEP(session, "name");
    CHECK(child_int(session, "current") == 1);
    text = answer_text(session);
    CHECK(text == NULL);
    free(text);
    CHECK_RC(stepkit_session_set_answer(session, "\"Ben\"", NULL), STEPKIT_OK);
    /* Back into the first child: its answer is there; forward again: Ben waited. */
    CHECK_RC(stepkit_session_go_backward(session, NULL), STEPKIT_OK);
    CHECK(child_int(session, "current") == 0);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    text = answer_text(session);
    CHECK_STR(text, "Ben");
    free(text);
    block = child_of(session);
    titles = json_object_get(block, "titles");
    CHECK_STR(json_string_value(json_array_get(titles, 0)), "Child 1: Ann");
    CHECK_STR(json_string_value(json_array_get(titles, 1)), "Child 2: Ben");
    json_decref(block);
    step(session, NULL);
    step(session, NULL);
    CHECK_STEP(session, "done");
    step(session, NULL);
    result = result_of(session);
    block = json_array_get(json_object_get(result, "results"), 1);
    CHECK_STR(json_str(block, "identifier"), "child");
    instances = json_object_get(block, "instances");
    CHECK(json_array_size(instances) == 2);
    CHECK(json_integer_value(json_object_get(json_array_get(instances, 1), "index")) == 1);
    CHECK_STR(json_str(json_array_get(json_object_get(json_array_get(json_object_get(json_array_get(instances, 1), "results"), 0), "results"), 0), "answer"), "Ben");
    json_decref(result);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_add_remove_enter_and_bad_input(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_ok(task, NULL), *back = NULL;
    check_snapshot before;
    char *saved = NULL, *again = NULL;
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_add_instance(session, NULL, NULL), STEPKIT_ESTATE, "noRepeatingBlock", before);
    check_call_refused(session, stepkit_session_set_answer(session, "4", NULL), STEPKIT_EANSWER, "countOutOfRange", before);
    snapshot_free(&before);
    step(session, "1");
    step(session, "\"Ann\"");
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_remove_instance(session, NULL, 0, NULL), STEPKIT_ESTATE, "tooFewInstances", before);
    check_call_refused(session, stepkit_session_remove_instance(session, "child", 7, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_enter_instance(session, "child", 7, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_enter_instance(session, NULL, -1, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_add_instance(session, "medication", NULL), STEPKIT_EINVAL, "unknownBlock", before);
    snapshot_free(&before);
    /* Two more (maxCount 3), then one too many. */
    CHECK_RC(stepkit_session_add_instance(session, NULL, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(session, "child", NULL), STEPKIT_OK);
    CHECK(child_int(session, "count") == 3);
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_add_instance(session, NULL, NULL), STEPKIT_ESTATE, "tooManyInstances", before);
    check_call_refused(session, stepkit_session_enter_instance(session, NULL, 2, NULL), STEPKIT_ESTATE, "instanceNotReached", before);
    snapshot_free(&before);
    step(session, NULL);
    step(session, "\"Ben\"");
    step(session, NULL);
    step(session, "\"Cy\"");
    CHECK(child_int(session, "current") == 2);
    /* Remove Ben: Cy is the second child now, and the participant with her. */
    CHECK_RC(stepkit_session_remove_instance(session, NULL, 1, NULL), STEPKIT_OK);
    CHECK(child_int(session, "count") == 2);
    CHECK(child_int(session, "current") == 1);
    /* Enter the first child again: back to its first step. */
    CHECK_RC(stepkit_session_enter_instance(session, "child", 0, NULL), STEPKIT_OK);
    CHECK_STEP(session, "name");
    CHECK(child_int(session, "current") == 0);
    /* Saved and restored: the same run. */
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &back), STEPKIT_OK);
    CHECK_RC(stepkit_session_save(back, &again), STEPKIT_OK);
    CHECK_STR(again, saved);
    CHECK_SAME_STATE(back, session);
    stepkit_string_free(again);
    stepkit_session_free(back);
    stepkit_string_free(saved);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Calculations over a repeating section (docs/expressions.md, "Repeating sections of steps"):
 * ages 40, 12 and 7 make two children and an oldest of 40, shown on the step after the section;
 * a plain read of the section's step from a calculation is refused (no instance is meant). */
static const char *AGES =
    "{\"identifier\": \"ages\", \"steps\": ["
    "  {\"type\": \"question\", \"identifier\": \"howMany\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 1, \"maximum\": 5}},"
    "  {\"type\": \"section\", \"identifier\": \"person\", \"repeat\": {\"maxCount\": 5, \"count\": {\"answer\": \"howMany\"}},"
    "   \"steps\": [{\"type\": \"question\", \"identifier\": \"age\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 0}}]},"
    "  {\"type\": \"instruction\", \"identifier\": \"summary\", \"text\": \"{{children}} children\", \"calculations\": [\"children\", \"oldest\"]}],"
    " \"calculations\": {\"children\": {\"count\": {\"over\": {\"section\": \"person\"}, \"where\": {\"<\": [{\"answer\": \"age\"}, 18]}}},"
    "   \"oldest\": {\"max\": {\"over\": {\"section\": \"person\"}, \"of\": {\"answer\": \"age\"}}}}}";

static void test_calculations_over_a_section(void)
{
    stepkit_task *task = compile_ok(AGES);
    stepkit_session *session = open_ok(task, NULL);
    stepkit_task *refused = NULL;
    const char *plain = "\"oldest\": {\"max\": {\"over\": {\"section\": \"person\"}, \"of\": {\"answer\": \"age\"}}}";
    char *bad = malloc(strlen(AGES) + 1);
    json_t *state, *error;
    step(session, "3");
    step(session, "40");
    step(session, "12");
    step(session, "7");
    CHECK_STEP(session, "summary");
    state = state_of(session);
    CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(state, "step"), "calculations"), "children")) == 2);
    CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(state, "step"), "calculations"), "oldest")) == 40);
    CHECK_STR(json_str(json_object_get(state, "step"), "text"), "2 children");
    json_decref(state);
    stepkit_session_free(session);
    stepkit_task_free(task);
    /* "oldest": {"answer": "age"} read from a calculation, outside every instance. */
    if (bad) {
        const char *at = strstr(AGES, plain);
        CHECK(at != NULL);
        if (at) {
            size_t head = (size_t)(at - AGES);
            memcpy(bad, AGES, head);
            strcpy(bad + head, "\"oldest\": {\"answer\": \"age\"}");
            strcat(bad, at + strlen(plain));
            CHECK_RC(stepkit_task_compile(bad, &refused), STEPKIT_EDEFINITION);
            CHECK(refused == NULL);
            error = check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", "calculations.oldest.answer");
            CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), "outsideInstance");
            json_decref(error);
        }
        free(bad);
    }
}

int main(void)
{
    RUN(test_walk_back_and_result);
    RUN(test_add_remove_enter_and_bad_input);
    RUN(test_calculations_over_a_section);
    return check_report();
}
