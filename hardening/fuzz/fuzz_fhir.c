/* libFuzzer target: the FHIR Questionnaire importer. The input is a Questionnaire (any bytes).
 *
 * Oracles (include/stepkit.h, stepkit_task_compile_fhir / stepkit_task_translate_fhir):
 *   - compile_fhir: a documented status, EINVAL/EPARSE/EDEFINITION only, *out_task NULL and a
 *     well-formed error JSON on failure;
 *   - translate_fhir gives the same status ("same options, same errors"); on success its output
 *     is {"task": {...}, "report": [...]} and the "task" definition compiles with
 *     stepkit_task_compile() to the same task (stepkit_task_info equal byte for byte);
 *   - {"strict": true} succeeds exactly when the report is empty, else EDEFINITION with one
 *     problem per report entry;
 *   - an imported task opens, is walked (forward, else skip), exports a QuestionnaireResponse
 *     (stepkit_session_result_fhir, "resourceType" "QuestionnaireResponse") at every step and
 *     once finished, and its restoration data restores.
 * Seeds: examples/fhir/*.json (make_seeds.py), plus at run time the Questionnaires of
 * ../shared/fhir/q beside the repository when that folder exists (hardening/fuzz/run). */
#include "fuzz_common.h"

static int64_t fixed_clock(void *user_data) { (void)user_data; return 1767225600000LL; }

static char *info_of(stepkit_task *task) {
    char *out = NULL;
    int rc = stepkit_task_info(task, &out);
    FUZZ_CHECK(rc == STEPKIT_OK && out, "task_info rc %d", rc);
    fuzz_check_json(out);
    return out;
}

static void check_response(stepkit_session *s) {
    char *out = NULL;
    int rc = stepkit_session_result_fhir(s, &out);
    FUZZ_CHECK(rc == STEPKIT_OK, "result_fhir rc %d on an imported task", rc);
    fuzz_check_json(out);
    FUZZ_CHECK(strstr(out, "\"resourceType\"") && strstr(out, "\"QuestionnaireResponse\""),
               "result_fhir is not a QuestionnaireResponse: %.300s", out);
    stepkit_string_free(out);
}

/* The number of entries of the "errors" array in the last error JSON. */
static size_t error_count(void) {
    json_error_t err;
    json_t *j = json_loads(stepkit_last_error(), 0, &err);
    FUZZ_CHECK(j != NULL, "last_error is not JSON");
    json_t *errors = json_object_get(j, "errors");
    size_t n = json_is_array(errors) ? json_array_size(errors) : 0;
    json_decref(j);
    return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    fuzz_skip_byte_compare_hooks_of("fhir", *argc, *argv); /* fuzz_common.h */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    stepkit_task *task = (stepkit_task *)0x1;
    int rc = stepkit_task_compile_fhir(text, NULL, &task);
    FUZZ_CHECK(fuzz_known_status(rc), "unknown status %d", rc);
    char *translated = (char *)0x1;
    int trc = stepkit_task_translate_fhir(text, NULL, &translated);
    FUZZ_CHECK(trc == rc, "translate_fhir rc %d, compile_fhir rc %d (same errors promised)", trc, rc);
    if (rc != STEPKIT_OK) {
        FUZZ_CHECK(task == NULL, "task not NULL on failure");
        FUZZ_CHECK(translated == NULL, "translate output not NULL on failure");
        FUZZ_CHECK(rc == STEPKIT_EINVAL || rc == STEPKIT_EPARSE || rc == STEPKIT_EDEFINITION, "compile_fhir rc %d", rc);
        fuzz_check_error(rc);
        free(text);
        return 0;
    }
    fuzz_check_json(translated);

    /* the translation: its task definition compiles to the same task, its report says strictness */
    json_error_t err;
    json_t *tj = json_loads(translated, 0, &err);
    FUZZ_CHECK(json_is_object(tj), "translate output is not an object: %.300s", translated);
    json_t *definition = json_object_get(tj, "task");
    json_t *report = json_object_get(tj, "report");
    FUZZ_CHECK(json_is_object(definition) && json_is_array(report), "translate output lacks task/report: %.300s", translated);
    char *definition_text = json_dumps(definition, JSON_COMPACT);
    FUZZ_CHECK(definition_text != NULL, "cannot serialize the translated task");
    stepkit_task *plain = NULL;
    rc = stepkit_task_compile(definition_text, &plain);
    FUZZ_CHECK(rc == STEPKIT_OK, "the translated definition does not compile: rc %d\n%.500s", rc, definition_text);
    char *info_fhir = info_of(task), *info_plain = info_of(plain);
    FUZZ_CHECK(strcmp(info_fhir, info_plain) == 0, "the translated definition compiles to another task\nimported:   %.500s\ntranslated: %.500s",
               info_fhir, info_plain);
    stepkit_string_free(info_fhir);
    stepkit_string_free(info_plain);
    stepkit_task_free(plain);
    free(definition_text);

    stepkit_task *strict = (stepkit_task *)0x1;
    rc = stepkit_task_compile_fhir(text, "{\"strict\": true}", &strict);
    size_t entries = json_array_size(report);
    if (entries == 0) {
        FUZZ_CHECK(rc == STEPKIT_OK, "strict import refused a Questionnaire with an empty report: rc %d", rc);
        stepkit_task_free(strict);
    } else {
        FUZZ_CHECK(rc == STEPKIT_EDEFINITION && strict == NULL, "strict import of a Questionnaire with %zu report entries: rc %d", entries, rc);
        fuzz_check_error(rc);
        FUZZ_CHECK(error_count() == entries, "strict import: %zu problems for %zu report entries", error_count(), entries);
    }
    json_decref(tj);
    stepkit_string_free(translated);

    /* the imported task in use */
    stepkit_session *s = NULL;
    rc = stepkit_session_open(task, "{\"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\"}", &s);
    FUZZ_CHECK(rc == STEPKIT_OK, "open rc %d", rc);
    FUZZ_CHECK(stepkit_session_set_clock(s, fixed_clock, NULL) == STEPKIT_OK, "set_clock");
    for (int i = 0; i < 8; i++) {
        check_response(s);
        rc = stepkit_session_go_forward(s, NULL);
        if (rc != STEPKIT_OK) {
            fuzz_check_error(rc);
            rc = stepkit_session_skip(s, NULL);
            if (rc != STEPKIT_OK) fuzz_check_error(rc);
        }
    }
    char *saved = NULL;
    rc = stepkit_session_save(s, &saved);
    FUZZ_CHECK(rc == STEPKIT_OK, "save rc %d", rc);
    stepkit_session *r = NULL;
    rc = stepkit_session_restore(task, saved, NULL, &r);
    FUZZ_CHECK(rc == STEPKIT_OK, "restoring fresh restoration data failed: %d\n%.500s", rc, saved);
    check_response(r);
    stepkit_session_free(r);
    stepkit_string_free(saved);
    rc = stepkit_session_finish(s, "saved", NULL);
    if (rc != STEPKIT_OK) fuzz_check_error(rc);
    check_response(s);
    stepkit_session_free(s);
    stepkit_task_free(task);
    free(text);
    return 0;
}
