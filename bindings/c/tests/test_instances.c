/*
 * test_instances.c — repeating blocks through the C ABI: a group whose instances its count adds,
 * adding, entering and removing an instance, the state's "instances", the result nested per
 * instance, and bad input (adding past maxCount, removing below minCount or outside a block, an
 * index out of range, an answer for an instance that does not exist, a count out of bounds)
 * refused with a clear error that changes nothing (state and restoration data compared).
 */
#include "check.h"

static const char *TASK =
    "{\"identifier\": \"meds\", \"steps\": ["
    "  {\"type\": \"question\", \"identifier\": \"howMany\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 0, \"maximum\": 50}},"
    "  {\"type\": \"form\", \"identifier\": \"list\", \"formItems\": ["
    "    {\"identifier\": \"medication\", \"text\": \"Medications\","
    "     \"repeat\": {\"minCount\": 1, \"maxCount\": 3, \"count\": {\"answer\": \"howMany\"}, \"title\": \"Medication {{index}}: {{name}}\"},"
    "     \"items\": [{\"identifier\": \"name\", \"text\": \"Name\", \"answerFormat\": {\"type\": \"text\"}},"
    "                {\"identifier\": \"dose\", \"optional\": true, \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\"}}]}]},"
    "  {\"type\": \"completion\", \"identifier\": \"done\"}]}";

static void test_walk_with_instances(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_fixed(task);
    char *out = NULL;
    json_t *result, *group, *instances, *block, *state;
    CHECK_RC(stepkit_session_set_answer(session, "2", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK(instances_int(session, "medication", "count") == 2);
    CHECK(instances_int(session, "medication", "expectedCount") == 2);
    CHECK_RC(stepkit_session_set_answer(session, "{\"medication\": [{\"name\": \"Aspirin\", \"dose\": 100}, {\"name\": \"Ibuprofen\"}]}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(session, NULL, &out), STEPKIT_OK);
    state = parse_out(out);
    block = json_object_get(json_object_get(state, "instances"), "medication");
    CHECK(json_integer_value(json_object_get(block, "count")) == 3);
    CHECK(json_integer_value(json_object_get(block, "current")) == 2);
    CHECK(json_is_false(json_object_get(block, "canAdd")));
    CHECK_STR(json_string_value(json_array_get(json_object_get(block, "titles"), 1)), "Medication 2: Ibuprofen");
    json_decref(state);
    CHECK_RC(stepkit_session_enter_instance(session, "medication", 0, NULL), STEPKIT_OK);
    CHECK(instances_int(session, "medication", "current") == 0);
    CHECK_RC(stepkit_session_set_answer(session, "{\"medication\": [{}, {}, {\"name\": \"Metformin\"}]}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_remove_instance(session, "medication", 1, NULL), STEPKIT_OK);
    CHECK(instances_int(session, "medication", "count") == 2);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_result(session, &out), STEPKIT_OK);
    result = parse_out(out);
    group = json_array_get(json_object_get(json_array_get(json_object_get(result, "results"), 1), "results"), 0);
    CHECK_STR(json_str(group, "type"), "group");
    instances = json_object_get(group, "instances");
    CHECK(json_array_size(instances) == 2);
    CHECK_STR(json_str(json_array_get(json_object_get(json_array_get(instances, 1), "results"), 0), "answer"), "Metformin");
    json_decref(result);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_bad_input_changes_nothing(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_fixed(task);
    check_snapshot before;
    char *out = NULL;
    /* Outside a block. */
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_add_instance(session, NULL, NULL), STEPKIT_ESTATE, "noRepeatingBlock", before);
    /* A count past maxCount, and a negative one. */
    check_call_refused(session, stepkit_session_set_answer(session, "4", NULL), STEPKIT_EANSWER, "countOutOfRange", before);
    snapshot_free(&before);
    CHECK_RC(stepkit_session_set_answer(session, "0", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_remove_instance(session, NULL, 0, NULL), STEPKIT_ESTATE, "tooFewInstances", before);
    check_call_refused(session, stepkit_session_enter_instance(session, NULL, 1, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_enter_instance(session, NULL, -1, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_remove_instance(session, "medication", 7, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_add_instance(session, "nope", NULL), STEPKIT_EINVAL, "unknownBlock", before);
    /* An answer for instance 3 when there is 1. */
    check_call_refused(session, stepkit_session_set_answer(session, "{\"medication\": [{}, {}, {\"name\": \"X\"}]}", NULL),
                  STEPKIT_EANSWER, "instanceOutOfRange", before);
    CHECK_FAILS(out, stepkit_session_add_instance(NULL, NULL, &out), STEPKIT_EINVAL);
    snapshot_free(&before);
    /* Adding past maxCount. */
    CHECK_RC(stepkit_session_add_instance(session, NULL, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(session, "medication", NULL), STEPKIT_OK);
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_add_instance(session, NULL, NULL), STEPKIT_ESTATE, "tooManyInstances", before);
    snapshot_free(&before);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_restore_keeps_the_instance(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_fixed(task), *back;
    CHECK_RC(stepkit_session_set_answer(session, "3", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_enter_instance(session, NULL, 2, NULL), STEPKIT_OK);
    back = restore_same(task, session);
    CHECK(instances_int(back, "medication", "current") == 2);
    stepkit_session_free(back);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_walk_with_instances);
    RUN(test_bad_input_changes_nothing);
    RUN(test_restore_keeps_the_instance);
    return check_report();
}
