/*
 * test_review.c — review and page steps from C (docs/task-format.md, "Review steps", "Page
 * steps"): the review lists the path with display texts; an edit that changes a branch drops the
 * answer left off the path (with its event) and returns to the review; the read-only review of a
 * saved run and of a result; a page answered as one, results named page.substep; bad input.
 */
#include "check.h"

/* By the rule: a non-smoker goes from "smoker" straight to "exercise". */
static const char *HABITS =
    "{\"identifier\": \"habits\", \"steps\": ["
    " {\"type\": \"question\", \"identifier\": \"smoker\", \"title\": \"Do you smoke?\", \"answerFormat\": {\"type\": \"boolean\"}},"
    " {\"type\": \"question\", \"identifier\": \"cigarettes\", \"title\": \"A day\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\"}},"
    " {\"type\": \"page\", \"identifier\": \"about\", \"steps\": ["
    "   {\"type\": \"question\", \"identifier\": \"age\", \"question\": \"Age\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\"}},"
    "   {\"type\": \"question\", \"identifier\": \"sport\", \"question\": \"Sport\", \"answerFormat\": {\"type\": \"textChoice\", \"style\": \"singleChoice\","
    "     \"textChoices\": [{\"text\": \"Never\", \"value\": \"never\"}, {\"text\": \"Weekly\", \"value\": \"weekly\"}]}}]},"
    " {\"type\": \"review\", \"identifier\": \"review\"},"
    " {\"type\": \"completion\", \"identifier\": \"done\"}],"
    " \"navigationRules\": {\"smoker\": {\"type\": \"predicate\", \"branches\": ["
    "   {\"when\": {\"result\": \"smoker\", \"equals\": false}, \"destination\": \"about\"}]}}}";

/* Moves and answers that must succeed; returns the state (the caller decrefs). */
static json_t *answer(stepkit_session *s, const char *json)
{
    char *out = NULL;
    CHECK_RC(stepkit_session_set_answer(s, json, &out), STEPKIT_OK);
    return parse_out(out);
}

static json_t *forward(stepkit_session *s)
{
    return parse_out(session_output(stepkit_session_go_forward, s));
}

/* The review's steps as "step=displayText|displayText;..." in `buffer`. */
static const char *listed(const json_t *review, char *buffer, size_t size)
{
    size_t i, j;
    buffer[0] = '\0';
    for (i = 0; i < json_array_size(json_object_get(review, "steps")); i++) {
        const json_t *entry = json_array_get(json_object_get(review, "steps"), i);
        const json_t *answers = json_object_get(entry, "answers");
        strncat(buffer, json_str(entry, "step"), size - strlen(buffer) - 1);
        strncat(buffer, "=", size - strlen(buffer) - 1);
        for (j = 0; j < json_array_size(answers); j++) {
            const char *text = json_str(json_array_get(answers, j), "displayText");
            if (j) strncat(buffer, "|", size - strlen(buffer) - 1);
            strncat(buffer, text ? text : "-", size - strlen(buffer) - 1);
        }
        strncat(buffer, ";", size - strlen(buffer) - 1);
    }
    return buffer;
}

/* Checks that the last error has `status` and that its first problem's code is `code`. */
static void check_problem(int status, const char *name, const char *code)
{
    json_t *e = check_last_error(status, name, NULL);
    CHECK_STR(json_str(json_array_get(json_object_get(e, "errors"), 0), "code"), code);
    json_decref(e);
}

static int has_event(const json_t *state, const char *type, const char *step)
{
    size_t i;
    const json_t *events = json_object_get(state, "events");
    for (i = 0; i < json_array_size(events); i++) {
        const json_t *e = json_array_get(events, i);
        if (strcmp(json_str(e, "type") ? json_str(e, "type") : "", type) == 0 &&
            strcmp(json_str(e, "step") ? json_str(e, "step") : "", step) == 0)
            return 1;
    }
    return 0;
}

static void test_edit_that_changes_the_branch(void)
{
    stepkit_task *task = compile_ok(HABITS);
    stepkit_session *s = open_ok(task, NULL);
    char buffer[512];
    char *out = NULL, *saved = NULL, *result = NULL;
    json_t *state, *review, *results, *page, *parsed;
    json_decref(answer(s, "true"));
    json_decref(forward(s));
    json_decref(answer(s, "10"));
    json_decref(forward(s));
    json_decref(answer(s, "{\"age\": 40, \"sport\": [\"weekly\"]}"));
    state = forward(s);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "review");
    CHECK_STR(listed(json_object_get(state, "review"), buffer, sizeof buffer), "smoker=Yes;cigarettes=10;about=40|Weekly;");
    json_decref(state);

    /* The edit: not a smoker, so by the rule "cigarettes" leaves the path. */
    CHECK_RC(stepkit_session_review_edit(s, "smoker", &out), STEPKIT_OK);
    state = parse_out(out);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "smoker");
    CHECK_STR(json_str(state, "returnsToReview"), "review");
    json_decref(state);
    json_decref(answer(s, "false"));
    state = forward(s);
    CHECK_STR(json_str(json_object_get(state, "step"), "identifier"), "review");
    CHECK(json_object_get(state, "returnsToReview") == NULL);
    CHECK_STR(listed(json_object_get(state, "review"), buffer, sizeof buffer), "smoker=No;about=40|Weekly;");
    CHECK(has_event(state, "answerDropped", "cigarettes"));
    json_decref(state);

    /* Saved at the review, the read-only review of the saved run is the same list. */
    CHECK_RC(stepkit_session_save(s, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_task_review(task, saved, NULL, &out), STEPKIT_OK);
    review = parse_out(out);
    CHECK_STR(json_str(review, "source"), "restorationData");
    CHECK_STR(listed(review, buffer, sizeof buffer), "smoker=No;about=40|Weekly;");
    json_decref(review);

    json_decref(forward(s));
    json_decref(forward(s));
    result = result_text(s);
    CHECK_RC(stepkit_task_review(task, result, NULL, &out), STEPKIT_OK);
    review = parse_out(out);
    CHECK_STR(json_str(review, "source"), "result");
    CHECK_STR(listed(review, buffer, sizeof buffer), "smoker=No;about=40|Weekly;");
    json_decref(review);
    /* The page's results are named page.substep, and the result verifies. */
    parsed = parse_json(result);
    results = json_object_get(parsed, "results");
    page = json_array_get(results, 1);
    CHECK_STR(json_str(page, "identifier"), "about");
    CHECK_STR(json_str(json_array_get(json_object_get(page, "results"), 0), "identifier"), "about.age");
    CHECK_STR(json_str(json_array_get(json_object_get(page, "results"), 1), "identifier"), "about.sport");
    json_decref(parsed);
    CHECK_RC(stepkit_task_verify_result(task, result, NULL, &out), STEPKIT_OK);
    review = parse_out(out);
    CHECK(json_is_true(json_object_get(review, "verified")));
    json_decref(review);
    stepkit_string_free(saved);
    stepkit_string_free(result);
    stepkit_session_free(s);
    stepkit_task_free(task);
}

static void test_bad_input(void)
{
    stepkit_task *task = compile_ok(HABITS);
    stepkit_session *s = open_ok(task, NULL);
    char *out = NULL, *before = NULL, *after = NULL;
    /* Not on a review step: refused, and nothing changes. */
    json_decref(answer(s, "true"));
    before = state_text(s);
    CHECK_FAILS(out, stepkit_session_review_edit(s, "smoker", &out), STEPKIT_ESTATE);
    check_problem(STEPKIT_ESTATE, "ESTATE", "notReview");
    after = state_text(s);
    CHECK_STR(after, before);
    stepkit_string_free(after);
    stepkit_string_free(before);
    CHECK_FAILS(out, stepkit_session_review_edit(NULL, "smoker", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_review_edit(s, NULL, &out), STEPKIT_EINVAL);
    json_decref(forward(s));
    json_decref(answer(s, "3"));
    json_decref(forward(s));
    json_decref(answer(s, "{\"age\": 40, \"sport\": [\"never\"]}"));
    json_decref(forward(s));
    before = state_text(s);
    CHECK_FAILS(out, stepkit_session_review_edit(s, "done", &out), STEPKIT_ESTATE);
    check_problem(STEPKIT_ESTATE, "ESTATE", "notReviewed");
    CHECK_FAILS(out, stepkit_session_review_edit(s, "nope", &out), STEPKIT_ESTATE);
    after = state_text(s);
    CHECK_STR(after, before);
    stepkit_string_free(after);
    stepkit_string_free(before);

    CHECK_FAILS(out, stepkit_task_review(NULL, "{}", NULL, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_task_review(task, NULL, NULL, &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_task_review(task, "{}", NULL, NULL), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_task_review(task, "{not json", NULL, &out), STEPKIT_EPARSE);
    CHECK_FAILS(out, stepkit_task_review(task, "[]", NULL, &out), STEPKIT_EINVAL);
    check_problem(STEPKIT_EINVAL, "EINVAL", "notARun");
    CHECK_FAILS(out, stepkit_task_review(task, "{\"identifier\": \"other\", \"results\": []}", NULL, &out), STEPKIT_EINVAL);
    check_problem(STEPKIT_EINVAL, "EINVAL", "otherTask");
    CHECK_FAILS(out, stepkit_task_review(task, "{\"format\": \"stepkit-restoration\"}", NULL, &out), STEPKIT_ERESTORE);
    CHECK_FAILS(out, stepkit_task_review(task, "{}", "{\"colour\": 1}", &out), STEPKIT_EINVAL);
    stepkit_session_free(s);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_edit_that_changes_the_branch);
    RUN(test_bad_input);
    return check_report();
}
