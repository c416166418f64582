/*
 * test_api.c — StepKit's C ABI: versions, task compilation and its errors, NULL arguments,
 * invalid UTF-8, JSON limits and wrong JSON types.
 */
#include "check.h"

/* ---------------------------------------------------------------------------------------------
 * Versions
 */

static void test_versions(void)
{
    const char *version = stepkit_version();
    CHECK(version != NULL);
    CHECK_STR(version, STEPKIT_VERSION);
    CHECK(stepkit_version() == version); /* a static string */
    CHECK(stepkit_version_number() == STEPKIT_VERSION_NUMBER);
    CHECK(STEPKIT_VERSION_NUMBER == 0 * 1000000 + 1 * 1000 + 0);
    CHECK(STEPKIT_ABI_VERSION == 0);
}

/* stepkit_status_name(): every status's name, the same text the error JSON's "code" gives, a
 * static string; NULL for a number that is no status. */
static void test_status_names(void)
{
    static const struct { int status; const char *name; } names[] = {
        {STEPKIT_OK, "OK"},           {STEPKIT_EINVAL, "EINVAL"},   {STEPKIT_EPARSE, "EPARSE"},
        {STEPKIT_EDEFINITION, "EDEFINITION"}, {STEPKIT_EANSWER, "EANSWER"},
        {STEPKIT_ESTATE, "ESTATE"},   {STEPKIT_ERESTORE, "ERESTORE"}, {STEPKIT_EIO, "EIO"},
        {STEPKIT_EINTERNAL, "EINTERNAL"},
    };
    size_t i;
    stepkit_task *task = NULL;
    json_t *error;

    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_STR(stepkit_status_name(names[i].status), names[i].name);
        CHECK(stepkit_status_name(names[i].status) == stepkit_status_name(names[i].status));
    }
    CHECK(stepkit_status_name(1) == NULL);
    CHECK(stepkit_status_name(-9) == NULL);
    CHECK(stepkit_status_name(INT32_MIN) == NULL);

    /* The name a failed call's error JSON gives is the same. */
    CHECK_RC(stepkit_task_compile("not json", &task), STEPKIT_EPARSE);
    error = parse_json(stepkit_last_error());
    if (error) {
        CHECK_STR(json_str(error, "code"), stepkit_status_name(STEPKIT_EPARSE));
        json_decref(error);
    }
}

/* stepkit_session_control() drives an active step; stepkit_session_active(), its deprecated
 * name, is the same function. */
static void test_control_and_its_old_name(void)
{
    stepkit_task *task = compile_ok("{\"identifier\": \"t\", \"steps\": ["
                                    "{\"type\": \"active\", \"identifier\": \"walk\", \"stepDuration\": 30}]}");
    stepkit_session *session = open_ok(task, NULL);
    char *out = NULL;
    json_t *state;

    CHECK_RC(stepkit_session_control(session, "start", &out), STEPKIT_OK);
    state = parse_json(out);
    if (state) {
        CHECK_STR(json_str(json_object_get(state, "active"), "status"), "running");
        json_decref(state);
    }
    stepkit_string_free(out);
    out = NULL;
    CHECK_RC(stepkit_session_active(session, "suspend", &out), STEPKIT_OK);
    state = parse_json(out);
    if (state) {
        CHECK_STR(json_str(json_object_get(state, "active"), "status"), "suspended");
        json_decref(state);
    }
    stepkit_string_free(out);
    CHECK_FAILS(out, stepkit_session_control(session, "bogus", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_active(session, "bogus", &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_control(session, "resume", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_active(session, "resume", NULL), STEPKIT_ESTATE); /* running already */
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* ---------------------------------------------------------------------------------------------
 * Compilation
 */

static void test_compile_ok(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    char *out = NULL;
    json_t *info;

    CHECK_RC(stepkit_task_info(task, &out), STEPKIT_OK);
    info = parse_json(out);
    if (info) {
        json_t *steps = json_object_get(info, "steps");
        CHECK_STR(json_str(info, "identifier"), "survey");
        CHECK(json_integer_value(json_object_get(info, "stepCount")) == 6);
        CHECK(json_is_array(steps) && json_array_size(steps) == 6);
        CHECK_STR(json_str(json_array_get(steps, 0), "identifier"), "intro");
        CHECK_STR(json_str(json_array_get(steps, 0), "type"), "instruction");
        CHECK_STR(json_str(json_array_get(steps, 3), "identifier"), "about");
        CHECK_STR(json_str(json_array_get(steps, 3), "type"), "form");
        CHECK(json_is_array(json_object_get(info, "sections")) &&
              json_array_size(json_object_get(info, "sections")) == 0);
        CHECK(json_is_false(json_object_get(info, "branching")));
    }
    json_decref(info);
    stepkit_string_free(out);
    out = NULL;

    /* The checker finds nothing wrong with it. */
    CHECK_RC(stepkit_task_check(task, &out), STEPKIT_OK);
    info = parse_json(out);
    if (info) {
        CHECK(json_is_array(json_object_get(info, "problems")));
        CHECK(json_is_integer(json_object_get(info, "errors")));
        CHECK(json_integer_value(json_object_get(info, "errors")) == 0);
        CHECK(json_is_integer(json_object_get(info, "warnings")));
    }
    json_decref(info);
    stepkit_string_free(out);
    stepkit_task_free(task);
}

/* Compiling `json` fails with `status`; the error JSON has `code` and (if not NULL) `path`. */
static void expect_compile_error(const char *json, int status, const char *code, const char *path)
{
    stepkit_task *task = SENTINEL;
    json_t *error;
    CHECK_RC(stepkit_task_compile(json, &task), status);
    CHECK(task == NULL);
    error = check_last_error(status, code, path);
    json_decref(error);
}

static void test_compile_parse_errors(void)
{
    expect_compile_error("", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("not json", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\"} trailing", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\"} {}", STEPKIT_EPARSE, "EPARSE", NULL);
    /* A \u0000 escape in a string. */
    expect_compile_error("{\"identifier\": \"x\\u0000y\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    /* NaN and Infinity are not JSON. */
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"question\", \"identifier\": "
                         "\"q\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\", "
                         "\"maximum\": NaN}}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"question\", \"identifier\": "
                         "\"q\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\", "
                         "\"maximum\": Infinity}}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    /* Duplicate keys, and numbers out of range, are parse errors. */
    expect_compile_error("{\"identifier\": \"x\", \"identifier\": \"y\", \"steps\": []}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"question\", \"identifier\": "
                         "\"q\", \"answerFormat\": {\"type\": \"numeric\", \"style\": \"decimal\", "
                         "\"maximum\": 1e400}}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
}

/* A task whose unknown key "deep" holds `depth` nested arrays; the caller frees it. */
static char *deep_task(size_t depth)
{
    const char *head = "{\"identifier\": \"x\", \"steps\": [], \"deep\": ";
    size_t head_length = strlen(head);
    char *json = malloc(head_length + 2 * depth + 2);
    if (!json)
        return NULL;
    memcpy(json, head, head_length);
    memset(json + head_length, '[', depth);
    memset(json + head_length + depth, ']', depth);
    json[head_length + 2 * depth] = '}';
    json[head_length + 2 * depth + 1] = '\0';
    return json;
}

static void test_compile_nesting_limit(void)
{
    stepkit_task *task = SENTINEL;
    char *json;
    int rc;

    /* Deeper than the default limit (maxDepth 64): refused before it is compiled. */
    json = deep_task(100);
    if (json) {
        json_t *error;
        CHECK_RC(stepkit_task_compile(json, &task), STEPKIT_EINVAL);
        CHECK(task == NULL);
        error = check_last_error(STEPKIT_EINVAL, "EINVAL", NULL);
        CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), "tooDeep");
        json_decref(error);
        free(json);
    }
    /* Far deeper than JSON's own limit (2048): refused (EPARSE or the limit's EINVAL), no crash. */
    json = deep_task(100000);
    if (json) {
        task = SENTINEL;
        rc = stepkit_task_compile(json, &task);
        CHECK(rc == STEPKIT_EPARSE || rc == STEPKIT_EINVAL);
        CHECK(task == NULL);
        task = SENTINEL;
        rc = stepkit_task_compile_with_options(json, "{\"limits\": {\"maxDepth\": 1000000}}", &task);
        CHECK(rc == STEPKIT_EPARSE || rc == STEPKIT_EINVAL);
        CHECK(task == NULL);
        free(json);
    }
}

static void test_compile_definition_errors(void)
{
    json_t *error;
    json_t *errors;
    stepkit_task *task = SENTINEL;

    /* Valid JSON, not a task. */
    expect_compile_error("[]", STEPKIT_EDEFINITION, "EDEFINITION", "");
    expect_compile_error("42", STEPKIT_EDEFINITION, "EDEFINITION", "");
    /* Wrong types, with their paths. */
    expect_compile_error("{\"identifier\": 5, \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "identifier");
    expect_compile_error("{\"identifier\": \"x\", \"steps\": \"a\"}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps");
    expect_compile_error("{\"identifier\": \"x\", \"steps\": []}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps");
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\","
                         " \"optional\": \"yes\"}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].optional");
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"bogus\", \"identifier\": \"a\"}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].type");
    /* Unknown keys are errors. */
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\","
                         " \"colour\": \"red\"}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].colour");
    expect_compile_error("{\"identifier\": \"x\", \"colour\": \"red\", \"steps\": [{\"type\": \"instruction\","
                         " \"identifier\": \"a\"}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "colour");
    /* Answer formats, deep paths. */
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"question\", \"identifier\": \"q\","
                         " \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": \"ten\"}}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].answerFormat.minimum");
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"form\", \"identifier\": \"f\","
                         " \"formItems\": [{\"sectionTitle\": \"S\"}, {\"identifier\": \"i\", \"text\": \"I\","
                         " \"answerFormat\": {\"type\": \"nope\"}}]}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].formItems[1].answerFormat.type");
    /* Duplicate step identifiers: the second one is at fault. */
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"},"
                         " {\"type\": \"instruction\", \"identifier\": \"a\"}]}",
                         STEPKIT_EDEFINITION, "EDEFINITION", "steps[1].identifier");

    /* Every problem at once: an unknown key in steps[0], a missing answer format in steps[1],
     * an unknown type in steps[2]. */
    CHECK_RC(stepkit_task_compile(
                 "{\"identifier\": \"x\", \"steps\": ["
                 "{\"type\": \"instruction\", \"identifier\": \"a\", \"colour\": \"red\"},"
                 "{\"type\": \"question\", \"identifier\": \"q\"},"
                 "{\"type\": \"bogus\", \"identifier\": \"b\"}]}",
                 &task),
             STEPKIT_EDEFINITION);
    CHECK(task == NULL);
    error = check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].colour");
    errors = json_object_get(error, "errors");
    CHECK(json_array_size(errors) >= 3);
    if (json_array_size(errors) >= 3) {
        size_t i;
        int saw_step1 = 0, saw_step2 = 0;
        for (i = 0; i < json_array_size(errors); i++) {
            json_t *item = json_array_get(errors, i);
            const char *path = json_str(item, "path");
            CHECK(json_is_string(json_object_get(item, "code")));
            CHECK(json_str(item, "message") != NULL && json_str(item, "message")[0] != '\0');
            CHECK(path != NULL);
            if (path && strncmp(path, "steps[1]", 8) == 0)
                saw_step1 = 1;
            if (path && strncmp(path, "steps[2]", 8) == 0)
                saw_step2 = 1;
        }
        CHECK(saw_step1);
        CHECK(saw_step2);
    }
    json_decref(error);
}

/* stepkit_task_compile_with_options(): limits refuse a hostile definition early. */
static void test_compile_limits(void)
{
    stepkit_task *task = SENTINEL;
    json_t *error;

#define EXPECT_LIMIT(options, status, code, problem)                                           \
    do {                                                                                       \
        task = SENTINEL;                                                                       \
        CHECK_RC(stepkit_task_compile_with_options(SURVEY_TASK, options, &task), status);      \
        CHECK(task == NULL);                                                                   \
        error = check_last_error(status, code, NULL);                                          \
        CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), problem); \
        json_decref(error);                                                                    \
    } while (0)

    EXPECT_LIMIT("{\"limits\": {\"maxDefinitionBytes\": 100}}", STEPKIT_EINVAL, "EINVAL", "tooLarge");
    EXPECT_LIMIT("{\"limits\": {\"maxDepth\": 3}}", STEPKIT_EINVAL, "EINVAL", "tooDeep");
    EXPECT_LIMIT("{\"limits\": {\"maxStringBytes\": 5}}", STEPKIT_EINVAL, "EINVAL", "stringTooLong");
    EXPECT_LIMIT("{\"limits\": {\"maxSteps\": 2}}", STEPKIT_EDEFINITION, "EDEFINITION", "tooManySteps");
#undef EXPECT_LIMIT

    /* Bad options. */
    CHECK_FAILS(task, stepkit_task_compile_with_options(SURVEY_TASK, "{\"bogus\": 1}", &task), STEPKIT_EINVAL);
    CHECK_FAILS(task, stepkit_task_compile_with_options(SURVEY_TASK, "{\"limits\": ", &task), STEPKIT_EPARSE);

    /* Within the limits. */
    task = NULL;
    CHECK_RC(stepkit_task_compile_with_options(SURVEY_TASK, "{\"limits\": {\"maxSteps\": 6, \"maxDepth\": 64}}", &task),
             STEPKIT_OK);
    CHECK(task != NULL);
    stepkit_task_free(task);
}

/* stepkit_last_error() describes the last failure on this thread; successful calls leave it. */
static void test_last_error_survives_success(void)
{
    stepkit_task *task = NULL;
    char *copy;
    const char *text;

    CHECK_RC(stepkit_task_compile("{\"identifier\": ", &task), STEPKIT_EPARSE);
    text = stepkit_last_error();
    CHECK(text != NULL);
    if (!text)
        return;
    copy = malloc(strlen(text) + 1);
    if (!copy)
        return;
    strcpy(copy, text);
    task = compile_ok(SURVEY_TASK);
    CHECK(stepkit_version() != NULL);
    CHECK_STR(stepkit_last_error(), copy);
    stepkit_task_free(task);
    CHECK_STR(stepkit_last_error(), copy);
    free(copy);
}

/* ---------------------------------------------------------------------------------------------
 * NULL for every pointer argument of every function
 */

static void ignore_event(const char *event_json, void *user_data)
{
    (void)event_json;
    (void)user_data;
}

static void test_null_arguments(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_task *no_task = SENTINEL;
    stepkit_session *session = open_ok(task, NULL);
    stepkit_session *no_session = SENTINEL;
    char *out = SENTINEL;
    char *before = state_text(session);
    char *after;
    json_t *error;

#define EXPECT_EINVAL(call)                                                                    \
    do {                                                                                       \
        CHECK_RC(call, STEPKIT_EINVAL);                                                        \
        error = check_last_error(STEPKIT_EINVAL, "EINVAL", NULL);                              \
        json_decref(error);                                                                    \
    } while (0)

    EXPECT_EINVAL(stepkit_task_compile(NULL, &no_task));
    CHECK(no_task == NULL);
    EXPECT_EINVAL(stepkit_task_compile(SURVEY_TASK, NULL));
    no_task = SENTINEL;
    EXPECT_EINVAL(stepkit_task_compile_with_options(NULL, NULL, &no_task));
    CHECK(no_task == NULL);
    no_task = SENTINEL;
    EXPECT_EINVAL(stepkit_task_compile_with_options(NULL, "{}", &no_task));
    CHECK(no_task == NULL);
    EXPECT_EINVAL(stepkit_task_compile_with_options(SURVEY_TASK, NULL, NULL));
    EXPECT_EINVAL(stepkit_task_compile_with_options(SURVEY_TASK, "{}", NULL));

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_task_info(NULL, &out));
    CHECK(out == NULL);
    EXPECT_EINVAL(stepkit_task_info(task, NULL));

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_task_check(NULL, &out));
    CHECK(out == NULL);
    EXPECT_EINVAL(stepkit_task_check(task, NULL));

    no_session = SENTINEL;
    EXPECT_EINVAL(stepkit_session_open(NULL, NULL, &no_session));
    CHECK(no_session == NULL);
    no_session = SENTINEL;
    EXPECT_EINVAL(stepkit_session_open(NULL, "{}", &no_session));
    CHECK(no_session == NULL);
    EXPECT_EINVAL(stepkit_session_open(task, NULL, NULL));
    EXPECT_EINVAL(stepkit_session_open(task, "{}", NULL));

    {
        char *saved = NULL;
        CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
        CHECK(saved != NULL);
        if (saved) {
            no_session = SENTINEL;
            EXPECT_EINVAL(stepkit_session_restore(NULL, saved, NULL, &no_session));
            CHECK(no_session == NULL);
            no_session = SENTINEL;
            EXPECT_EINVAL(stepkit_session_restore(task, NULL, NULL, &no_session));
            CHECK(no_session == NULL);
            EXPECT_EINVAL(stepkit_session_restore(task, saved, NULL, NULL));
            EXPECT_EINVAL(stepkit_session_restore(task, saved, "{}", NULL));
        }
        stepkit_string_free(saved);
    }

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_save(NULL, &out));
    CHECK(out == NULL);
    EXPECT_EINVAL(stepkit_session_save(session, NULL));

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_state(NULL, &out));
    CHECK(out == NULL);
    EXPECT_EINVAL(stepkit_session_state(session, NULL));

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_set_answer(NULL, "true", &out));
    CHECK(out == NULL);
    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_set_answer(session, NULL, &out));
    CHECK(out == NULL);

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_go_forward(NULL, &out));
    CHECK(out == NULL);

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_go_backward(NULL, &out));
    CHECK(out == NULL);

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_skip(NULL, &out));
    CHECK(out == NULL);

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_finish(NULL, "discarded", &out));
    CHECK(out == NULL);
    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_finish(session, NULL, &out));
    CHECK(out == NULL);

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_result(NULL, &out));
    CHECK(out == NULL);
    EXPECT_EINVAL(stepkit_session_result(session, NULL));

    EXPECT_EINVAL(stepkit_session_set_clock(NULL, NULL, NULL));

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_active(NULL, "start", &out));
    CHECK(out == NULL);
    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_active(session, NULL, &out));
    CHECK(out == NULL);

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_tick(NULL, &out));
    CHECK(out == NULL);

    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_record(NULL, "r", "{}", &out));
    CHECK(out == NULL);
    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_record(session, NULL, "{}", &out));
    CHECK(out == NULL);
    out = SENTINEL;
    EXPECT_EINVAL(stepkit_session_record(session, "r", NULL, &out));
    CHECK(out == NULL);

    EXPECT_EINVAL(stepkit_session_set_event_callback(NULL, NULL, NULL, NULL));
    EXPECT_EINVAL(stepkit_session_set_event_callback(NULL, ignore_event, NULL, NULL));
#undef EXPECT_EINVAL

    /* NULL is a valid value where the header says so. */
    CHECK_RC(stepkit_session_set_clock(session, NULL, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_event_callback(session, ignore_event, NULL, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_event_callback(session, NULL, NULL, NULL), STEPKIT_OK);
    {
        stepkit_task *with_defaults = NULL;
        CHECK_RC(stepkit_task_compile_with_options(SURVEY_TASK, NULL, &with_defaults), STEPKIT_OK);
        CHECK(with_defaults != NULL);
        stepkit_task_free(with_defaults);
    }
    stepkit_string_free(NULL);
    stepkit_task_free(NULL);
    stepkit_session_free(NULL);
    CHECK(stepkit_last_error() != NULL); /* still the last failure's */

    /* None of the refused calls moved the session. */
    after = state_text(session);
    CHECK_STR(after, before);
    CHECK_STEP(session, "intro");

    stepkit_string_free(before);
    stepkit_string_free(after);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* The calls that change a session accept `out` == NULL (stepkit.h, "Ownership"): the call is
 * made, no state is built, and its events still reach the event callback. */
static int null_out_events = 0;

static void count_event(const char *event_json, void *user_data)
{
    (void)user_data;
    if (event_json)
        null_out_events++;
}

static void test_null_out_is_allowed_where_documented(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    json_t *state;

    CHECK_RC(stepkit_session_set_event_callback(session, count_event, NULL, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_STEP(session, "smoker");
    CHECK(null_out_events > 0);
    CHECK_RC(stepkit_session_set_answer(session, "true", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_STEP(session, "mood");
    CHECK_RC(stepkit_session_go_backward(session, NULL), STEPKIT_OK);
    CHECK_STEP(session, "smoker");
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_skip(session, NULL), STEPKIT_OK);
    CHECK_STEP(session, "about");
    CHECK_RC(stepkit_session_tick(session, NULL), STEPKIT_OK);
    /* Refusals are refusals all the same. */
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_ESTATE);
    CHECK_RC(stepkit_session_active(session, "start", NULL), STEPKIT_ESTATE);
    CHECK_RC(stepkit_session_record(session, "r", "{}", NULL), STEPKIT_ESTATE);
    CHECK_RC(stepkit_session_set_answer(session, "{\"age\": 7}", NULL), STEPKIT_EANSWER);
    CHECK_STEP(session, "about");
    CHECK_RC(stepkit_session_finish(session, "discarded", NULL), STEPKIT_OK);
    state = state_of(session);
    CHECK_STR(json_str(state, "finishReason"), "discarded");
    json_decref(state);

    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* ---------------------------------------------------------------------------------------------
 * Invalid UTF-8, JSON limits, wrong types
 */

static void test_invalid_utf8_in_task(void)
{
    /* A stray continuation byte, an invalid lead byte, an overlong '/', an encoded surrogate,
     * a truncated sequence. */
    expect_compile_error("{\"identifier\": \"x\x80\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\xff\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\xc0\xaf\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\xed\xa0\x80\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    expect_compile_error("{\"identifier\": \"x\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\xe2\x82\"}]}",
                         STEPKIT_EPARSE, "EPARSE", NULL);
    /* Outside a string, too. */
    expect_compile_error("{\"identifier\": \"x\", \"steps\": []\xff}", STEPKIT_EPARSE, "EPARSE", NULL);
}

/* Opens a SURVEY_TASK session positioned on `step_identifier` (intro, smoker, mood, about,
 * name), answering what lies before it. */
static stepkit_session *session_at(stepkit_task *task, const char *step_identifier)
{
    stepkit_session *session = open_ok(task, NULL);
    static const char *const order[] = {"intro", "smoker", "mood", "about", "name"};
    size_t i;
    for (i = 0; i < sizeof order / sizeof order[0] && strcmp(order[i], step_identifier) != 0; i++) {
        if (strcmp(order[i], "smoker") == 0)
            CHECK_OK_OUT(stepkit_session_set_answer(session, "false", &out));
        if (strcmp(order[i], "about") == 0)
            CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"age\": 30}", &out));
        if (strcmp(order[i], "mood") == 0)
            CHECK_OK_OUT(stepkit_session_skip(session, &out));
        else
            CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    }
    CHECK_STEP(session, step_identifier);
    return session;
}

/* set_answer(`answer`) is refused with `status`/`code` (and `path` if not NULL), *out is NULL and
 * the state is byte-identical. */
static void expect_answer_refused(stepkit_session *session, const char *answer, int status,
                                  const char *code, const char *path)
{
    char *before = state_text(session);
    char *after;
    char *out = SENTINEL;
    json_t *error;
    CHECK_RC(stepkit_session_set_answer(session, answer, &out), status);
    CHECK(out == NULL);
    error = check_last_error(status, code, path);
    json_decref(error);
    after = state_text(session);
    CHECK_STR(after, before);
    stepkit_string_free(before);
    stepkit_string_free(after);
}

static void test_invalid_utf8_in_answers(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = session_at(task, "name");
    stepkit_session *other = SENTINEL;
    json_t *state;
    char *out = SENTINEL;

    expect_answer_refused(session, "\"\xc3\x28\"", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "\"Ada\xff\"", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "\"\xed\xb0\x80\"", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "\"\xf0\x9f\x98\"", STEPKIT_EPARSE, "EPARSE", NULL);

    /* Valid UTF-8 beyond ASCII round-trips. */
    CHECK_RC(stepkit_session_set_answer(session, "\"Zo\xc3\xab \xe2\x9c\x93 \xf0\x9f\x98\x80\"", &out),
             STEPKIT_OK);
    stepkit_string_free(out);
    state = state_of(session);
    CHECK_STR(json_string_value(json_object_get(state, "answer")),
              "Zo\xc3\xab \xe2\x9c\x93 \xf0\x9f\x98\x80");
    json_decref(state);

    /* In a form's answer object, keys included. */
    stepkit_session_free(session);
    session = session_at(task, "about");
    expect_answer_refused(session, "{\"notes\": \"\xc3\"}", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "{\"no\xfftes\": \"x\"}", STEPKIT_EPARSE, "EPARSE", NULL);

    /* In session options, and a finish reason. */
    CHECK_RC(stepkit_session_open(task, "{\"taskRunUUID\": \"\xff\"}", &other), STEPKIT_EPARSE);
    CHECK(other == NULL);
    json_decref(check_last_error(STEPKIT_EPARSE, "EPARSE", NULL));
    CHECK_FAILS(out, stepkit_session_finish(session, "discarded\xff", &out), STEPKIT_EINVAL);
    CHECK_STEP(session, "about");

    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_answer_json_limits(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = session_at(task, "about");
    enum { DEPTH = 100000 };
    char *deep = malloc(2 * DEPTH + 1);

    expect_answer_refused(session, "{\"age\": 20, \"age\": 30}", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "{\"age\": 1e400}", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "{\"age\": ", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "{\"age\": 20} {}", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "{\"age\": NaN}", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "{\"age\": -Infinity}", STEPKIT_EPARSE, "EPARSE", NULL);
    expect_answer_refused(session, "{\"notes\": \"a\\u0000b\"}", STEPKIT_EPARSE, "EPARSE", NULL);
    if (deep) {
        memset(deep, '[', DEPTH);
        memset(deep + DEPTH, ']', DEPTH);
        deep[2 * DEPTH] = '\0';
        /* Past the answer limits (32 levels) and JSON's (2048): refused, no crash. */
        char *before = state_text(session);
        char *after;
        char *out = SENTINEL;
        int rc = stepkit_session_set_answer(session, deep, &out);
        CHECK(rc == STEPKIT_EPARSE || rc == STEPKIT_EINVAL);
        CHECK(out == NULL);
        after = state_text(session);
        CHECK_STR(after, before);
        stepkit_string_free(before);
        stepkit_string_free(after);
        free(deep);
    }
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_wrong_answer_types(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = session_at(task, "smoker");

    /* A boolean question. */
    expect_answer_refused(session, "\"yes\"", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "1", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "[true]", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "{\"value\": true}", STEPKIT_EANSWER, "EANSWER", NULL);
    /* "Don't know" is not offered by this format. */
    expect_answer_refused(session, "{\"dontKnow\": true}", STEPKIT_EANSWER, "EANSWER", NULL);
    stepkit_session_free(session);

    /* A scale question (1...5). */
    session = session_at(task, "mood");
    expect_answer_refused(session, "\"3\"", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "6", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "2.5", STEPKIT_EANSWER, "EANSWER", NULL);
    stepkit_session_free(session);

    /* A form: the answer is an object, the path names the item. */
    session = session_at(task, "about");
    expect_answer_refused(session, "42", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "[42]", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "\"42\"", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "{\"age\": \"42\"}", STEPKIT_EANSWER, "EANSWER", "age");
    expect_answer_refused(session, "{\"age\": 42.5}", STEPKIT_EANSWER, "EANSWER", "age");
    expect_answer_refused(session, "{\"age\": 17}", STEPKIT_EANSWER, "EANSWER", "age");
    expect_answer_refused(session, "{\"age\": 91}", STEPKIT_EANSWER, "EANSWER", "age");
    expect_answer_refused(session, "{\"age\": true}", STEPKIT_EANSWER, "EANSWER", "age");
    expect_answer_refused(session, "{\"notes\": 5}", STEPKIT_EANSWER, "EANSWER", "notes");
    expect_answer_refused(session, "{\"notes\": \"this text is longer than twenty\"}",
                          STEPKIT_EANSWER, "EANSWER", "notes");
    expect_answer_refused(session, "{\"height\": 180}", STEPKIT_EANSWER, "EANSWER", "height");
    /* One bad item refuses the whole answer: the good item is not set either. */
    expect_answer_refused(session, "{\"age\": 40, \"notes\": 5}", STEPKIT_EANSWER, "EANSWER", "notes");
    stepkit_session_free(session);

    /* A text question. */
    session = session_at(task, "name");
    expect_answer_refused(session, "42", STEPKIT_EANSWER, "EANSWER", NULL);
    expect_answer_refused(session, "[\"Ada\"]", STEPKIT_EANSWER, "EANSWER", NULL);
    stepkit_session_free(session);

    stepkit_task_free(task);
}

static void test_session_options(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = SENTINEL;
    json_t *state;

#define EXPECT_OPTIONS_REFUSED(options, status, code, path)                                    \
    do {                                                                                       \
        session = SENTINEL;                                                                    \
        CHECK_RC(stepkit_session_open(task, options, &session), status);                       \
        CHECK(session == NULL);                                                                \
        json_decref(check_last_error(status, code, path));                                     \
    } while (0)

    EXPECT_OPTIONS_REFUSED("[]", STEPKIT_EINVAL, "EINVAL", NULL);
    EXPECT_OPTIONS_REFUSED("\"options\"", STEPKIT_EINVAL, "EINVAL", NULL);
    EXPECT_OPTIONS_REFUSED("{\"bogus\": 1}", STEPKIT_EINVAL, "EINVAL", "bogus");
    EXPECT_OPTIONS_REFUSED("{\"taskRunUUID\": 5}", STEPKIT_EINVAL, "EINVAL", "taskRunUUID");
    EXPECT_OPTIONS_REFUSED("{\"taskRunUUID\": \"not-a-uuid\"}", STEPKIT_EINVAL, "EINVAL", "taskRunUUID");
    EXPECT_OPTIONS_REFUSED("{\"taskRunUUID\": ", STEPKIT_EPARSE, "EPARSE", NULL);
#undef EXPECT_OPTIONS_REFUSED

    session = open_ok(task, "{}");
    state = state_of(session);
    CHECK_STR(json_str(state, "taskIdentifier"), "survey");
    CHECK(json_str(state, "taskRunUUID") != NULL && strlen(json_str(state, "taskRunUUID")) == 36);
    json_decref(state);
    stepkit_session_free(session);

    session = open_ok(task, "{\"taskRunUUID\": \"0f8fad5b-d9cb-469f-a165-70867728950e\"}");
    state = state_of(session);
    CHECK_STR_NOCASE(json_str(state, "taskRunUUID"), "0f8fad5b-d9cb-469f-a165-70867728950e");
    json_decref(state);
    stepkit_session_free(session);

    stepkit_task_free(task);
}

static void test_finish_reasons(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    static const char *const bad[] = {"", "bogus", "Completed", "saved ", "\"saved\""};
    static const char *const good[] = {"saved", "discarded", "failed", "earlyTermination"};
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out;
        CHECK_FAILS(out, stepkit_session_finish(session, bad[i], &out), STEPKIT_EINVAL);
        json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    }
    stepkit_session_free(session);

    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        char *out = NULL;
        json_t *state;
        session = open_ok(task, NULL);
        CHECK_RC(stepkit_session_finish(session, good[i], &out), STEPKIT_OK);
        state = parse_json(out);
        CHECK_STR(json_str(state, "status"), "finished");
        CHECK_STR(json_str(state, "finishReason"), good[i]);
        CHECK(json_is_null(json_object_get(state, "step")));
        json_decref(state);
        stepkit_string_free(out);
        stepkit_session_free(session);
    }
    stepkit_task_free(task);
}

/* The rule graph (stepkit_task_graph): where navigation starts, then every move leaving each
 * step as its rule (a section's rule for the section's last step) gives it. */
static const char EDGES_TASK[] =
    "{\"identifier\": \"g\", \"steps\": ["
    " {\"type\": \"question\", \"identifier\": \"q\", \"answerFormat\": {\"type\": \"boolean\"}},"
    " {\"type\": \"instruction\", \"identifier\": \"x\"},"
    " {\"type\": \"section\", \"identifier\": \"s\", \"steps\": ["
    "   {\"type\": \"instruction\", \"identifier\": \"a\"}, {\"type\": \"instruction\", \"identifier\": \"b\"}]},"
    " {\"type\": \"completion\", \"identifier\": \"done\"}],"
    " \"navigationRules\": {"
    "  \"q\": {\"type\": \"predicate\", \"branches\": ["
    "    {\"when\": {\"result\": \"q\", \"equals\": false}, \"destination\": \"$end\"},"
    "    {\"when\": {\"result\": \"q\", \"equals\": true}, \"destination\": \"s\"}]},"
    "  \"s\": {\"type\": \"direct\", \"destination\": \"done\"}}}";

/* Edge `i` of `edges` goes from `from` (NULL: the start) to `to` (NULL: the end), of `kind`, by
 * the rule of `rule` (NULL: none). */
static void check_edge(json_t *edges, size_t i, const char *from, const char *to, const char *kind, const char *rule)
{
    json_t *edge = json_array_get(edges, i);
    CHECK(json_is_object(edge));
    if (!json_is_object(edge))
        return;
    if (from)
        CHECK_STR(json_str(edge, "from"), from);
    else
        CHECK(json_is_null(json_object_get(edge, "from")));
    if (to)
        CHECK_STR(json_str(edge, "to"), to);
    else
        CHECK(json_is_null(json_object_get(edge, "to")));
    CHECK_STR(json_str(edge, "kind"), kind);
    if (rule)
        CHECK_STR(json_str(edge, "rule"), rule);
    else
        CHECK(json_object_get(edge, "rule") == NULL);
}

static void test_task_graph(void)
{
    stepkit_task *task = compile_ok(EDGES_TASK);
    char *out = SENTINEL;
    json_t *info, *edges;

    CHECK_RC(stepkit_task_graph(NULL, &out), STEPKIT_EINVAL);
    CHECK(out == NULL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    CHECK_RC(stepkit_task_graph(task, NULL), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    CHECK_RC(stepkit_task_graph(task, &out), STEPKIT_OK);
    info = parse_json(out);
    edges = json_object_get(info, "edges");
    CHECK(json_is_array(edges) && json_array_size(edges) == 8);
    if (json_is_array(edges) && json_array_size(edges) == 8) {
        json_t *when;
        check_edge(edges, 0, NULL, "q", "start", NULL);
        check_edge(edges, 1, "q", NULL, "branch", "q");
        CHECK(json_integer_value(json_object_get(json_array_get(edges, 1), "branch")) == 0);
        when = json_object_get(json_array_get(edges, 1), "when");
        CHECK_STR(json_str(when, "result"), "q");
        CHECK(json_is_false(json_object_get(when, "equals")));
        check_edge(edges, 2, "q", "a", "branch", "q");
        CHECK(json_integer_value(json_object_get(json_array_get(edges, 2), "branch")) == 1);
        CHECK_STR(json_str(json_array_get(edges, 2), "section"), "s");
        check_edge(edges, 3, "q", "x", "otherwise", "q");
        check_edge(edges, 4, "x", "a", "next", NULL);
        check_edge(edges, 5, "a", "b", "next", NULL);
        check_edge(edges, 6, "b", "done", "direct", "s"); /* the section's rule, from its last step */
        CHECK(json_object_get(json_array_get(edges, 6), "section") == NULL);
        check_edge(edges, 7, "done", NULL, "next", NULL);
    }
    json_decref(info);
    stepkit_string_free(out);
    stepkit_task_free(task);
}

/* A task with recorders, written with its keys out of order and 30.0 for 30. Its canonical form
 * (include/stepkit.h: keys sorted, whole numbers as integers, no whitespace) is
 * {"asyncActions":[{"identifier":"gps","startStepIdentifier":"walk","type":"location"}],
 * "identifier":"gait","steps":[{"identifier":"walk","recorderConfigurations":[{"frequency":100,
 * "identifier":"accel","type":"accelerometer"},{"identifier":"taps","type":"touch"}],
 * "stepDuration":30,"type":"active"},{"identifier":"done","type":"completion"}]} (one line),
 * whose SHA-256 (sha256sum) is GAIT_FINGERPRINT. */
#define GAIT_TASK                                                                              \
    "{\"steps\": [{\"type\": \"active\", \"identifier\": \"walk\", \"stepDuration\": 30.0,"      \
    " \"recorderConfigurations\": [{\"type\": \"accelerometer\", \"identifier\": \"accel\","     \
    " \"frequency\": 100}, {\"type\": \"touch\", \"identifier\": \"taps\"}]},"                    \
    " {\"type\": \"completion\", \"identifier\": \"done\"}], \"identifier\": \"gait\","           \
    " \"asyncActions\": [{\"type\": \"location\", \"identifier\": \"gps\","                       \
    " \"startStepIdentifier\": \"walk\"}]}"
#define GAIT_FINGERPRINT "90ff79f2a59f93a5f10d04d5b3b764224357e13e2b3bf319280e83ada34a5ee4"

static void test_task_info_fingerprint_and_recorders(void)
{
    stepkit_task *task = compile_ok(GAIT_TASK), *plain = compile_ok(SURVEY_TASK);
    stepkit_session *session;
    char *out = NULL, *saved = NULL;
    json_t *info, *restoration, *expected;

    CHECK_RC(stepkit_task_info(task, &out), STEPKIT_OK);
    info = parse_json(out);
    stepkit_string_free(out);
    out = NULL;
    CHECK_STR(json_str(info, "fingerprint"), GAIT_FINGERPRINT);

    /* The fingerprint restoration data names the task by. */
    session = open_ok(task, "{\"continueOnRecorderFailure\": true}");
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    restoration = parse_json(saved);
    CHECK_STR(json_str(json_object_get(restoration, "task"), "fingerprint"), GAIT_FINGERPRINT);

    /* The recorders the definition lists: the active step's, then the async action's. */
    expected = parse_json(
        "[{\"identifier\": \"accel\", \"type\": \"accelerometer\", \"permission\": \"motion\", \"step\": \"walk\"},"
        " {\"identifier\": \"taps\", \"type\": \"touch\", \"permission\": null, \"step\": \"walk\"},"
        " {\"identifier\": \"gps\", \"type\": \"location\", \"permission\": \"location\","
        "  \"startStep\": \"walk\", \"stopStep\": null}]");
    CHECK(json_equal(json_object_get(info, "recorders"), expected));
    json_decref(expected);
    json_decref(info);

    /* A task that records nothing lists no recorder; its fingerprint is its own. */
    CHECK_RC(stepkit_task_info(plain, &out), STEPKIT_OK);
    info = parse_json(out);
    CHECK(json_is_array(json_object_get(info, "recorders")) && json_array_size(json_object_get(info, "recorders")) == 0);
    CHECK(json_str(info, "fingerprint") != NULL && strlen(json_str(info, "fingerprint")) == 64 &&
          strcmp(json_str(info, "fingerprint"), GAIT_FINGERPRINT) != 0);
    json_decref(info);

    json_decref(restoration);
    stepkit_string_free(out);
    stepkit_string_free(saved);
    stepkit_session_free(session);
    stepkit_task_free(plain);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_versions);
    RUN(test_status_names);
    RUN(test_control_and_its_old_name);
    RUN(test_compile_ok);
    RUN(test_task_graph);
    RUN(test_task_info_fingerprint_and_recorders);
    RUN(test_compile_parse_errors);
    RUN(test_compile_nesting_limit);
    RUN(test_compile_definition_errors);
    RUN(test_compile_limits);
    RUN(test_last_error_survives_success);
    RUN(test_null_arguments);
    RUN(test_null_out_is_allowed_where_documented);
    RUN(test_invalid_utf8_in_task);
    RUN(test_invalid_utf8_in_answers);
    RUN(test_answer_json_limits);
    RUN(test_wrong_answer_types);
    RUN(test_session_options);
    RUN(test_finish_reasons);
    return check_report();
}
