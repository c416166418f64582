/*
 * test_audit.c — the audit trail through the C ABI: each accepted change is listed with its
 * old and new value, its date and the actor the host names; a refused call adds nothing; the
 * trail streams from an index, survives save and restore, and restoration data whose trail
 * was edited, cut off or reordered is refused naming the first bad event.
 */
#include "check.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00.000Z */

static int64_t now_ms = T0;
static int64_t manual_clock(void *user_data)
{
    (void)user_data;
    return now_ms;
}

/* The trail from `start` (which must be listed), parsed (the caller decrefs). */
static json_t *audit_ok(stepkit_session *session, int64_t start)
{
    char *out = NULL;
    CHECK_RC(stepkit_session_audit(session, start, &out), STEPKIT_OK);
    return parse_out(out);
}

static const char *event_str(json_t *trail, size_t i, const char *key)
{
    return json_str(json_array_get(json_object_get(trail, "events"), i), key);
}

/* smoker answered true, then false; forward; mood skipped. */
static stepkit_session *walked(stepkit_task *task, const char *options)
{
    stepkit_session *session = open_ok(task, options);
    now_ms = T0;
    CHECK_RC(stepkit_session_set_clock(session, manual_clock, NULL), STEPKIT_OK);
    now_ms += 1000;
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "true", &out));
    CHECK_RC(stepkit_session_set_audit_context(session, "dr-3", "corrected on the phone"), STEPKIT_OK);
    now_ms += 1000;
    CHECK_OK_OUT(stepkit_session_set_answer(session, "false", &out));
    CHECK_RC(stepkit_session_set_audit_context(session, NULL, NULL), STEPKIT_OK);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_skip(session, &out));
    return session;
}

static void test_events(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = walked(task, "{\"audit\": {\"actor\": \"participant\"}}");
    char *out = NULL;
    json_t *trail;
    /* Refused: a form answer below its minimum, going back past... nothing is recorded. */
    CHECK_FAILS(out, stepkit_session_set_answer(session, "{\"age\": 3}", &out), STEPKIT_EANSWER);
    trail = audit_ok(session, 0);
    CHECK(json_integer_value(json_object_get(trail, "count")) == 5);
    CHECK(json_is_true(json_object_get(trail, "enabled")));
    CHECK_STR(event_str(trail, 0, "type"), "forward");
    CHECK_STR(event_str(trail, 0, "to"), "smoker");
    CHECK_STR(event_str(trail, 0, "date"), "2026-01-01T00:00:01.000Z");
    CHECK_STR(event_str(trail, 1, "type"), "answerSet");
    CHECK(json_is_null(json_object_get(json_array_get(json_object_get(trail, "events"), 1), "old")));
    CHECK(json_is_true(json_object_get(json_array_get(json_object_get(trail, "events"), 1), "new")));
    CHECK_STR(event_str(trail, 1, "actor"), "participant");
    CHECK_STR(event_str(trail, 2, "type"), "answerSet");
    CHECK(json_is_true(json_object_get(json_array_get(json_object_get(trail, "events"), 2), "old")));
    CHECK(json_is_false(json_object_get(json_array_get(json_object_get(trail, "events"), 2), "new")));
    CHECK_STR(event_str(trail, 2, "actor"), "dr-3");
    CHECK_STR(event_str(trail, 2, "reason"), "corrected on the phone");
    CHECK_STR(event_str(trail, 2, "date"), "2026-01-01T00:00:02.000Z");
    CHECK(event_str(trail, 3, "actor") == NULL);
    CHECK_STR(event_str(trail, 4, "type"), "skip");
    CHECK_STR(event_str(trail, 4, "step"), "mood");
    CHECK(event_str(trail, 4, "digest") != NULL && strlen(event_str(trail, 4, "digest")) == 64);
    json_decref(trail);
    /* Streaming: from index 3, the last two; past the end, none. */
    trail = audit_ok(session, 3);
    CHECK(json_array_size(json_object_get(trail, "events")) == 2);
    CHECK(json_integer_value(json_object_get(json_array_get(json_object_get(trail, "events"), 0), "index")) == 3);
    json_decref(trail);
    trail = audit_ok(session, 99);
    CHECK(json_array_size(json_object_get(trail, "events")) == 0);
    json_decref(trail);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

static void test_errors(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    char *out = NULL;
    char long_text[5000];
    CHECK_FAILS(out, stepkit_session_audit(NULL, 0, &out), STEPKIT_EINVAL);
    CHECK_FAILS(out, stepkit_session_audit(session, -1, &out), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_audit(session, 0, NULL), STEPKIT_EINVAL);
    CHECK_RC(stepkit_session_set_audit_context(NULL, "a", "b"), STEPKIT_EINVAL);
    memset(long_text, 'a', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    CHECK_RC(stepkit_session_set_audit_context(session, long_text, NULL), STEPKIT_EINVAL);
    json_decref(check_last_error(STEPKIT_EINVAL, "EINVAL", NULL));
    CHECK_RC(stepkit_session_open(task, "{\"audit\": \"yes\"}", &session), STEPKIT_EINVAL);
    stepkit_session_free(session);
    /* Switched off: nothing is recorded. */
    session = open_ok(task, "{\"audit\": false}");
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    {
        json_t *trail = audit_ok(session, 0);
        CHECK(json_integer_value(json_object_get(trail, "count")) == 0);
        CHECK(json_is_false(json_object_get(trail, "enabled")));
        json_decref(trail);
    }
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Restores `document` (its integrity member as it was) and checks the refusal's problem. */
static void check_refused(stepkit_task *task, json_t *document, const char *code, const char *path)
{
    char *text = json_dumps(document, JSON_COMPACT);
    stepkit_session *restored = SENTINEL;
    CHECK_RC(stepkit_session_restore(task, text, "{\"integrityKey\": \"k\"}", &restored), STEPKIT_ERESTORE);
    CHECK(restored == NULL);
    {
        json_t *error = check_last_error(STEPKIT_ERESTORE, "ERESTORE", path);
        CHECK_STR(json_str(json_array_get(json_object_get(error, "errors"), 0), "code"), code);
        json_decref(error);
    }
    free(text);
}

/* A copy of `document` with its audit event `index` removed must be refused as tampered, naming
 * `path` (the first event that no longer fits the chain). */
static void check_removal_refused(stepkit_task *task, json_t *document, size_t index, const char *path)
{
    json_t *copy = json_deep_copy(document);
    json_array_remove(json_object_get(json_object_get(copy, "audit"), "events"), index);
    check_refused(task, copy, "auditTampered", path);
    json_decref(copy);
}

static void test_save_restore_and_tampering(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = walked(task, "{\"integrityKey\": \"k\"}");
    stepkit_session *restored = NULL;
    char *saved = NULL;
    json_t *document, *events, *copy, *trail;
    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK_RC(stepkit_session_restore(task, saved, "{\"integrityKey\": \"k\"}", &restored), STEPKIT_OK);
    trail = audit_ok(restored, 0);
    /* The five events, then the restore. */
    CHECK(json_integer_value(json_object_get(trail, "count")) == 6);
    CHECK_STR(event_str(trail, 2, "reason"), "corrected on the phone");
    CHECK_STR(event_str(trail, 5, "type"), "restored");
    json_decref(trail);
    stepkit_session_free(restored);

    document = parse_json(saved);
    events = json_object_get(json_object_get(document, "audit"), "events");
    CHECK(json_array_size(events) == 5);
    /* Edited: the corrected answer put back. */
    copy = json_deep_copy(document);
    json_object_set_new(json_array_get(json_object_get(json_object_get(copy, "audit"), "events"), 2), "new", json_true());
    check_refused(task, copy, "auditTampered", "audit.events[2]");
    json_decref(copy);
    /* Removed from the middle. */
    check_removal_refused(task, document, 1, "audit.events[1]");
    /* Reordered. */
    copy = json_deep_copy(document);
    {
        json_t *list = json_object_get(json_object_get(copy, "audit"), "events");
        json_t *third = json_incref(json_array_get(list, 3));
        json_array_remove(list, 3);
        json_array_insert_new(list, 2, third);
    }
    check_refused(task, copy, "auditTampered", "audit.events[2]");
    json_decref(copy);
    /* Cut off: the first missing event is named. */
    check_removal_refused(task, document, 4, "audit.events[4]");
    json_decref(document);
    stepkit_string_free(saved);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_events);
    RUN(test_errors);
    RUN(test_save_restore_and_tampering);
    return check_report();
}
