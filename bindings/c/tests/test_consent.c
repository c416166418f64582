/*
 * test_consent.c — consent and the steps the host reports, through the C ABI: the onboarding
 * example walked with its consent review and a typed-name signature; the result's consent
 * record carries the document's version and SHA-256 (that of the review text the participant
 * was shown) and the signature file's SHA-256 (that of the file's bytes, read back here and
 * hashed with libcrypto); bad reports are refused with their status and change nothing; the
 * signed document is rendered with the participant's names.
 *
 *     test_consent EXAMPLES_DIR
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <dirent.h>
#include <openssl/sha.h>
#include <unistd.h>

#include "check.h"
#include "read_file.h"

static const char *examples = "examples/tasks";
static char directory[] = "/tmp/test_consent.XXXXXX";

/* The SHA-256 of `length` bytes as lower-case hex, in `hex` (65 bytes). */
static void sha256_hex(const unsigned char *bytes, size_t length, char hex[65])
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(bytes, length, digest);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
        sprintf(hex + 2 * i, "%02x", digest[i]);
}

/* How many files the output directory holds. */
/* CHECKs the last error's status and its first problem's code (and path, unless NULL). */
static void check_refusal(int status, const char *problem, const char *path)
{
    json_t *error = check_last_error(status, stepkit_status_name(status), path);
    CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), problem);
    json_decref(error);
}

static int file_count(void)
{
    int n = 0;
    DIR *d = opendir(directory);
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static stepkit_task *onboarding(void)
{
    char path[4096];
    char *text;
    stepkit_task *task;
    snprintf(path, sizeof path, "%s/onboarding.json", examples);
    text = read_file(path, NULL);
    CHECK(text != NULL);
    task = compile_ok(text ? text : "");
    free(text);
    return task;
}

/* A step object of a step result (by identifier) in a result's top level. */
static json_t *step_result(json_t *result, const char *identifier)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(result, "results"), i, r) {
        if (strcmp(json_str(r, "identifier"), identifier) == 0)
            return r;
    }
    return NULL;
}

static void test_onboarding_walk(void)
{
    char options[512];
    char *out = NULL;
    char hex[65];
    stepkit_task *task = onboarding();
    stepkit_session *session;
    json_t *state, *document, *result, *consent, *record, *signed_doc;
    const char *markdown;

    snprintf(options, sizeof options, "{\"outputDirectory\": \"%s\"}", directory);
    session = open_ok(task, options);
    state = state_of(session);
    CHECK(json_array_size(json_object_get(json_object_get(state, "step"), "consentSections")) == 5);
    json_decref(state);

    CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_OK);
    state = parse_out(out);
    document = json_object_get(json_object_get(state, "step"), "document");
    markdown = json_str(document, "markdown");
    {
        /* docs/task-format.md: "# <title>", a blank line, "Version <version>", then the sections. */
        const char *start = "# Consent to take part in the Sleep and Mood Study\n\nVersion 2.1\n\n## Welcome\n\n";
        CHECK(markdown && strncmp(markdown, start, strlen(start)) == 0);
    }
    /* The digest is the review text's. */
    sha256_hex((const unsigned char *)(markdown ? markdown : ""), markdown ? strlen(markdown) : 0, hex);
    CHECK_STR(json_str(document, "sha256"), hex);

    /* Not a reported step: the report is refused, nothing changes. */
    CHECK_FAILS(out, stepkit_session_report(session, "{\"step\": \"consent_review\", \"viewed\": true}", &out), STEPKIT_ESTATE);
    check_refusal(STEPKIT_ESTATE, "notReported", NULL);
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"consented\": true, \"givenName\": \"Ada\", \"familyName\": \"Lovelace\"}", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_STEP(session, "consent_signature");

    /* The signature is only a report; bad ones are refused and write nothing. */
    CHECK_FAILS(out, stepkit_session_set_answer(session, "{\"typedName\": \"Ada\"}", &out), STEPKIT_ESTATE);
    check_refusal(STEPKIT_ESTATE, "reportedByHost", NULL);
    CHECK_FAILS(out, stepkit_session_report(session, "{\"step\": \"consent_review\", \"typedName\": \"Ada\"}", &out), STEPKIT_ESTATE);
    check_refusal(STEPKIT_ESTATE, "notCurrentStep", NULL);
    CHECK_FAILS(out, stepkit_session_report(session, "{\"step\": \"consent_signature\", \"typedName\": \" \"}", &out), STEPKIT_EANSWER);
    check_refusal(STEPKIT_EANSWER, "invalidReport", "typedName");
    CHECK_FAILS(out, stepkit_session_report(session, "{\"step\": \"consent_signature\", \"image\": {\"contentType\": \"image/png\", \"base64\": \"R0lGODlh\"}}", &out), STEPKIT_EANSWER);
    CHECK_FAILS(out, stepkit_session_report(session, "{\"typedName\": \"Ada\"}", &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_report(session, "{\"step\": ", &out), STEPKIT_EPARSE);
    CHECK_FAILS(out, stepkit_session_report(session, NULL, &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_report(NULL, "{}", NULL), STEPKIT_EINVAL);
    CHECK(file_count() == 0);

    CHECK_RC(stepkit_session_report(session, "{\"step\": \"consent_signature\", \"typedName\": \"Ada Lovelace\"}", NULL), STEPKIT_OK);
    CHECK(file_count() == 1);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "{\"age\": 36, \"usual_bedtime\": \"22:30\"}", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "4", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));

    result = result_of(session);
    consent = json_object_get(step_result(result, "consent_review"), "consent");
    CHECK(json_is_true(json_object_get(consent, "consented")));
    CHECK_STR(json_str(consent, "documentVersion"), "2.1");
    CHECK_STR(json_str(consent, "documentSHA256"), json_str(document, "sha256"));
    CHECK_STR(json_str(consent, "givenName"), "Ada");
    CHECK_STR(json_str(consent, "familyName"), "Lovelace");
    record = json_object_get(json_array_get(json_object_get(step_result(result, "consent_signature"), "results"), 0), "answer");
    {
        char path[4096];
        size_t length = 0;
        char *bytes;
        snprintf(path, sizeof path, "%s/%s", directory, json_str(record, "fileName"));
        bytes = read_file(path, &length);
        CHECK(bytes != NULL && length == 13 && memcmp(bytes, "Ada Lovelace\n", 13) == 0);
        sha256_hex((const unsigned char *)(bytes ? bytes : ""), bytes ? length : 0, hex);
        CHECK_STR(json_str(record, "sha256"), hex);
        free(bytes);
    }

    CHECK_RC(stepkit_session_consent_document(session, &out), STEPKIT_OK);
    signed_doc = parse_out(out);
    CHECK(strstr(json_str(signed_doc, "markdown"), "Participant: Ada Lovelace\n") != NULL);
    CHECK(strstr(json_str(signed_doc, "markdown"), json_str(record, "fileName")) != NULL);
    CHECK(strstr(json_str(signed_doc, "html"), "<p>Participant: Ada Lovelace</p>") != NULL);
    CHECK_STR(json_str(json_object_get(signed_doc, "signature"), "sha256"), hex);
    CHECK_FAILS(out, stepkit_session_consent_document(NULL, &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_consent_document(session, NULL), STEPKIT_EINVAL);
    /* Once finished, no report is taken. */
    CHECK_FAILS(out, stepkit_session_report(session, "{\"step\": \"consent_signature\", \"typedName\": \"A\"}", &out), STEPKIT_ESTATE);

    json_decref(signed_doc);
    json_decref(result);
    json_decref(state);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_no_consent_review(void)
{
    char *out = NULL;
    stepkit_task *task = compile_ok("{\"identifier\": \"t\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"i\"}]}");
    stepkit_session *session = open_ok(task, NULL);
    CHECK_FAILS(out, stepkit_session_consent_document(session, &out), STEPKIT_ESTATE);
    check_refusal(STEPKIT_ESTATE, "noConsentReview", NULL);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_permissions_report(void)
{
    char *out = NULL;
    json_t *result;
    stepkit_task *task = compile_ok("{\"identifier\": \"t\", \"steps\": [{\"type\": \"requestPermissions\", \"identifier\": \"p\", \"permissions\": [\"camera\", \"location\"]}]}");
    stepkit_session *session = open_ok(task, NULL);
    CHECK_FAILS(out, stepkit_session_report(session, "{\"step\": \"p\", \"granted\": [\"camera\"], \"denied\": []}", &out), STEPKIT_EANSWER);
    CHECK_RC(stepkit_session_report(session, "{\"step\": \"p\", \"granted\": [\"location\"], \"denied\": [\"camera\"]}", &out), STEPKIT_OK);
    stepkit_string_free(out);
    result = result_of(session);
    {
        json_t *answer = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(result, "results"), 0), "results"), 0), "answer");
        CHECK_STR(json_string_value(json_array_get(json_object_get(answer, "granted"), 0)), "location");
        CHECK_STR(json_string_value(json_array_get(json_object_get(answer, "denied"), 0)), "camera");
    }
    json_decref(result);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        examples = argv[1];
    if (!mkdtemp(directory)) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    RUN(test_onboarding_walk);
    RUN(test_no_consent_review);
    RUN(test_permissions_report);
    {
        DIR *d = opendir(directory);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char path[4096];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", directory, e->d_name);
            unlink(path);
        }
        if (d)
            closedir(d);
        rmdir(directory);
    }
    return check_report();
}
