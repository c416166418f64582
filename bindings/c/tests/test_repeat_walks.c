/*
 * test_repeat_walks.c — issue 31's "walk with several instances from C": the medications example
 * (examples/tasks/medications.json, a repeating group on a form) walked with three medications,
 * one removed, its result nested one object per instance in order; and the published FHIR forms
 * with repeating groups (the Android FHIR SDK catalog's repeated group and LHC-Forms' min/max-
 * occurs form, from ../shared/fhir/q: skipped with a message when absent) walked with three
 * repetitions, each QuestionnaireResponse checked against R4's nesting rules
 * (QuestionnaireResponse.item: a repeating group is several items with its linkId side by side,
 * in the Questionnaire's order, each holding its own items; any other item appears at most once
 * among its siblings; a group has no answer; a question that does not repeat has one answer).
 * Expected values come from the forms and the answers given here.
 *
 * Usage: test_repeat_walks <forms dir> <examples/tasks dir>
 */
#include <sys/stat.h>

#include "check.h"

static const char *forms_dir = "../shared/fhir/q";
static const char *examples_dir = "examples/tasks";

/* The definition of `link` among `defined` (a Questionnaire's item array), or NULL. */
static json_t *defined_item(const json_t *defined, const char *link)
{
    size_t i;
    json_t *d;
    json_array_foreach(defined, i, d) {
        const char *id = json_str(d, "linkId");
        if (id && strcmp(id, link) == 0)
            return d;
    }
    return NULL;
}

static size_t position_of(const json_t *defined, const char *link)
{
    size_t i;
    json_t *d;
    json_array_foreach(defined, i, d) {
        const char *id = json_str(d, "linkId");
        if (id && strcmp(id, link) == 0)
            return i;
    }
    return (size_t)-1;
}

/* R4's nesting rules (see the top of this file) for `items` against `defined`, recursively. */
static void check_r4_nesting(const json_t *items, const json_t *defined)
{
    size_t i, j;
    json_t *item;
    json_array_foreach(items, i, item) {
        const char *link = json_str(item, "linkId");
        const char *previous = i > 0 ? json_str(json_array_get(items, i - 1), "linkId") : NULL;
        json_t *definition = link ? defined_item(defined, link) : NULL;
        int repeats, group;
        CHECK(definition != NULL);
        if (!definition)
            continue;
        repeats = json_is_true(json_object_get(definition, "repeats"));
        group = strcmp(json_str(definition, "type") ? json_str(definition, "type") : "", "group") == 0;
        if (previous && strcmp(previous, link) == 0) {
            CHECK(group && repeats);
        } else {
            for (j = 0; j < i; j++)  /* its repetitions side by side: not seen before */
                CHECK(strcmp(json_str(json_array_get(items, j), "linkId"), link) != 0);
            if (previous)
                CHECK(position_of(defined, link) > position_of(defined, previous));
        }
        if (group) {
            CHECK(json_object_get(item, "answer") == NULL);
            CHECK(json_array_size(json_object_get(item, "item")) > 0);
            check_r4_nesting(json_object_get(item, "item"), json_object_get(definition, "item"));
        } else {
            CHECK(json_array_size(json_object_get(item, "answer")) > 0);
            CHECK(repeats || json_array_size(json_object_get(item, "answer")) == 1);
        }
    }
}

/* The items of `parent` whose linkId is `link`, in order (a repeating group's repetitions). */
static size_t items_named(const json_t *parent, const char *link, const json_t **found, size_t max)
{
    size_t i, n = 0;
    json_t *item;
    json_array_foreach(json_object_get(parent, "item"), i, item) {
        const char *id = json_str(item, "linkId");
        if (id && strcmp(id, link) == 0) {
            if (n < max)
                found[n] = item;
            n++;
        }
    }
    return n;
}

/* Answer `n` of the child `link` of a repetition, as the member `value` (valueString, ...). */
static json_t *child_answer(const json_t *repetition, const char *link, size_t n, const char *value)
{
    const json_t *child[1] = {NULL};
    if (items_named(repetition, link, child, 1) != 1)
        return NULL;
    return json_object_get(json_array_get(json_object_get(child[0], "answer"), n), value);
}

static json_t *response_of(stepkit_session *s)
{
    return parse_out(session_output(stepkit_session_result_fhir, s));
}

/* A session of the published form `name`, its text in *q (free() it; NULL, and a failed check,
 * when the form cannot be read: then no session) and its task in *task. */
static stepkit_session *open_form(const char *name, char **q, stepkit_task **task)
{
    *q = read_in(forms_dir, name);
    *task = NULL;
    if (!*q)
        return NULL;
    CHECK_RC(stepkit_task_compile_fhir(*q, NULL, task), STEPKIT_OK);
    return open_ok(*task, NULL);
}

/* A walk's last move: forward to the end, the run finished, and its QuestionnaireResponse
 * (decref it) nested as R4 says for the Questionnaire text `q`. */
static json_t *finished_response(stepkit_session *s, const char *q)
{
    json_t *state, *response, *questionnaire;
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    state = state_of(s);
    CHECK_STR(json_str(state, "status"), "finished");
    json_decref(state);
    response = response_of(s);
    questionnaire = parse_json(q);
    check_r4_nesting(json_object_get(response, "item"), json_object_get(questionnaire, "item"));
    json_decref(questionnaire);
    return response;
}

/* The Android FHIR SDK catalog's repeated group (minOccurs 0: no repetition to start): four
 * added, the second removed, each with its date and dropdown answer. */
static void test_android_repeated_group(void)
{
    char *q;
    stepkit_task *task;
    stepkit_session *s = open_form("afhir_repeated_group.json", &q, &task);
    json_t *response;
    const json_t *reps[4] = {NULL};
    int k;
    if (!q)
        return;
    CHECK(instances_int(s, "1", "count") == 0);
    for (k = 0; k < 4; k++)
        CHECK_RC(stepkit_session_add_instance(s, "1", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s,
        "{\"1\": [{\"1-1\": \"2024-01-01\", \"1-2\": [\"answer-a\"]}, {\"1-1\": \"2024-01-02\"},"
        " {\"1-1\": \"2024-01-03\", \"1-2\": [\"answer-c\"]}, {\"1-1\": \"2024-01-04\", \"1-2\": [\"answer-other\"]}]}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_remove_instance(s, "1", 1, NULL), STEPKIT_OK);
    CHECK(instances_int(s, "1", "count") == 3);
    response = finished_response(s, q);
    CHECK(items_named(response, "1", reps, 4) == 3);
    if (reps[2]) {
        CHECK_STR(json_string_value(child_answer(reps[0], "1-1", 0, "valueDate")), "2024-01-01");
        CHECK_STR(json_string_value(child_answer(reps[1], "1-1", 0, "valueDate")), "2024-01-03");
        CHECK_STR(json_string_value(child_answer(reps[2], "1-1", 0, "valueDate")), "2024-01-04");
        CHECK_STR(json_str(child_answer(reps[0], "1-2", 0, "valueCoding"), "code"), "answer-a");
        CHECK_STR(json_str(child_answer(reps[1], "1-2", 0, "valueCoding"), "code"), "answer-c");
        CHECK_STR(json_str(child_answer(reps[2], "1-2", 0, "valueCoding"), "code"), "answer-other");
    }
    json_decref(response);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(q);
}

/* LHC-Forms' min/max-occurs form: the group starts with its minOccurs (2) and takes a third
 * (its maxOccurs: a fourth is refused, nothing changes); each repetition's answers its own. */
static void test_lhc_min_max_occurs(void)
{
    char *q;
    stepkit_task *task;
    stepkit_session *s = open_form("lhc_min_max_occurs.json", &q, &task);
    json_t *response;
    const json_t *reps[4] = {NULL};
    check_snapshot before;
    if (!q)
        return;
    CHECK(instances_int(s, "1", "count") == 2);
    CHECK_RC(stepkit_session_add_instance(s, "1", NULL), STEPKIT_OK);
    before = snapshot_of(s);
    check_call_refused(s, stepkit_session_add_instance(s, "1", NULL), STEPKIT_ESTATE, "tooManyInstances", before);
    snapshot_free(&before);
    CHECK_RC(stepkit_session_set_answer(s,
        "{\"1\": [{\"1.1\": [\"Apple\", \"Orange\"], \"1.2\": \"first\", \"1.3\": [\"Pear\", \"Peach\"]},"
        " {\"1.1\": [\"Banana\", \"Pear\"], \"1.3\": [\"Apple\", \"Banana\"]},"
        " {\"1.1\": [\"Peach\", \"Apple\"], \"1.2\": \"third\", \"1.3\": [\"Orange\", \"Pear\"]}]}", NULL), STEPKIT_OK);
    response = finished_response(s, q);
    CHECK(items_named(response, "1", reps, 4) == 3);
    if (reps[2]) {
        const json_t *found[1] = {NULL};
        CHECK_STR(json_string_value(child_answer(reps[0], "1.2", 0, "valueString")), "first");
        CHECK(items_named(reps[1], "1.2", found, 1) == 0);  /* not answered: left out */
        CHECK_STR(json_string_value(child_answer(reps[2], "1.2", 0, "valueString")), "third");
        /* The choices' answers, two in each repetition, in its own item. */
        CHECK(items_named(reps[1], "1.1", found, 1) == 1 && json_array_size(json_object_get(found[0], "answer")) == 2);
        CHECK(items_named(reps[2], "1.3", found, 1) == 1 && json_array_size(json_object_get(found[0], "answer")) == 2);
    }
    json_decref(response);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(q);
}

/* The medications example: the count (2) makes two instances, a third is added, the middle one
 * removed (its answers go); the result nests one object per instance, in order. */
static void test_medications_example(void)
{
    char *text = read_in(examples_dir, "medications.json");
    stepkit_task *task;
    stepkit_session *s;
    json_t *result, *form = NULL, *group = NULL, *instances, *entry;
    size_t i;
    char *dump;
    if (!text)
        return;
    task = compile_ok(text);
    s = open_ok(task, NULL);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "true", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "2", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_STEP(s, "medication");
    CHECK(instances_int(s, "medications", "count") == 2);
    CHECK_RC(stepkit_session_add_instance(s, "medications", NULL), STEPKIT_OK);
    CHECK(instances_int(s, "medications", "current") == 2);
    CHECK_RC(stepkit_session_set_answer(s,
        "{\"medications\": [{\"name\": \"Ibuprofen\", \"dose\": 400, \"frequency\": [\"asNeeded\"]},"
        " {\"name\": \"Zinc\", \"dose\": 25, \"frequency\": [\"weekly\"]},"
        " {\"name\": \"Metformin\", \"dose\": 500, \"frequency\": [\"daily\"], \"reason\": \"diabetes\"}], \"sideEffects\": false}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_remove_instance(s, "medications", 1, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "0", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);  /* the completion step */
    result = result_of(s);
    json_array_foreach(json_object_get(result, "results"), i, entry) {
        if (json_str(entry, "identifier") && strcmp(json_str(entry, "identifier"), "medication") == 0)
            form = entry;
    }
    group = json_array_get(json_object_get(form, "results"), 0);
    CHECK_STR(json_str(group, "identifier"), "medications");
    CHECK_STR(json_str(group, "type"), "group");
    instances = json_object_get(group, "instances");
    CHECK(json_array_size(instances) == 2);
    CHECK(json_integer_value(json_object_get(json_array_get(instances, 1), "index")) == 1);
    CHECK_STR(json_str(json_array_get(json_object_get(json_array_get(instances, 0), "results"), 0), "answer"), "Ibuprofen");
    CHECK_STR(json_str(json_array_get(json_object_get(json_array_get(instances, 1), "results"), 0), "answer"), "Metformin");
    CHECK_STR(json_str(json_array_get(json_object_get(json_array_get(instances, 1), "results"), 3), "answer"), "diabetes");
    dump = json_dumps(result, 0);
    CHECK(dump && strstr(dump, "Zinc") == NULL);
    free(dump);
    json_decref(result);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(text);
}

int main(int argc, char **argv)
{
    struct stat st;
    const char *env = getenv("STEPKIT_FHIR_FORMS");
    if (argc > 1)
        forms_dir = argv[1];
    if (env && *env)
        forms_dir = env;
    if (argc > 2)
        examples_dir = argv[2];
    RUN(test_medications_example);
    if (stat(forms_dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        RUN(test_android_repeated_group);
        RUN(test_lhc_min_max_occurs);
    } else {
        printf("SKIP: the published FHIR forms are not here: %s is absent (set STEPKIT_FHIR_FORMS); "
               "only the medications example was walked\n", forms_dir);
    }
    return check_report();
}
