/* libFuzzer target: restoration data fed to stepkit_session_restore.
 *
 * Input: <mode byte><task byte><restoration data>.
 *   task byte % 7 picks one of the example tasks, or (6) a changed version of "headache" (same
 *   identifier, another fingerprint) so the migration code runs.
 *   mode & 1: re-sign: a trailing integrity member is cut off and a valid SHA-256 one appended
 *             (exactly as stepkit_session_save writes it), so mutations get past the integrity
 *             check and reach the decoder.
 *   mode & 2: restore with {"migrate": true}.
 *   mode & 4: restore with an integrityKey (HMAC-SHA256).
 * Oracles: documented status (ERESTORE/EINVAL/EPARSE only on failure, never EINTERNAL); a restored
 * session answers state, result, save, and its own restoration data restores again. */
#include "fuzz_common.h"
#include <openssl/sha.h>

static stepkit_task *tasks[FUZZ_TASK_COUNT + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    fuzz_skip_byte_compare_hooks_of("restore", *argc, *argv); /* fuzz_common.h */
    for (int i = 0; i < FUZZ_TASK_COUNT; i++) tasks[i] = fuzz_compile_example(fuzz_task_names[i]);
    /* headache with its completion step's title changed: same identifier, other fingerprint */
    char *text = fuzz_example_text("headache");
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (!j) abort();
    json_t *steps = json_object_get(j, "steps");
    json_t *last = json_array_get(steps, json_array_size(steps) - 1);
    json_object_set_new(last, "title", json_string("Changed title"));
    char *changed = json_dumps(j, JSON_COMPACT);
    if (stepkit_task_compile(changed, &tasks[FUZZ_TASK_COUNT]) != STEPKIT_OK) abort();
    free(changed);
    json_decref(j);
    free(text);
    return 0;
}

static const char TAIL_HEAD[] = ",\"integrity\":{\"algorithm\":\"SHA-256\",\"digest\":\"";

/* The body (without a trailing integrity member) signed the way saveText signs it. */
static char *resign(const char *text) {
    size_t n = strlen(text);
    size_t tail = strlen(TAIL_HEAD) + 64 + 3;
    if (n > tail && memcmp(text + n - tail, TAIL_HEAD, strlen(TAIL_HEAD)) == 0) n -= tail; /* cut the old member */
    else if (n > 0 && text[n - 1] == '}') n -= 1;                                       /* cut the closing brace */
    else return strdup(text);
    /* signed text: body + "}" */
    char *signed_text = malloc(n + 2);
    memcpy(signed_text, text, n);
    signed_text[n] = '}';
    signed_text[n + 1] = 0;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)signed_text, n + 1, digest);
    free(signed_text);
    char *result = malloc(n + tail + 1);
    memcpy(result, text, n);
    memcpy(result + n, TAIL_HEAD, strlen(TAIL_HEAD));
    char *p = result + n + strlen(TAIL_HEAD);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) { sprintf(p, "%02x", digest[i]); p += 2; }
    memcpy(p, "\"}}", 4);
    return result;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    uint8_t mode = data[0];
    stepkit_task *task = tasks[data[1] % (FUZZ_TASK_COUNT + 1)];
    char *raw = fuzz_cstr(data + 2, size - 2);
    char *text = (mode & 1) ? resign(raw) : strdup(raw);
    free(raw);
    const char *options = NULL;
    switch (mode & 6) {
    case 2: options = "{\"migrate\": true}"; break;
    case 4: options = "{\"integrityKey\": \"fuzz-key\"}"; break;
    case 6: options = "{\"migrate\": true, \"integrityKey\": \"fuzz-key\"}"; break;
    }
    stepkit_session *s = (stepkit_session *)0x1;
    int rc = stepkit_session_restore(task, text, options, &s);
    FUZZ_CHECK(fuzz_known_status(rc), "unknown status %d", rc);
    if (rc != STEPKIT_OK) {
        FUZZ_CHECK(s == NULL, "session not NULL on failure");
        FUZZ_CHECK(rc == STEPKIT_ERESTORE || rc == STEPKIT_EINVAL || rc == STEPKIT_EPARSE, "restore rc %d", rc);
        fuzz_check_error(rc);
        free(text);
        return 0;
    }
    char *out = NULL;
    FUZZ_CHECK(stepkit_session_state(s, &out) == STEPKIT_OK, "state of a restored session");
    fuzz_check_json(out);
    stepkit_string_free(out);
    FUZZ_CHECK(stepkit_session_result(s, &out) == STEPKIT_OK, "result of a restored session");
    fuzz_check_json(out);
    stepkit_string_free(out);
    char *saved = NULL;
    FUZZ_CHECK(stepkit_session_save(s, &saved) == STEPKIT_OK, "save of a restored session");
    stepkit_session *again = NULL;
    const char *again_options = (mode & 4) ? "{\"integrityKey\": \"fuzz-key\"}" : NULL;
    rc = stepkit_session_restore(task, saved, again_options, &again);
    FUZZ_CHECK(rc == STEPKIT_OK, "a restored session's own restoration data is refused: rc %d\n%s\ninput: %s", rc, saved, text);
    stepkit_session_free(again);
    stepkit_string_free(saved);
    /* a few moves on the restored session */
    for (int i = 0; i < 3; i++) {
        rc = stepkit_session_go_forward(s, NULL);
        if (rc != STEPKIT_OK) fuzz_check_error(rc);
        rc = stepkit_session_go_backward(s, NULL);
        if (rc != STEPKIT_OK) fuzz_check_error(rc);
        rc = stepkit_session_tick(s, NULL);
        if (rc != STEPKIT_OK) fuzz_check_error(rc);
    }
    stepkit_session_free(s);
    free(text);
    return 0;
}
