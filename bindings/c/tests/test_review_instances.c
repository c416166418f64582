/*
 * test_review_instances.c — a review step over repeating blocks through the C ABI (issue 31):
 * the review lists every instance's answers, each with its instance and title, in order; "edit"
 * into a chosen instance (stepkit_session_review_edit_instance) of a repeating group (the form
 * again, in that instance) and of a repeating section (that instance's visit of the step), then
 * back to the review; saved and restored mid-edit exactly; and bad input (an instance out of
 * range, a step in no repeating block, a step the review does not list, a block the step does
 * not have, a NULL argument, a step other than a review) refused with a clear error that
 * changes nothing (state and restoration data compared).
 */
#include "check.h"

/* Medications: a form with a repeating group (its count from "howMany"), then a review. */
static const char *MEDS =
    "{\"identifier\": \"meds\", \"steps\": ["
    "  {\"type\": \"question\", \"identifier\": \"howMany\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 1, \"maximum\": 3}},"
    "  {\"type\": \"form\", \"identifier\": \"list\", \"formItems\": ["
    "    {\"identifier\": \"med\", \"text\": \"Medication\","
    "     \"repeat\": {\"minCount\": 1, \"maxCount\": 3, \"count\": {\"answer\": \"howMany\"}, \"title\": \"Medication {{index}}: {{name}}\"},"
    "     \"items\": ["
    "       {\"identifier\": \"name\", \"text\": \"Name\", \"answerFormat\": {\"type\": \"text\"}},"
    "       {\"identifier\": \"dose\", \"text\": \"Dose\", \"optional\": true, \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\", \"minimum\": 0, \"unit\": \"mg\"}}]}]},"
    "  {\"type\": \"review\", \"identifier\": \"check\"},"
    "  {\"type\": \"completion\", \"identifier\": \"done\"}]}";

/* A household: a repeating section of steps (a skip rule passes over "school" for adults). */
static const char *HOUSE =
    "{\"identifier\": \"house\", \"steps\": ["
    "  {\"type\": \"question\", \"identifier\": \"howMany\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 1, \"maximum\": 3}},"
    "  {\"type\": \"section\", \"identifier\": \"person\", \"repeat\": {\"maxCount\": 3, \"count\": {\"answer\": \"howMany\"}, \"title\": \"Person {{index}}: {{name}}\"},"
    "   \"steps\": ["
    "     {\"type\": \"question\", \"identifier\": \"name\", \"answerFormat\": {\"type\": \"text\"}},"
    "     {\"type\": \"question\", \"identifier\": \"age\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 0, \"unit\": \"years\"}},"
    "     {\"type\": \"question\", \"identifier\": \"school\", \"answerFormat\": {\"type\": \"boolean\"}}]},"
    "  {\"type\": \"review\", \"identifier\": \"check\"},"
    "  {\"type\": \"completion\", \"identifier\": \"done\"}],"
    " \"skipRules\": {\"school\": {\"result\": \"age\", \"minimum\": 18}}}";

static void step(stepkit_session *session, const char *answer)
{
    if (answer) CHECK_RC(stepkit_session_set_answer(session, answer, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
}

/* The review's entries (the state's review.steps; a new reference the caller decrefs). */
static json_t *review_of(stepkit_session *session)
{
    json_t *state = state_of(session);
    json_t *steps = json_object_get(json_object_get(state, "review"), "steps");
    json_incref(steps);
    json_decref(state);
    return steps;
}

/* The review entry of step `identifier` (its `nth` entry, from 0), borrowed from `steps`. */
static json_t *entry_of(json_t *steps, const char *identifier, size_t nth)
{
    size_t i;
    json_t *entry;
    json_array_foreach(steps, i, entry) {
        const char *s = json_str(entry, "step");
        if (s && strcmp(s, identifier) == 0 && nth-- == 0)
            return entry;
    }
    return NULL;
}

static stepkit_session *meds_at_review(stepkit_task *task)
{
    stepkit_session *session = open_ok(task, NULL);
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    step(session, "2");
    CHECK(instances_int(session, "med", "count") == 2);
    step(session, "{\"med\": [{\"name\": \"Aspirin\", \"dose\": 100}, {\"name\": \"Ibuprofen\", \"dose\": 400}]}");
    CHECK_STEP(session, "check");
    return session;
}

static void test_group_listed_per_instance_and_edited(void)
{
    stepkit_task *task = compile_ok(MEDS);
    stepkit_session *session = meds_at_review(task), *back = NULL;
    json_t *steps = review_of(session), *answers, *a;
    char *saved = NULL, *again = NULL;
    /* name and dose of each medication, in order, each titled. */
    answers = json_object_get(entry_of(steps, "list", 0), "answers");
    CHECK(json_array_size(answers) == 4);
    a = json_array_get(answers, 0);
    CHECK_STR(json_str(a, "identifier"), "med[0].name");
    CHECK_STR(json_str(a, "displayText"), "Aspirin");
    CHECK_STR(json_str(a, "block"), "med");
    CHECK(json_integer_value(json_object_get(a, "instance")) == 0);
    CHECK_STR(json_str(a, "instanceTitle"), "Medication 1: Aspirin");
    a = json_array_get(answers, 3);
    CHECK_STR(json_str(a, "identifier"), "med[1].dose");
    CHECK_STR(json_str(a, "displayText"), "400 mg");
    CHECK(json_integer_value(json_object_get(a, "instance")) == 1);
    CHECK_STR(json_str(a, "instanceTitle"), "Medication 2: Ibuprofen");
    /* howMany is no block: no instance members. */
    CHECK(json_object_get(json_array_get(json_object_get(entry_of(steps, "howMany", 0), "answers"), 0), "instance") == NULL);
    json_decref(steps);
    /* Edit the second medication: the form, in instance 1, on its way back to the review. */
    CHECK_RC(stepkit_session_review_edit_instance(session, "list", NULL, 1, NULL), STEPKIT_OK);
    CHECK_STEP(session, "list");
    CHECK(instances_int(session, "med", "current") == 1);
    /* Saved and restored mid-edit: the same run. */
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &back), STEPKIT_OK);
    CHECK_RC(stepkit_session_save(back, &again), STEPKIT_OK);
    CHECK_STR(again, saved);
    CHECK_SAME_STATE(back, session);
    step(session, "{\"med\": [{}, {\"dose\": 200}]}");
    CHECK_STEP(session, "check");
    steps = review_of(session);
    answers = json_object_get(entry_of(steps, "list", 0), "answers");
    CHECK_STR(json_str(json_array_get(answers, 1), "displayText"), "100 mg");
    CHECK_STR(json_str(json_array_get(answers, 3), "displayText"), "200 mg");
    json_decref(steps);
    /* The block named: the same call. */
    CHECK_RC(stepkit_session_review_edit_instance(session, "list", "med", 0, NULL), STEPKIT_OK);
    CHECK(instances_int(session, "med", "current") == 0);
    stepkit_string_free(again);
    stepkit_string_free(saved);
    stepkit_session_free(back);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_section_listed_per_instance_and_edited(void)
{
    stepkit_task *task = compile_ok(HOUSE);
    stepkit_session *session = open_ok(task, NULL);
    json_t *steps, *entry;
    char *out = NULL;
    json_t *state;
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    step(session, "2");
    step(session, "\"Maria\"");
    step(session, "41");          /* an adult: school passed over */
    step(session, "\"Lea\"");
    step(session, "9");
    step(session, "true");
    CHECK_STEP(session, "check");
    steps = review_of(session);
    /* howMany, then Maria's name and age, then Lea's name, age and school. */
    CHECK(json_array_size(steps) == 6);
    entry = entry_of(steps, "age", 0);
    CHECK_STR(json_str(entry, "section"), "person");
    CHECK(json_integer_value(json_object_get(entry, "instance")) == 0);
    CHECK_STR(json_str(entry, "instanceTitle"), "Person 1: Maria");
    CHECK_STR(json_str(json_array_get(json_object_get(entry, "answers"), 0), "displayText"), "41 years");
    entry = entry_of(steps, "age", 1);
    CHECK(json_integer_value(json_object_get(entry, "instance")) == 1);
    CHECK_STR(json_str(entry, "instanceTitle"), "Person 2: Lea");
    CHECK(entry_of(steps, "school", 1) == NULL);
    CHECK_STR(json_str(json_array_get(steps, 5), "step"), "school");
    json_decref(steps);
    /* Maria's age: back to her visit of "age", in instance 0, with her answer. */
    CHECK_RC(stepkit_session_review_edit_instance(session, "age", "person", 0, &out), STEPKIT_OK);
    state = parse_out(out);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "age");
    CHECK(json_integer_value(json_object_get(state, "answer")) == 41);
    CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(state, "instances"), "person"), "current")) == 0);
    CHECK_STR(json_str(state, "returnsToReview"), "check");
    json_decref(state);
    step(session, "42");
    CHECK_STEP(session, "check");
    steps = review_of(session);
    CHECK_STR(json_str(json_array_get(json_object_get(entry_of(steps, "age", 0), "answers"), 0), "displayText"), "42 years");
    CHECK_STR(json_str(json_array_get(json_object_get(entry_of(steps, "age", 1), "answers"), 0), "displayText"), "9 years");
    json_decref(steps);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_bad_edits_change_nothing(void)
{
    stepkit_task *task = compile_ok(MEDS), *house = compile_ok(HOUSE);
    stepkit_session *session = meds_at_review(task), *h;
    check_snapshot before = snapshot_of(session);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "list", NULL, 2, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "list", NULL, -1, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "list", NULL, 4000000000LL, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "list", "dose", 0, NULL), STEPKIT_EINVAL, "unknownBlock", before);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "howMany", NULL, 0, NULL), STEPKIT_ESTATE, "noRepeatingBlock", before);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "done", NULL, 0, NULL), STEPKIT_ESTATE, "notReviewed", before);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "nowhere", NULL, 0, NULL), STEPKIT_ESTATE, "notReviewed", before);
    check_call_refused(session, stepkit_session_review_edit_instance(session, NULL, NULL, 0, NULL), STEPKIT_EINVAL, "nullArgument", before);
    CHECK(stepkit_session_review_edit_instance(NULL, "list", NULL, 0, NULL) == STEPKIT_EINVAL);
    snapshot_free(&before);
    /* Not on the review: the step before it. */
    CHECK_RC(stepkit_session_go_backward(session, NULL), STEPKIT_OK);
    before = snapshot_of(session);
    check_call_refused(session, stepkit_session_review_edit_instance(session, "list", NULL, 0, NULL), STEPKIT_ESTATE, "notReview", before);
    snapshot_free(&before);
    stepkit_session_free(session);
    /* A section: an instance it does not have, one where navigation passed over the step. */
    h = open_ok(house, NULL);
    step(h, "1");
    step(h, "\"Maria\"");
    step(h, "41");
    CHECK_STEP(h, "check");
    before = snapshot_of(h);
    check_call_refused(h, stepkit_session_review_edit_instance(h, "age", NULL, 1, NULL), STEPKIT_EINVAL, "instanceOutOfRange", before);
    check_call_refused(h, stepkit_session_review_edit_instance(h, "school", NULL, 0, NULL), STEPKIT_ESTATE, "notReviewed", before);
    check_call_refused(h, stepkit_session_review_edit_instance(h, "age", "med", 0, NULL), STEPKIT_EINVAL, "unknownBlock", before);
    snapshot_free(&before);
    stepkit_session_free(h);
    stepkit_task_free(task);
    stepkit_task_free(house);
}

int main(void)
{
    RUN(test_group_listed_per_instance_and_edited);
    RUN(test_section_listed_per_instance_and_edited);
    RUN(test_bad_edits_change_nothing);
    return check_report();
}
