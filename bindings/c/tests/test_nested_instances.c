/*
 * test_nested_instances.c — a repeating group inside a repeating group through the C ABI
 * (a medication's doses): the inner block named by its path ("medication.doses", or
 * "medication[k].doses"), its instances added, entered and removed in the medication the
 * participant is in, the state's entry for it, the result nested (each dose its own result
 * object inside its medication's), restoration data kept exactly, and bad input (adding past
 * the inner maxCount, removing below its minCount, an inner index out of range, a path naming a
 * medication the participant is not in, an answer for a dose that does not exist) refused with
 * a clear error that changes nothing (state and restoration data compared).
 */
#include "check.h"

static const char *TASK =
    "{\"identifier\": \"meds\", \"steps\": ["
    "  {\"type\": \"form\", \"identifier\": \"list\", \"formItems\": ["
    "    {\"identifier\": \"medication\", \"text\": \"Medications\", \"repeat\": {\"minCount\": 1, \"maxCount\": 3},"
    "     \"items\": [{\"identifier\": \"name\", \"text\": \"Name\", \"answerFormat\": {\"type\": \"text\"}},"
    "       {\"identifier\": \"doses\", \"text\": \"Doses\", \"repeat\": {\"minCount\": 1, \"maxCount\": 2, \"title\": \"Dose {{index}}: {{amount}}\"},"
    "        \"items\": [{\"identifier\": \"amount\", \"text\": \"Amount\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\", \"minimum\": 0}}]}]}]},"
    "  {\"type\": \"completion\", \"identifier\": \"done\"}]}";

static void test_walk_with_doses_in_each_medication(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_fixed(task);
    char *out = NULL;
    json_t *result, *group, *meds, *inner, *state, *entry;
    /* minCount at each level: one medication with one dose. */
    CHECK(instances_int(session, "medication.doses", "count") == 1);
    CHECK_RC(stepkit_session_add_instance(session, "medication.doses", &out), STEPKIT_OK);
    state = parse_out(out);
    entry = json_object_get(json_object_get(state, "instances"), "medication.doses");
    CHECK(json_integer_value(json_object_get(entry, "count")) == 2);
    CHECK(json_integer_value(json_object_get(entry, "current")) == 1);
    CHECK(json_integer_value(json_object_get(entry, "outerIndex")) == 0);
    CHECK_STR(json_str(entry, "outer"), "medication");
    CHECK(json_is_false(json_object_get(entry, "canAdd")));
    json_decref(state);
    /* A second medication: its own doses, from its first. */
    CHECK_RC(stepkit_session_add_instance(session, "medication", NULL), STEPKIT_OK);
    CHECK(instances_int(session, "medication.doses", "count") == 1);
    CHECK(instances_int(session, "medication.doses", "outerIndex") == 1);
    CHECK(instances_int(session, "medication.doses", "current") == 0);
    CHECK_RC(stepkit_session_set_answer(session,
        "{\"medication\": [{\"name\": \"A\", \"doses\": [{\"amount\": 5}, {\"amount\": 10}]}, {\"name\": \"B\", \"doses\": [{\"amount\": 1}]}]}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_enter_instance(session, "medication", 0, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_enter_instance(session, "medication[0].doses", 1, NULL), STEPKIT_OK);
    CHECK(instances_int(session, "medication.doses", "current") == 1);
    CHECK_RC(stepkit_session_remove_instance(session, "medication.doses", 0, NULL), STEPKIT_OK);
    CHECK(instances_int(session, "medication.doses", "count") == 1);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_result(session, &out), STEPKIT_OK);
    result = parse_out(out);
    group = json_array_get(json_object_get(json_array_get(json_object_get(result, "results"), 0), "results"), 0);
    meds = json_object_get(group, "instances");
    CHECK(json_array_size(meds) == 2);
    /* The first medication's second result is its doses: one left, 10 (the 5 was removed). */
    inner = json_array_get(json_object_get(json_array_get(meds, 0), "results"), 1);
    CHECK_STR(json_str(inner, "identifier"), "doses");
    CHECK_STR(json_str(inner, "type"), "group");
    CHECK(json_array_size(json_object_get(inner, "instances")) == 1);
    CHECK(json_number_value(json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(inner, "instances"), 0), "results"), 0), "answer")) == 10);
    json_decref(result);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_bad_inner_input_changes_nothing(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_fixed(task);
    check_snapshot before;
    CHECK_RC(stepkit_session_add_instance(session, "medication", NULL), STEPKIT_OK);
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_remove_instance(session, "medication.doses", 0, NULL), STEPKIT_ESTATE, "tooFewInstances", before);
    check_call_refused(session, stepkit_session_enter_instance(session, "medication.doses", 1, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_remove_instance(session, "medication.doses", 5, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_enter_instance(session, "medication[0].doses", 0, NULL), STEPKIT_ESTATE, "outsideOuterInstance", before);
    check_call_refused(session, stepkit_session_add_instance(session, "medication[0].doses", NULL), STEPKIT_ESTATE, "outsideOuterInstance", before);
    check_call_refused(session, stepkit_session_add_instance(session, "medication[9].doses", NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_add_instance(session, "medication.name", NULL), STEPKIT_EINVAL, "unknownBlock", before);
    /* A dose the second medication does not have. */
    check_call_refused(session, stepkit_session_set_answer(session, "{\"medication\": [{}, {\"doses\": [{}, {\"amount\": 2}]}]}", NULL),
                       STEPKIT_EANSWER, "instanceOutOfRange", before);
    snapshot_free(&before);
    CHECK_RC(stepkit_session_add_instance(session, "medication.doses", NULL), STEPKIT_OK);
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_add_instance(session, "medication.doses", NULL), STEPKIT_ESTATE, "tooManyInstances", before);
    snapshot_free(&before);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_restore_keeps_the_inner_instance(void)
{
    stepkit_task *task = compile_ok(TASK);
    stepkit_session *session = open_fixed(task), *back;
    CHECK_RC(stepkit_session_add_instance(session, "medication", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(session, "medication.doses", NULL), STEPKIT_OK);
    back = restore_same(task, session);
    CHECK(instances_int(back, "medication.doses", "current") == 1);
    CHECK(instances_int(back, "medication.doses", "outerIndex") == 1);
    stepkit_session_free(back);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_walk_with_doses_in_each_medication);
    RUN(test_bad_inner_input_changes_nothing);
    RUN(test_restore_keeps_the_inner_instance);
    return check_report();
}
