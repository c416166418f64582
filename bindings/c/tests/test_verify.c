/*
 * test_verify.c — stepkit_task_verify_result from C (docs/verify.md): a result the engine wrote
 * verifies clean; the same result edited (a wrong-type answer, a step removed, a lying
 * calculation) is reported with each edit's code and place; bad input is an error with *out NULL.
 */
#include "check.h"

/* The report of verifying `submission` with `options`, parsed (the caller decrefs). */
static json_t *verify(stepkit_task *task, const char *submission, const char *options)
{
    char *out = NULL;
    CHECK_RC(stepkit_task_verify_result(task, submission, options, &out), STEPKIT_OK);
    return parse_out(out);
}

/* The code and path of the report's divergence `i`, as "code@path" in `buffer`. */
static const char *divergence(const json_t *report, size_t i, char *buffer, size_t size)
{
    const json_t *d = json_array_get(json_object_get(report, "divergences"), i);
    snprintf(buffer, size, "%s@%s", d ? json_str(d, "code") : "(none)", d ? json_str(d, "path") : "");
    return buffer;
}

/* `result` with `edit` applied, as text (free it). */
static char *edited(const json_t *result, void (*edit)(json_t *))
{
    json_t *copy = json_deep_copy(result);
    char *text;
    edit(copy);
    text = json_dumps(copy, JSON_COMPACT);
    json_decref(copy);
    return text;
}

/* results: intro, smoker, mood (skipped), about, name, done. */
static void wrong_type_name(json_t *r)
{
    json_t *name = json_array_get(json_object_get(json_array_get(json_object_get(r, "results"), 4), "results"), 0);
    json_object_set_new(name, "answer", json_integer(42));
}

static void without_smoker(json_t *r) { json_array_remove(json_object_get(r, "results"), 1); }

static void other_task(json_t *r) { json_object_set_new(r, "identifier", json_string("other")); }

static void test_clean_and_edited(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    char buffer[256];
    char *result_text_;
    json_t *result, *report;
    char *text;
    CHECK(walk_survey(session, "\"Ann\"") == 0);
    result_text_ = result_text(session);
    result = parse_json(result_text_);

    report = verify(task, result_text_, NULL);
    CHECK(json_is_true(json_object_get(report, "verified")));
    CHECK(json_array_size(json_object_get(report, "divergences")) == 0);
    CHECK(json_equal(json_object_get(json_object_get(report, "result"), "results"), json_object_get(result, "results")));
    json_decref(report);

    text = edited(result, wrong_type_name);
    report = verify(task, text, NULL);
    CHECK(json_is_false(json_object_get(report, "verified")));
    CHECK_STR(divergence(report, 0, buffer, sizeof buffer), "wrongType@results[4].results[0].answer");
    json_decref(report);
    free(text);

    text = edited(result, without_smoker);
    report = verify(task, text, "{\"ignore\": [\"dates\"]}");
    CHECK_STR(divergence(report, 0, buffer, sizeof buffer), "missingStep@results[1]");
    CHECK(json_array_size(json_object_get(report, "divergences")) == 1);
    json_decref(report);
    free(text);

    text = edited(result, other_task);
    report = verify(task, text, NULL);
    CHECK_STR(divergence(report, 0, buffer, sizeof buffer), "otherTask@identifier");
    CHECK(json_is_null(json_object_get(report, "result")));
    json_decref(report);
    free(text);

    json_decref(result);
    stepkit_string_free(result_text_);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_bad_input(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    char *out = NULL;
    char *deep;
    size_t i;
    json_t *e;
    CHECK_FAILS(out, stepkit_task_verify_result(NULL, "{}", NULL, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_task_verify_result(task, NULL, NULL, &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_task_verify_result(task, "{}", NULL, NULL), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_task_verify_result(task, "{not json", NULL, &out), STEPKIT_EPARSE);
    CHECK_FAILS(out, stepkit_task_verify_result(task, "[]", NULL, &out), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    CHECK_FAILS(out, stepkit_task_verify_result(task, "{}", "{\"ignore\": 3}", &out), STEPKIT_EINVAL);
    deep = malloc(2 * 300 + 1);
    if (deep) {
        for (i = 0; i < 300; i++) {
            deep[i] = '[';
            deep[300 + i] = ']';
        }
        deep[600] = '\0';
        CHECK_FAILS(out, stepkit_task_verify_result(task, deep, NULL, &out), STEPKIT_EINVAL);
        e = check_last_error(STEPKIT_EINVAL, "EINVAL", NULL);
        CHECK_STR(json_str(json_array_get(json_object_get(e, "errors"), 0), "code"), "tooDeep");
        json_decref(e);
        free(deep);
    }
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_clean_and_edited);
    RUN(test_bad_input);
    return check_report();
}
