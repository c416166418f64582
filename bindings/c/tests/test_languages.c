/*
 * test_languages.c — a task in three languages through the C ABI: the texts in the session's
 * language (with BCP-47 fallback), switching mid-way keeping every answer, a refused answer's
 * message in German and Spanish from the shipped catalogues and in French from a catalogue the
 * host supplies, and bad input (a tag that is not BCP-47, a catalogue with a missing or an extra
 * argument) refused with a clear error that changes nothing.
 */
#include "check.h"
#include "read_file.h"

/* examples/tasks, from the command line (ctest passes it). */
static const char *examples_dir = NULL;

static const char *TASK =
    "{\"identifier\": \"lang\", \"defaultLanguage\": \"en\", \"languages\": [\"en\", \"de\", \"es\"],"
    " \"steps\": ["
    "  {\"type\": \"question\", \"identifier\": \"fruit\","
    "   \"title\": {\"en\": \"Fruit\", \"de\": \"Obst\", \"es\": \"Fruta\"},"
    "   \"answerFormat\": {\"type\": \"textChoice\", \"style\": \"multipleChoice\", \"textChoices\": ["
    "     {\"text\": {\"en\": \"Apple\", \"de\": \"Apfel\", \"es\": \"Manzana\"}, \"value\": \"apple\"},"
    "     {\"text\": {\"en\": \"Pear\", \"de\": \"Birne\", \"es\": \"Pera\"}, \"value\": \"pear\"}]}},"
    "  {\"type\": \"question\", \"identifier\": \"age\", \"title\": {\"en\": \"Age\", \"de\": \"Alter\", \"es\": \"Edad\"},"
    "   \"answerFormat\": {\"type\": \"numeric\", \"style\": \"integer\", \"minimum\": 18, \"maximum\": 90}}]}";

static stepkit_task *compile_task(void)
{
    stepkit_task *task = NULL;
    CHECK_RC(stepkit_task_compile(TASK, &task), STEPKIT_OK);
    return task;
}

/* Checks the state's step title, then frees the state text (the library's string). */
static void check_title(char *state_text, const char *expected)
{
    json_t *state = parse_json(state_text);
    CHECK_STR(state ? json_str(json_object_get(state, "step"), "title") : NULL, expected);
    json_decref(state);
    stepkit_string_free(state_text);
}

/* Checks the message of the last error. */
static void check_last_message(const char *expected)
{
    json_t *error = parse_json(stepkit_last_error());
    CHECK_STR(error ? json_str(error, "message") : NULL, expected);
    json_decref(error);
}

static void test_texts_follow_the_language(void)
{
    stepkit_task *task = compile_task();
    stepkit_session *session = NULL;
    char *state = NULL;
    CHECK_RC(stepkit_session_open(task, "{\"language\": \"de-AT\"}", &session), STEPKIT_OK);
    CHECK_RC(stepkit_session_state(session, &state), STEPKIT_OK);
    check_title(state, "Obst");
    CHECK_RC(stepkit_session_set_language(session, "es", &state), STEPKIT_OK);
    check_title(state, "Fruta");
    /* Not declared: the default language. */
    CHECK_RC(stepkit_session_set_language(session, "ja", &state), STEPKIT_OK);
    check_title(state, "Fruit");
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_switching_keeps_every_answer(void)
{
    stepkit_task *task = compile_task();
    stepkit_session *session = NULL;
    char *state = NULL, *result_before = NULL, *result_after = NULL;
    json_t *before, *after, *s;
    CHECK_RC(stepkit_session_open(task, "{\"language\": \"de\"}", &session), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(session, "[\"pear\"]", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(session, "40", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_result(session, &result_before), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_language(session, "es", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_result(session, &result_after), STEPKIT_OK);
    before = parse_json(result_before);
    after = parse_json(result_after);
    /* The same step results; the languages used are listed, the one it started in first. */
    CHECK(json_equal(json_object_get(before, "results"), json_object_get(after, "results")));
    {
        json_t *expected = json_pack("[s, s]", "de", "es");
        CHECK(json_equal(json_object_get(after, "languages"), expected));
        json_decref(expected);
    }
    CHECK_RC(stepkit_session_go_backward(session, &state), STEPKIT_OK);
    s = parse_json(state);
    {
        json_t *expected = json_pack("[s]", "pear");
        CHECK(json_equal(json_object_get(s, "answer"), expected));
        json_decref(expected);
    }
    CHECK_STR(json_str(json_object_get(s, "step"), "title"), "Fruta");
    json_decref(s);
    json_decref(before);
    json_decref(after);
    stepkit_string_free(state);
    stepkit_string_free(result_before);
    stepkit_string_free(result_after);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_refusals_in_german_and_spanish(void)
{
    stepkit_task *task = compile_task();
    stepkit_session *session = NULL;
    char *out = NULL;
    json_t *error;
    CHECK_RC(stepkit_session_open(task, "{\"language\": \"de\"}", &session), STEPKIT_OK);
    CHECK_FAILS(out, stepkit_session_set_answer(session, "[\"apple\", \"apple\"]", &out), STEPKIT_EANSWER);
    error = check_last_error(STEPKIT_EANSWER, "EANSWER", NULL);
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), "duplicateChoice");
    json_decref(error);
    check_last_message("\"Apfel\" ist zweimal gewählt.");
    CHECK_RC(stepkit_session_set_language(session, "es-MX", NULL), STEPKIT_OK);
    CHECK_FAILS(out, stepkit_session_set_answer(session, "[\"apple\", \"apple\"]", &out), STEPKIT_EANSWER);
    check_last_message("\"Manzana\" está elegida dos veces.");
    CHECK_RC(stepkit_session_set_answer(session, "[\"apple\"]", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    CHECK_FAILS(out, stepkit_session_set_answer(session, "12", &out), STEPKIT_EANSWER);
    check_last_message("Escriba un número entero entre 18 y 90.");
    CHECK_RC(stepkit_session_set_language(session, "en", NULL), STEPKIT_OK);
    CHECK_FAILS(out, stepkit_session_set_answer(session, "12", &out), STEPKIT_EANSWER);
    check_last_message("Enter a whole number between 18 and 90.");
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Options with a French catalogue: the shipped English one with `key` set to `text`. */
static char *french_options(const char *key, const char *text)
{
    char *english = NULL, *options;
    json_t *catalogue, *o;
    CHECK_RC(stepkit_message_catalogue("en", &english), STEPKIT_OK);
    catalogue = parse_json(english);
    stepkit_string_free(english);
    json_object_set_new(catalogue, key, json_string(text));
    o = json_pack("{s:s, s:{s:o}}", "language", "fr", "messages", "fr", catalogue);
    options = json_dumps(o, 0);
    json_decref(o);
    return options;
}

static void test_a_host_catalogue(void)
{
    stepkit_task *task = compile_task();
    stepkit_session *session = NULL;
    char *out = NULL, *options;
    options = french_options("choice.chosenTwice", "« {choice} » est choisi deux fois.");
    CHECK_RC(stepkit_session_open(task, options, &session), STEPKIT_OK);
    free(options);
    CHECK_FAILS(out, stepkit_session_set_answer(session, "[\"pear\", \"pear\"]", &out), STEPKIT_EANSWER);
    /* French is not among the task's languages: the texts are English, the message French. */
    check_last_message("« Pear » est choisi deux fois.");
    stepkit_session_free(session);

    /* A catalogue missing an argument, or with one the message does not have: no session. */
    options = french_options("choice.chosenTwice", "Choisi deux fois.");
    CHECK_FAILS(session, stepkit_session_open(task, options, &session), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", "messages.fr[\"choice.chosenTwice\"]"));
    check_last_message("The message \"choice.chosenTwice\" must use the argument {choice}.");
    free(options);
    options = french_options("choice.chosenTwice", "{choice} {deux}");
    CHECK_FAILS(session, stepkit_session_open(task, options, &session), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    free(options);
    options = french_options("no.such.message", "x");
    CHECK_FAILS(session, stepkit_session_open(task, options, &session), STEPKIT_EINVAL);
    free(options);
    stepkit_task_free(task);
}

static void test_bad_input_changes_nothing(void)
{
    stepkit_task *task = compile_task();
    stepkit_session *session = NULL;
    char *before = NULL, *after = NULL, *out = NULL, *saved_before = NULL, *saved_after = NULL;
    const char *bad[] = {"", "f", "fr_CA", "en US", "français", "toolongtag"};
    size_t i;
    CHECK_RC(stepkit_session_open(task, "{\"language\": \"es\"}", &session), STEPKIT_OK);
    CHECK_RC(stepkit_session_state(session, &before), STEPKIT_OK);
    CHECK_RC(stepkit_session_save(session, &saved_before), STEPKIT_OK);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_FAILS(out, stepkit_session_set_language(session, bad[i], &out), STEPKIT_EINVAL);
        json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    }
    CHECK_FAILS(out, stepkit_session_set_language(session, NULL, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_set_language(NULL, "de", &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_state(session, &after), STEPKIT_OK);
    CHECK_RC(stepkit_session_save(session, &saved_after), STEPKIT_OK);
    CHECK_STR(after, before);
    CHECK_STR(saved_after, saved_before);
    CHECK_FAILS(out, stepkit_message_catalogue("fr", &out), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    CHECK_FAILS(out, stepkit_message_catalogue("e_n", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_message_catalogue(NULL, &out), STEPKIT_EINVAL);
    {
        stepkit_session *other = NULL;
        CHECK_FAILS(other, stepkit_session_open(task, "{\"language\": \"de DE\"}", &other), STEPKIT_EINVAL);
        json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", "language"));
    }
    stepkit_string_free(before);
    stepkit_string_free(after);
    stepkit_string_free(saved_before);
    stepkit_string_free(saved_after);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_definition_errors(void)
{
    stepkit_task *task = NULL;
    CHECK_FAILS(task, stepkit_task_compile(
        "{\"identifier\": \"t\", \"languages\": [\"en\", \"de\"], \"steps\": ["
        " {\"type\": \"instruction\", \"identifier\": \"i\", \"title\": {\"de\": \"Hallo\"}}]}", &task), STEPKIT_EDEFINITION);
    json_decref(check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].title"));
    CHECK_FAILS(task, stepkit_task_compile(
        "{\"identifier\": \"t\", \"languages\": [\"en\"], \"steps\": ["
        " {\"type\": \"instruction\", \"identifier\": \"i\", \"title\": {\"en\": \"Hi\", \"fr\": \"Salut\"}}]}", &task), STEPKIT_EDEFINITION);
    json_decref(check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", "steps[0].title.fr"));
}

/* Walks examples/tasks/multilingual-checkin.json with its answers file in `language` (switching
 * to `switch_to` at the sleep question when not NULL): the result (the caller frees), and in
 * `orders` (a JSON array the caller decrefs) the values of each choice list in the order shown. */
static char *walk_example(const char *language, const char *switch_to, json_t **orders)
{
    char path[4096], options[256], *definition, *answers_text, *result = NULL, *state_text = NULL;
    stepkit_task *task = NULL;
    stepkit_session *session = NULL;
    json_t *answers, *state;
    int guard = 0;
    snprintf(path, sizeof path, "%s/multilingual-checkin.json", examples_dir);
    definition = read_file(path, NULL);
    snprintf(path, sizeof path, "%s/multilingual-checkin.answers.json", examples_dir);
    answers_text = read_file(path, NULL);
    CHECK(definition != NULL && answers_text != NULL);
    if (!definition || !answers_text) {
        free(definition);
        free(answers_text);
        return NULL;
    }
    answers = parse_json(answers_text);
    CHECK_RC(stepkit_task_compile(definition, &task), STEPKIT_OK);
    /* A shuffled task: the same seed in every language gives the same order. */
    snprintf(options, sizeof options, "{\"language\": \"%s\", \"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\"%s}",
             language, strstr(definition, "\"shuffle\"") ? ", \"seed\": 20261127" : "");
    CHECK_RC(stepkit_session_open(task, options, &session), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_clock(session, check_fixed_now, NULL), STEPKIT_OK);
    *orders = json_array();
    CHECK_RC(stepkit_session_state(session, &state_text), STEPKIT_OK);
    state = parse_json(state_text);
    stepkit_string_free(state_text);
    while (state && strcmp(json_str(state, "status"), "finished") != 0 && guard++ < 20) {
        json_t *step = json_object_get(state, "step");
        const char *id = json_str(step, "identifier");
        json_t *choices = json_object_get(json_object_get(step, "answerFormat"), "textChoices");
        json_t *answer = json_object_get(answers, id);
        if (choices) {
            json_t *values = json_array();
            size_t i;
            json_t *c;
            json_array_foreach(choices, i, c) json_array_append(values, json_object_get(c, "value"));
            json_array_append_new(*orders, values);
        }
        if (answer) {
            char *text = json_dumps(answer, JSON_ENCODE_ANY);
            CHECK_RC(stepkit_session_set_answer(session, text, NULL), STEPKIT_OK);
            free(text);
        }
        if (switch_to && strcmp(id, "sleep_hours") == 0) {
            json_t *switched;
            CHECK_RC(stepkit_session_set_language(session, switch_to, &state_text), STEPKIT_OK);
            switched = parse_json(state_text);
            CHECK(json_equal(json_object_get(switched, "answer"), answer));
            json_decref(switched);
            stepkit_string_free(state_text);
        }
        json_decref(state);
        CHECK_RC(stepkit_session_go_forward(session, &state_text), STEPKIT_OK);
        state = parse_json(state_text);
        stepkit_string_free(state_text);
    }
    json_decref(state);
    CHECK_RC(stepkit_session_result(session, &result), STEPKIT_OK);
    json_decref(answers);
    free(definition);
    free(answers_text);
    stepkit_session_free(session);
    stepkit_task_free(task);
    return result;
}

/* A result without the languages it names: what must be the same in every language. */
static json_t *without_languages(const char *result)
{
    json_t *r = parse_json(result);
    json_object_del(r, "language");
    json_object_del(r, "languages");
    return r;
}

static void test_the_example_walks_identically_in_each_language(void)
{
    const char *languages[] = {"en", "de", "es"};
    char *reference = NULL, *switched;
    json_t *reference_orders = NULL, *orders, *expected, *actual;
    size_t i;
    if (!examples_dir) {
        fprintf(stderr, "SKIP the example walk: no examples directory was given\n");
        return;
    }
    for (i = 0; i < 3; i++) {
        char *result = walk_example(languages[i], NULL, &orders);
        json_t *r = parse_json(result);
        json_t *used = json_pack("[s]", languages[i]);
        CHECK(json_equal(json_object_get(r, "languages"), used));
        json_decref(used);
        json_decref(r);
        if (!reference) {
            reference = result;
            reference_orders = orders;
            continue;
        }
        expected = without_languages(reference);
        actual = without_languages(result);
        CHECK(json_equal(expected, actual));       /* the same result but for the languages */
        CHECK(json_equal(reference_orders, orders)); /* the same choices in the same order */
        json_decref(expected);
        json_decref(actual);
        json_decref(orders);
        stepkit_string_free(result);
    }
    /* Switching from German to Spanish in the middle keeps every answer. */
    switched = walk_example("de", "es", &orders);
    expected = without_languages(reference);
    actual = without_languages(switched);
    CHECK(json_equal(expected, actual));
    CHECK(json_equal(reference_orders, orders));
    json_decref(expected);
    json_decref(actual);
    json_decref(orders);
    json_decref(reference_orders);
    stepkit_string_free(switched);
    stepkit_string_free(reference);
}

/* A section that shuffles its steps (docs/randomization.md, "A section's steps"): with seed 42
 * the documented example shows q1 q4 pause q3 q2 (pause pinned), and the section's rule goes to
 * done after the step shown last. The order is walked, kept through save and restore, and a
 * result that records another order does not verify. */
static const char *SECTION_TASK =
    "{\"identifier\": \"blocks\", \"steps\": ["
    "{\"type\": \"instruction\", \"identifier\": \"intro\"},"
    "{\"type\": \"section\", \"identifier\": \"block\", \"shuffleSteps\": true, \"steps\": ["
    "{\"type\": \"question\", \"identifier\": \"q1\", \"answerFormat\": {\"type\": \"boolean\"}},"
    "{\"type\": \"question\", \"identifier\": \"q2\", \"answerFormat\": {\"type\": \"boolean\"}},"
    "{\"type\": \"instruction\", \"identifier\": \"pause\", \"pinned\": true},"
    "{\"type\": \"question\", \"identifier\": \"q3\", \"answerFormat\": {\"type\": \"boolean\"}},"
    "{\"type\": \"question\", \"identifier\": \"q4\", \"answerFormat\": {\"type\": \"boolean\"}}]},"
    "{\"type\": \"instruction\", \"identifier\": \"after\"},"
    "{\"type\": \"completion\", \"identifier\": \"done\"}],"
    "\"navigationRules\": {\"block\": {\"type\": \"direct\", \"destination\": \"done\"}}}";

/* Walks on from the current step (answering questions true) and checks the steps shown. */
static void walk_expecting(stepkit_session *session, const char *const *expected, size_t count)
{
    size_t i;
    for (i = 0; i < count; i++) {
        char *id = current_step(session);
        CHECK(strcmp(id, expected[i]) == 0);
        if (id[0] == 'q') CHECK_RC(stepkit_session_set_answer(session, "true", NULL), STEPKIT_OK);
        free(id);
        CHECK_RC(stepkit_session_go_forward(session, NULL), STEPKIT_OK);
    }
}

static void test_a_sections_steps_in_the_seeded_order(void)
{
    static const char *const order[] = {"intro", "q1", "q4", "pause", "q3", "q2", "done"};
    stepkit_task *task = NULL;
    stepkit_session *session = NULL, *restored = NULL;
    char *saved = NULL, *result = NULL, *report = NULL, *edited;
    char *at;
    CHECK_RC(stepkit_task_compile(SECTION_TASK, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, "{\"seed\": 42}", &session), STEPKIT_OK);
    walk_expecting(session, order, 3); /* intro, q1, q4 */
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK(strstr(saved, "\"block\":{\"steps\":[\"q1\",\"q4\",\"pause\",\"q3\",\"q2\"]}") != NULL);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
    walk_expecting(restored, order + 3, 4); /* pause, q3, q2, done */
    CHECK_RC(stepkit_session_result(restored, &result), STEPKIT_OK);
    CHECK_RC(stepkit_task_verify_result(task, result, NULL, &report), STEPKIT_OK);
    CHECK(strstr(report, "\"verified\":true") != NULL);
    stepkit_string_free(report);
    /* Another order recorded: q4 and q2 swapped. */
    edited = malloc(strlen(result) + 1);
    if (edited) strcpy(edited, result);
    at = edited ? strstr(edited, "[\"q1\",\"q4\",\"pause\",\"q3\",\"q2\"]") : NULL;
    CHECK(at != NULL);
    if (at) memcpy(at, "[\"q1\",\"q2\",\"pause\",\"q3\",\"q4\"]", strlen("[\"q1\",\"q2\",\"pause\",\"q3\",\"q4\"]"));
    CHECK_RC(stepkit_task_verify_result(task, edited ? edited : "{}", NULL, &report), STEPKIT_OK);
    CHECK(report && strstr(report, "\"code\":\"orderMismatch\"") != NULL);
    stepkit_string_free(report);
    free(edited);
    stepkit_string_free(result);
    stepkit_string_free(saved);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(int argc, char **argv)
{
    examples_dir = argc > 1 ? argv[1] : NULL;
    RUN(test_the_example_walks_identically_in_each_language);
    RUN(test_texts_follow_the_language);
    RUN(test_switching_keeps_every_answer);
    RUN(test_refusals_in_german_and_spanish);
    RUN(test_a_host_catalogue);
    RUN(test_bad_input_changes_nothing);
    RUN(test_definition_errors);
    RUN(test_a_sections_steps_in_the_seeded_order);
    return check_report();
}
