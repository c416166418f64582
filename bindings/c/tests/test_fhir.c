/*
 * test_fhir.c — FHIR Questionnaire in, QuestionnaireResponse out, from C: the published forms
 * (STEPKIT_FHIR_FORMS, else argv[1], by default <repo>/../shared/fhir/q; skipped with a message
 * when absent) all import, three are walked with their answers (visibility, skipped steps, the
 * exported response, a total written with FHIRPath variables), the repository's examples import
 * with an empty report (argv[2]), conditions are evaluated or their items declined, a value set
 * the host supplies becomes coded choices, and bad Questionnaires are refused with every problem
 * and its FHIR path.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "check.h"
#include "read_file.h"

static const char *forms_dir = NULL;
static const char *examples_dir = NULL;

/* A Questionnaire's translation with `options` (NULL: none), parsed; the caller decrefs. */
static json_t *translation(const char *questionnaire, const char *options)
{
    char *out = NULL;
    CHECK_RC(stepkit_task_translate_fhir(questionnaire, options, &out), STEPKIT_OK);
    return parse_out(out);
}

/* The session's QuestionnaireResponse, parsed; the caller decrefs. */
static json_t *fhir_response(stepkit_session *session)
{
    return parse_out(session_output(stepkit_session_result_fhir, session));
}

/* The first answer of a QuestionnaireResponse item, or NULL. */
static json_t *first_answer(const json_t *item)
{
    return json_array_get(json_object_get(item, "answer"), 0);
}

/* The first answer of the i-th of `items`, or NULL. */
static json_t *answer_of(const json_t *items, size_t i)
{
    return first_answer(json_array_get(items, i));
}

/* The items of the i-th item (a group) of a response or group, or NULL. */
static json_t *group_items(const json_t *parent, size_t i)
{
    return json_object_get(json_array_get(json_object_get(parent, "item"), i), "item");
}

/* The number of report entries of a Questionnaire's translation, or -1. */
static int report_size(const char *questionnaire)
{
    json_t *doc = translation(questionnaire, NULL);
    int n = -1;
    if (doc && json_is_array(json_object_get(doc, "report")) && json_is_array(json_object_get(json_object_get(doc, "task"), "steps")))
        n = (int)json_array_size(json_object_get(doc, "report"));
    json_decref(doc);
    return n;
}

static void test_published_forms_import(void)
{
    DIR *dir = opendir(forms_dir);
    struct dirent *entry;
    int count = 0;
    if (!dir)
        return;
    while ((entry = readdir(dir)) != NULL) {
        size_t len = strlen(entry->d_name);
        char *text;
        stepkit_task *task = SENTINEL;
        if (len < 6 || strcmp(entry->d_name + len - 5, ".json") != 0)
            continue;
        text = read_in(forms_dir, entry->d_name);
        if (!text)
            continue;
        CHECK_RC(stepkit_task_compile_fhir(text, NULL, &task), STEPKIT_OK);
        CHECK(task != NULL && task != SENTINEL);
        CHECK(report_size(text) >= 0);
        stepkit_task_free(task);
        free(text);
        count++;
    }
    closedir(dir);
    CHECK(count == 15);
}

static const char *fhir_step(json_t *state)
{
    return json_str(json_object_get(state, "step"), "identifier");
}

/* lhc_phr_enablewhen: "4.3" (other diagnosis) only when 4.1 != Diabetes, unanswered included;
 * 4.4 when 4.3 exists, 4.5 when it does not. */
static void test_walk_phr(void)
{
    char *text = read_in(forms_dir, "lhc_phr_enablewhen.json");
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    json_t *state, *response, *items;
    if (!text)
        return;
    CHECK_RC(stepkit_task_compile_fhir(text, "{\"strict\": true}", &task), STEPKIT_OK);   /* empty report */
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "[\"Other\"]", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    state = state_of(s);
    CHECK_STR(fhir_step(state), "4.3");   /* 4.2 (diabetes treatment) skipped */
    json_decref(state);
    CHECK_RC(stepkit_session_set_answer(s, "\"Asthma\"", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    state = state_of(s);
    CHECK_STR(fhir_step(state), "4.4");
    json_decref(state);
    CHECK_RC(stepkit_session_set_answer(s, "\"yes\"", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);   /* 4.5 skipped: the end */
    state = state_of(s);
    CHECK_STR(json_str(state, "finishReason"), "completed");
    json_decref(state);
    response = fhir_response(s);
    items = json_object_get(response, "item");
    CHECK_STR(json_str(response, "resourceType"), "QuestionnaireResponse");
    CHECK_STR(json_str(response, "status"), "completed");
    CHECK(json_array_size(items) == 3);
    CHECK_STR(json_str(json_array_get(items, 0), "linkId"), "4.1");
    CHECK_STR(json_str(json_object_get(answer_of(items, 0), "valueCoding"), "code"), "Other");
    CHECK_STR(json_str(answer_of(items, 1), "valueString"), "Asthma");
    CHECK_STR(json_str(json_array_get(items, 2), "linkId"), "4.4");
    json_decref(response);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(text);
}

/* sdc_phq9: the contained value set's codes reach the result ("codings") and the response. */
static void test_walk_phq9(void)
{
    char *text = read_in(forms_dir, "sdc_phq9.json");
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    char *out = NULL;
    json_t *result, *response, *q1, *coding;
    if (!text)
        return;
    CHECK_RC(stepkit_task_compile_fhir(text, NULL, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s,
             "{\"H1/T1/Q1\": [\"Nearly every day\"], \"H1/T1/Q2\": [\"Not-at-all\"], \"H1/T1/Q3\": [\"Several-days\"],"
             " \"H1/T1/Q4\": [\"Not-at-all\"], \"H1/T1/Q5\": [\"Not-at-all\"], \"H1/T1/Q6\": [\"Not-at-all\"],"
             " \"H1/T1/Q7\": [\"Not-at-all\"], \"H1/T1/Q8\": [\"Not-at-all\"], \"H1/T1/Q9\": [\"Not-at-all\"]}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_result(s, &out), STEPKIT_OK);
    result = parse_json(out);
    stepkit_string_free(out);
    q1 = json_array_get(json_object_get(json_array_get(json_object_get(result, "results"), 0), "results"), 0);
    coding = json_array_get(json_object_get(q1, "codings"), 0);
    CHECK_STR(json_str(coding, "system"), "http://hl7.org/fhir/uv/sdc/CodeSystem/CSPHQ9");
    CHECK_STR(json_str(coding, "code"), "Nearly every day");
    /* The total score (ordinalValue 3 + 1): the calculatedExpression as a calculation. */
    CHECK(json_number_value(json_object_get(json_object_get(result, "calculations"), "fhir_1")) == 4.0);
    json_decref(result);
    response = fhir_response(s);
    CHECK_STR(json_str(response, "questionnaire"), "http://hl7.org/fhir/uv/sdc/Questionnaire/questionnaire-sdc-profile-example-PHQ9|0.0.1");
    q1 = json_array_get(group_items(response, 0), 0);
    CHECK_STR(json_str(q1, "linkId"), "H1/T1/Q1");
    CHECK_STR(json_str(json_object_get(first_answer(q1), "valueCoding"), "display"), "Nearly every day");
    q1 = json_array_get(group_items(response, 0), 9);
    CHECK_STR(json_str(q1, "linkId"), "H1/TS");
    CHECK(json_number_value(json_object_get(json_object_get(first_answer(q1), "valueQuantity"), "value")) == 4.0);
    json_decref(response);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(text);
}

/* The Apgar total of lhc_apgar_itemweight: five `variable`s look each chosen option's
 * itemWeight up through %questionnaire and the calculatedExpression adds them only when all five
 * exist. It imports with an empty report; the total is the sum, and absent with one unanswered. */
static double apgar_total(stepkit_task *task, const char *const answers[5], int *present)
{
    stepkit_session *s = NULL;
    json_t *response, *items, *item;
    double total = -1;
    size_t i;
    *present = 0;
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    for (i = 0; i < 5; i++) {
        if (answers[i]) {
            CHECK_RC(stepkit_session_set_answer(s, answers[i], NULL), STEPKIT_OK);
            CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
        } else {
            CHECK_RC(stepkit_session_skip(s, NULL), STEPKIT_OK);
        }
    }
    response = fhir_response(s);
    items = json_object_get(response, "item");
    for (i = 0; i < json_array_size(items); i++) {
        item = json_array_get(items, i);
        if (!strcmp(json_str(item, "linkId"), "9272-6")) {
            *present = 1;
            total = json_number_value(json_object_get(first_answer(item), "valueDecimal"));
        }
    }
    json_decref(response);
    stepkit_session_free(s);
    return total;
}

static void test_walk_apgar_total(void)
{
    static const char *const all[5] = {"[\"LA6723-6\"]", "[\"LA6718-6\"]", "[\"LA6721-0\"]", "[\"LA6713-7\"]", "[\"LA6726-9\"]"};
    static const char *const four[5] = {"[\"LA6724-4\"]", "[\"LA6718-6\"]", NULL, "[\"LA6715-2\"]", "[\"LA6727-7\"]"};
    char *text = read_in(forms_dir, "lhc_apgar_itemweight.json");
    stepkit_task *task = NULL;
    int present = 0;
    if (!text)
        return;
    CHECK_RC(stepkit_task_compile_fhir(text, "{\"strict\": true}", &task), STEPKIT_OK);   /* empty report */
    CHECK(apgar_total(task, all, &present) == 1 + 2 + 2 + 0 + 1);
    CHECK(present == 1);
    apgar_total(task, four, &present);
    CHECK(present == 0);   /* one question unanswered: no total, as FHIRPath's empty collection */
    stepkit_task_free(task);
    free(text);
}

static void test_examples_have_empty_reports(void)
{
    const char *names[] = {"vitals.json", "branching.json", "scores.json"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *text = read_in(examples_dir, names[i]);
        stepkit_task *task = NULL;
        if (!text)
            continue;
        CHECK(report_size(text) == 0);
        CHECK_RC(stepkit_task_compile_fhir(text, "{\"strict\": true}", &task), STEPKIT_OK);
        stepkit_task_free(task);
        free(text);
    }
}

/* Whether `link` is among the state's visible form items. */
static int is_visible(stepkit_session *s, const char *link)
{
    json_t *state = state_of(s);
    json_t *list = json_object_get(state, "visibleItems");
    size_t i;
    int found = 0;
    for (i = 0; i < json_array_size(list); i++)
        if (strcmp(json_string_value(json_array_get(list, i)), link) == 0)
            found = 1;
    json_decref(state);
    return found;
}

/* Issue 29, items 2 and 3: enableWhen ordering strings (R4: the answer compared with the value;
 * FHIRPath orders strings by code point), an enableWhenExpression with FHIRPath's string
 * functions, a condition StepKit cannot evaluate (the item declined, never shown), and an
 * answerValueSet the host supplies (ordinary coded choices, the condition on it kept). */
#define CONDITIONS_Q \
    "{\"resourceType\": \"Questionnaire\", \"item\": [{\"linkId\": \"g\", \"type\": \"group\", \"item\": [" \
    " {\"linkId\": \"t\", \"type\": \"string\"}," \
    " {\"linkId\": \"after-m\", \"type\": \"string\", \"enableWhen\": [{\"question\": \"t\", \"operator\": \">\", \"answerString\": \"m\"}]}," \
    " {\"linkId\": \"z\", \"type\": \"string\", \"extension\": [{\"url\": \"http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression\"," \
    "   \"valueExpression\": {\"language\": \"text/fhirpath\", \"expression\": \"%resource.item.item.where(linkId='t').answer.value.upper().startsWith('Z')\"}}]}," \
    " {\"linkId\": \"chars\", \"type\": \"string\", \"extension\": [{\"url\": \"http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression\"," \
    "   \"valueExpression\": {\"language\": \"text/fhirpath\", \"expression\": \"%resource.item.item.where(linkId='t').answer.value.toChars().count() > 1\"}}]}," \
    " {\"linkId\": \"c\", \"type\": \"choice\", \"answerValueSet\": \"http://example.org/vs|1\"}," \
    " {\"linkId\": \"if-b\", \"type\": \"string\", \"enableWhen\": [{\"question\": \"c\", \"operator\": \"=\", \"answerCoding\": {\"system\": \"http://example.org/cs\", \"code\": \"b\"}}]}" \
    "]}]}"
#define VALUE_SETS "{\"valueSets\": {\"http://example.org/vs\": [{\"system\": \"http://example.org/cs\", \"code\": \"a\", \"display\": \"A\"}," \
    " {\"system\": \"http://example.org/cs\", \"code\": \"b\", \"display\": \"B\"}]}}"

static void test_conditions_evaluated_or_declined(void)
{
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    json_t *doc, *report, *error;
    /* Without the value set: c and if-b (whose condition reads c) are declined, and chars. */
    doc = translation(CONDITIONS_Q, NULL);
    report = json_object_get(doc, "report");
    CHECK(json_array_size(report) == 3);
    /* The items' own entries first, then the conditions'. */
    CHECK_STR(json_str(json_array_get(report, 0), "path"), "item[0].item[4].answerValueSet");
    CHECK_STR(json_str(json_array_get(report, 0), "code"), "externalValueSet");
    CHECK_STR(json_str(json_array_get(report, 1), "path"), "item[0].item[3].extension[0]");
    CHECK_STR(json_str(json_array_get(report, 1), "code"), "conditionNotTranslated");
    CHECK_STR(json_str(json_array_get(report, 2), "linkId"), "if-b");
    CHECK_STR(json_str(json_array_get(report, 2), "code"), "conditionOnUnaskedItem");
    json_decref(doc);
    CHECK_RC(stepkit_task_compile_fhir(CONDITIONS_Q, "{\"strict\": true}", &task), STEPKIT_EDEFINITION);
    error = check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", NULL);
    CHECK(json_array_size(json_object_get(error, "errors")) == 3);
    json_decref(error);
    /* A malformed value set option: every problem, with its path. */
    CHECK_RC(stepkit_task_compile_fhir(CONDITIONS_Q, "{\"valueSets\": {\"http://example.org/vs\": [{\"display\": \"x\"}, 7]}}", &task),
             STEPKIT_EINVAL);
    error = check_last_error(STEPKIT_EINVAL, "EINVAL", NULL);
    CHECK(json_array_size(json_object_get(error, "errors")) == 2);
    json_decref(error);

    /* With it: only chars is declined. */
    doc = translation(CONDITIONS_Q, VALUE_SETS);
    CHECK(json_array_size(json_object_get(doc, "report")) == 1);
    json_decref(doc);
    CHECK_RC(stepkit_task_compile_fhir(CONDITIONS_Q, VALUE_SETS, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK(!is_visible(s, "after-m") && !is_visible(s, "z") && !is_visible(s, "if-b"));   /* unanswered: not enabled */
    CHECK(!is_visible(s, "chars"));
    CHECK_RC(stepkit_session_set_answer(s, "{\"t\": \"zebra\", \"c\": [\"b\"]}", NULL), STEPKIT_OK);
    CHECK(is_visible(s, "after-m") && is_visible(s, "z") && is_visible(s, "if-b") && !is_visible(s, "chars"));
    CHECK_RC(stepkit_session_set_answer(s, "{\"t\": \"Mango\", \"c\": [\"a\"]}", NULL), STEPKIT_OK);
    /* "Mango" < "m" in code-point order (M is U+004D). */
    CHECK(!is_visible(s, "after-m") && !is_visible(s, "z") && !is_visible(s, "if-b"));
    CHECK_RC(stepkit_session_set_answer(s, "{\"t\": \"mz\"}", NULL), STEPKIT_OK);
    CHECK(is_visible(s, "after-m") && !is_visible(s, "z"));
    doc = fhir_response(s);
    /* c's answer is the supplied concept's coding. */
    CHECK_STR(json_str(json_object_get(answer_of(group_items(doc, 0), 1), "valueCoding"), "code"), "a");
    json_decref(doc);
    stepkit_session_free(s);
    stepkit_task_free(task);
}

/* Issue 29, item 4: R4's datatypes. integer is 32 bits; time is hh:mm:ss; a dateTime with a
 * time SHALL have a zone, and may be a year or a month. */
static void test_r4_datatypes(void)
{
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    json_t *doc, *items;
    CHECK_RC(stepkit_task_compile_fhir("{\"resourceType\": \"Questionnaire\", \"item\": [{\"linkId\": \"g\", \"type\": \"group\", \"item\": ["
                                       " {\"linkId\": \"n\", \"type\": \"integer\"}, {\"linkId\": \"t\", \"type\": \"time\"},"
                                       " {\"linkId\": \"d\", \"type\": \"dateTime\"}]}]}", NULL, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "{\"n\": 2147483648}", NULL), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_set_answer(s, "{\"n\": -2147483649}", NULL), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_set_answer(s, "{\"t\": \"11:11\"}", NULL), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_set_answer(s, "{\"d\": \"2021-05-03T10:30:00\"}", NULL), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_set_answer(s, "{\"n\": 2147483647, \"t\": \"11:11:11\", \"d\": \"2021-05-03T10:30:00+02:00\"}", NULL), STEPKIT_OK);
    doc = fhir_response(s);
    items = group_items(doc, 0);
    CHECK(json_integer_value(json_object_get(answer_of(items, 0), "valueInteger")) == 2147483647);
    CHECK_STR(json_str(answer_of(items, 1), "valueTime"), "11:11:11");
    CHECK_STR(json_str(answer_of(items, 2), "valueDateTime"), "2021-05-03T10:30:00+02:00");
    json_decref(doc);
    /* Reduced precision: a month is a dateTime too, exported as written; month 13 is not. */
    CHECK_RC(stepkit_session_set_answer(s, "{\"d\": \"2021-13\"}", NULL), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_set_answer(s, "{\"d\": \"2021-05\"}", NULL), STEPKIT_OK);
    doc = fhir_response(s);
    items = group_items(doc, 0);
    CHECK_STR(json_str(answer_of(items, 2), "valueDateTime"), "2021-05");
    json_decref(doc);
    stepkit_session_free(s);
    stepkit_task_free(task);
}

static void test_bad_questionnaires(void)
{
    stepkit_task *task = SENTINEL;
    char *out = SENTINEL;
    json_t *error;
    CHECK_RC(stepkit_task_compile_fhir("{\"resourceType\": \"Patient\"}", NULL, &task), STEPKIT_EDEFINITION);
    CHECK(task == NULL);
    json_decref(check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", "resourceType"));
    CHECK_RC(stepkit_task_translate_fhir(
                 "{\"resourceType\": \"Questionnaire\", \"item\": [{\"linkId\": \"a\", \"type\": \"string\"},"
                 " {\"linkId\": \"g\", \"type\": \"group\", \"item\": [{\"linkId\": \"a\", \"type\": \"string\"},"
                 "  {\"linkId\": \"b\", \"type\": \"string\", \"enableWhen\": [{\"question\": \"a\", \"operator\": \"exists\", \"answerBoolean\": true},"
                 "   {\"question\": \"zz\", \"operator\": \"=\", \"answerString\": \"x\"}]}]}]}", NULL, &out),
             STEPKIT_EDEFINITION);
    CHECK(out == NULL);
    error = check_last_error(STEPKIT_EDEFINITION, "EDEFINITION", NULL);
    CHECK(json_array_size(json_object_get(error, "errors")) == 2);
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "path"), "item[1].item[0].linkId");
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 1), "path"), "item[1].item[1].enableWhen[1].question");
    json_decref(error);
    CHECK_RC(stepkit_task_compile_fhir(NULL, NULL, &task), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_result_fhir(NULL, &out), STEPKIT_EINVAL);
}

/* lhc_hidden_items: questionnaire-hidden means "not displayed" (R4), so the hidden group and the
 * hidden calculated items make no step; the visible calculated ones are shown with their value
 * (SDC: computed, displayed read-only), and every one of them is in the response. */
static void test_walk_hidden_items(void)
{
    char *text = read_in(forms_dir, "lhc_hidden_items.json");
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    json_t *state, *response;
    if (!text)
        return;
    CHECK_RC(stepkit_task_compile_fhir(text, NULL, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_STEP(s, "CE-VISIBLE");
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_STEP(s, "ITEM-VISIBLE");
    CHECK_RC(stepkit_session_set_answer(s, "3", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_STEP(s, "GROUP-VISIBLE");
    state = state_of(s);
    CHECK_STR(json_str(json_object_get(state, "step"), "text"), "GROUP-VISIBLE/CE-VISIBLE/1/1: 3");
    json_decref(state);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    state = state_of(s);
    CHECK_STR(json_str(state, "status"), "finished");
    json_decref(state);
    response = fhir_response(s);
    /* The hidden group is exported with its calculated item. */
    CHECK_STR(json_str(json_array_get(json_object_get(response, "item"), json_array_size(json_object_get(response, "item")) - 1), "linkId"), "GROUP-HIDDEN");
    json_decref(response);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(text);
}

/* SDC's initialExpression: the item starts with the expression's value when it is first enabled,
 * and an edit is not recomputed; one that reads the patient's record is reported. */
static void test_initial_expression(void)
{
    static const char q[] =
        "{\"resourceType\": \"Questionnaire\", \"id\": \"ie\", \"item\": ["
        " {\"linkId\": \"weight\", \"text\": \"Weight\", \"type\": \"decimal\"},"
        " {\"linkId\": \"again\", \"text\": \"Again\", \"type\": \"decimal\", \"extension\": [{\"url\":"
        "  \"http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-initialExpression\", \"valueExpression\":"
        "  {\"language\": \"text/fhirpath\", \"expression\": \"%resource.item.where(linkId='weight').answer.value\"}}]},"
        " {\"linkId\": \"sex\", \"text\": \"Sex\", \"type\": \"string\", \"extension\": [{\"url\":"
        "  \"http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-initialExpression\", \"valueExpression\":"
        "  {\"language\": \"text/fhirpath\", \"expression\": \"%patient.gender\"}}]}]}";
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    json_t *state;
    CHECK(report_size(q) == 1);
    CHECK_RC(stepkit_task_compile_fhir(q, NULL, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "64.5", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    state = state_of(s);
    CHECK(json_real_value(json_object_get(state, "answer")) == 64.5);
    json_decref(state);
    CHECK_RC(stepkit_session_set_answer(s, "65", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_backward(s, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "90", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    state = state_of(s);
    CHECK(json_number_value(json_object_get(state, "answer")) == 65.0);
    json_decref(state);
    stepkit_session_free(s);
    stepkit_task_free(task);
}

/* FHIR's rule for `required` (R4: a required item must be answered in a completed response; SDC:
 * the status shall not become "completed" while one is missing), the import's default: every
 * step may be left, the state lists what is missing, and only completing is refused, with every
 * missing item. The option "requiredAnswersChecked": "perStep" keeps ResearchKit's rule. */
static void test_required_at_completion(void)
{
    static const char q[] =
        "{\"resourceType\": \"Questionnaire\", \"id\": \"req\", \"item\": ["
        " {\"linkId\": \"a\", \"text\": \"First\", \"type\": \"string\", \"required\": true},"
        " {\"linkId\": \"g\", \"text\": \"Group\", \"type\": \"group\", \"item\": ["
        "  {\"linkId\": \"b\", \"text\": \"Second\", \"type\": \"integer\", \"required\": true},"
        "  {\"linkId\": \"c\", \"text\": \"Third\", \"type\": \"integer\"}]},"
        " {\"linkId\": \"d\", \"text\": \"Last\", \"type\": \"boolean\", \"required\": true}]}";
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    json_t *state, *missing, *error, *errors, *response;
    CHECK_RC(stepkit_task_compile_fhir(q, NULL, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    /* An invalid answer is refused at once, whatever the rule. */
    CHECK_RC(stepkit_session_set_answer(s, "{\"b\": 1.5}", NULL), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_set_answer(s, "{\"c\": 2}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_STEP(s, "d");
    CHECK_RC(stepkit_session_set_answer(s, "true", NULL), STEPKIT_OK);
    state = state_of(s);
    missing = json_object_get(state, "missingAnswers");
    CHECK(json_array_size(missing) == 2);
    CHECK_STR(json_str(json_array_get(missing, 0), "step"), "a");
    CHECK_STR(json_str(json_array_get(missing, 1), "step"), "g");
    CHECK_STR(json_str(json_array_get(missing, 1), "item"), "b");
    CHECK_STR(json_str(json_array_get(missing, 1), "path"), "g.b");
    CHECK(json_is_false(json_object_get(json_object_get(state, "navigation"), "canGoForward")));
    json_decref(state);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_ESTATE);
    error = check_last_error(STEPKIT_ESTATE, "ESTATE", "a");
    errors = json_object_get(error, "errors");
    CHECK(json_array_size(errors) == 2);
    CHECK_STR(json_str(json_array_get(errors, 1), "path"), "g.b");
    json_decref(error);
    CHECK_RC(stepkit_session_finish(s, "completed", NULL), STEPKIT_ESTATE);
    response = fhir_response(s);
    CHECK_STR(json_str(response, "status"), "in-progress");
    json_decref(response);
    stepkit_session_free(s);
    stepkit_task_free(task);

    CHECK_RC(stepkit_task_compile_fhir(q, "{\"requiredAnswersChecked\": \"perStep\"}", &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_ESTATE);
    CHECK_STEP(s, "a");
    stepkit_session_free(s);
    stepkit_task_free(task);
    CHECK_FAILS(task, stepkit_task_compile_fhir(q, "{\"requiredAnswersChecked\": \"later\"}", &task), STEPKIT_EINVAL);
}

/* The items of `parent` (a response or a group) whose linkId is `link`, in order: a repeating
 * group's repetitions. Fills `found` (up to `max`); returns how many there are. */
static size_t items_named(const json_t *parent, const char *link, const json_t **found, size_t max)
{
    size_t i, n = 0;
    json_t *item;
    json_array_foreach(json_object_get(parent, "item"), i, item) {
        if (strcmp(json_str(item, "linkId") ? json_str(item, "linkId") : "", link) == 0) {
            if (n < max)
                found[n] = item;
            n++;
        }
    }
    return n;
}

/* The loop scenario (Tests/fixtures/fhir-loop.json, written from R4 and SDC), walked with three
 * repetitions: one response item per repetition (R4: a repeating group is several items with its
 * linkId), "times" and "perDay" disabled where "daily" is false in that repetition (enableWhen
 * read in the same repetition), perDay = dose x times computed per repetition (SDC: the item is
 * the expression's context), the repeating question's answers repeated in its item, and the
 * count and sum over every repetition through %resource. */
static void test_loop_scenario(void)
{
    char path[4096];
    char *q;
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    json_t *state, *response;
    const json_t *reps[4] = {NULL};
    const json_t *summary[1] = {NULL};
    const json_t *found[1] = {NULL};
    snprintf(path, sizeof path, "%s/../../Tests/fixtures/fhir-loop.json", examples_dir);
    q = read_file(path, NULL);
    CHECK(q != NULL);
    if (!q)
        return;
    CHECK_RC(stepkit_task_compile_fhir(q, NULL, &task), STEPKIT_OK);
    CHECK_RC(stepkit_session_open(task, NULL, &s), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(s, "meds", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_add_instance(s, "meds", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s,
        "{\"meds\": [{\"name\": \"Aspirin\", \"dose\": 100, \"daily\": true, \"times\": 2, \"notes\": [\"with food\", \"mornings\"]},"
        " {\"name\": \"Ibuprofen\", \"dose\": 200, \"daily\": false, \"times\": 3},"
        " {\"name\": \"Vitamin D\", \"daily\": true, \"times\": 1, \"notes\": [\"winter\"]}]}", NULL), STEPKIT_OK);
    /* maxOccurs 3 on the repeating question: a fourth answer is refused, nothing changes. */
    CHECK_RC(stepkit_session_set_answer(s, "{\"meds\": [{\"notes\": [\"a\", \"b\", \"c\", \"d\"]}]}", NULL), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_set_answer(s, "{\"complete\": true}", NULL), STEPKIT_OK);
    CHECK_RC(stepkit_session_go_forward(s, NULL), STEPKIT_OK);
    state = state_of(s);
    CHECK_STR(json_str(state, "status"), "finished");
    json_decref(state);
    response = fhir_response(s);
    CHECK_STR(json_str(response, "status"), "completed");
    CHECK(items_named(response, "meds", reps, 4) == 3);
    if (reps[2]) {
        CHECK(items_named(reps[0], "perDay", found, 1) == 1 && json_number_value(json_object_get(first_answer(found[0]), "valueDecimal")) == 200.0);
        CHECK(items_named(reps[0], "notes", found, 1) == 1 && json_array_size(json_object_get(found[0], "answer")) == 2);
        CHECK(json_array_size(json_object_get(reps[1], "item")) == 3);  /* name, dose, daily */
        CHECK(items_named(reps[1], "times", found, 1) == 0 && items_named(reps[1], "perDay", found, 1) == 0);
        CHECK(items_named(reps[2], "perDay", found, 1) == 0);  /* no dose: FHIRPath's empty */
    }
    CHECK(items_named(response, "summary", summary, 1) == 1);
    if (summary[0]) {
        CHECK(items_named(summary[0], "total", found, 1) == 1 && json_integer_value(json_object_get(first_answer(found[0]), "valueInteger")) == 3);
        CHECK(items_named(summary[0], "totalDose", found, 1) == 1 && json_number_value(json_object_get(first_answer(found[0]), "valueDecimal")) == 300.0);
    }
    json_decref(response);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(q);
}

int main(int argc, char **argv)
{
    struct stat st;
    forms_dir = getenv("STEPKIT_FHIR_FORMS");
    if (!forms_dir || !*forms_dir)
        forms_dir = argc > 1 ? argv[1] : "../shared/fhir/q";
    examples_dir = argc > 2 ? argv[2] : "examples/fhir";
    RUN(test_examples_have_empty_reports);
    RUN(test_bad_questionnaires);
    RUN(test_required_at_completion);
    RUN(test_initial_expression);
    RUN(test_conditions_evaluated_or_declined);
    RUN(test_r4_datatypes);
    RUN(test_loop_scenario);
    if (stat(forms_dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        RUN(test_published_forms_import);
        RUN(test_walk_phr);
        RUN(test_walk_phq9);
        RUN(test_walk_apgar_total);
        RUN(test_walk_hidden_items);
    } else {
        printf("SKIP: the published FHIR forms are not here: %s is absent (set STEPKIT_FHIR_FORMS); "
               "only the examples and bad input were tested\n", forms_dir);
    }
    return check_report();
}
