/* libFuzzer target: a session driven by the fuzz input.
 *
 * Input: byte 0 picks one of the example tasks (compiled once); then a sequence of operations,
 * each one byte (op = b & 0x0f; b & 0x80: pass out = NULL) with its operands:
 *   0 set_answer  <len lo><len hi><len bytes of answer JSON>
 *   1 forward  2 back  3 skip  4 finish <reason byte>  5 active <op byte>  6 tick
 *   7 advance the manual clock by <byte> * 250 ms   8 state   9 result
 *   10 save, restore, set the clock and compare whole states (the restored session must equal
 *      the original, its running timer included)
 *   11 record <recorder byte> <len lo><len hi><samples JSON>
 *   12 remove/set the event callback   others: no-op
 * Oracles: every status is documented; a failing call sets *out to NULL, leaves an error JSON
 * whose status is the code, never EINTERNAL, and leaves the state exactly as it was; output is
 * JSON; fresh restoration data restores to the same state. The event callback calls back into
 * the session (state) on every event. */
#include "fuzz_common.h"

static stepkit_task *tasks[FUZZ_TASK_COUNT];
static int64_t now_ms;

static int64_t manual_clock(void *user_data) { (void)user_data; return now_ms; }

static int event_depth;
static void on_event(const char *event_json, void *user_data) {
    stepkit_session *s = user_data;
    FUZZ_CHECK(event_json != NULL, "NULL event");
    fuzz_check_json(event_json);
    if (event_depth > 0) return;
    event_depth++;
    char *out = NULL;
    int rc = stepkit_session_state(s, &out); /* re-entering the session from its callback */
    FUZZ_CHECK(rc == STEPKIT_OK, "state from the event callback: rc %d", rc);
    stepkit_string_free(out);
    event_depth--;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    for (int i = 0; i < FUZZ_TASK_COUNT; i++) tasks[i] = fuzz_compile_example(fuzz_task_names[i]);
    return 0;
}

static char *state_of(stepkit_session *s) {
    char *out = NULL;
    int rc = stepkit_session_state(s, &out);
    FUZZ_CHECK(rc == STEPKIT_OK && out, "state rc %d", rc);
    return out;
}

static const char *const reasons[] = {"completed", "saved", "discarded", "failed", "earlyTermination", "bogus", ""};
static const char *const active_ops[] = {"start", "suspend", "resume", "finish", "suspendTask", "resumeTask", "stop", ""};
static const char *const recorders[] = {"accelerometer", "pedometer", "restMotion", "location", "nope"};

/* Runs one call, checks the oracles. */
#define CALL(expr)                                                                                \
    do {                                                                                          \
        char *before = state_of(s);                                                               \
        char *out = (char *)0x1;                                                                  \
        char **outp = null_out ? NULL : &out;                                                     \
        int rc = (expr);                                                                          \
        FUZZ_CHECK(fuzz_known_status(rc), "unknown status %d", rc);                               \
        if (rc == STEPKIT_OK) {                                                                   \
            if (!null_out) { fuzz_check_json(out); stepkit_string_free(out); }                    \
        } else {                                                                                  \
            if (!null_out) FUZZ_CHECK(out == NULL, "*out not NULL on failure");                   \
            fuzz_check_error(rc);                                                                 \
            char *after = state_of(s);                                                            \
            FUZZ_CHECK(strcmp(before, after) == 0, "a rejected call (%s, rc %d) changed the state\nbefore: %s\nafter:  %s", #expr, rc, before, after); \
            stepkit_string_free(after);                                                           \
        }                                                                                         \
        stepkit_string_free(before);                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t pos = 0;
    stepkit_task *task = tasks[data[pos++] % FUZZ_TASK_COUNT];
    now_ms = 1767225600000LL;
    stepkit_session *s = NULL;
    int rc = stepkit_session_open(task, "{\"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\", \"continueOnRecorderFailure\": true}", &s);
    FUZZ_CHECK(rc == STEPKIT_OK, "open rc %d", rc);
    FUZZ_CHECK(stepkit_session_set_clock(s, manual_clock, NULL) == STEPKIT_OK, "set_clock");
    FUZZ_CHECK(stepkit_session_set_event_callback(s, on_event, s, NULL) == STEPKIT_OK, "set_event_callback");
    int ops = 0;
    while (pos < size && ops++ < 200) {
        uint8_t b = data[pos++];
        int null_out = (b & 0x80) != 0;
        switch (b & 0x0f) {
        case 0: {
            size_t len = 0;
            if (pos < size) len = data[pos++];
            if (pos < size) len |= (size_t)data[pos++] << 8;
            if (len > size - pos) len = size - pos;
            char *answer = fuzz_cstr(data + pos, len);
            pos += len;
            CALL(stepkit_session_set_answer(s, answer, outp));
            free(answer);
            break;
        }
        case 1: CALL(stepkit_session_go_forward(s, outp)); break;
        case 2: CALL(stepkit_session_go_backward(s, outp)); break;
        case 3: CALL(stepkit_session_skip(s, outp)); break;
        case 4: {
            const char *reason = reasons[(pos < size ? data[pos++] : 0) % 7];
            CALL(stepkit_session_finish(s, reason, outp));
            break;
        }
        case 5: {
            const char *op = active_ops[(pos < size ? data[pos++] : 0) % 8];
            CALL(stepkit_session_active(s, op, outp));
            break;
        }
        case 6: CALL(stepkit_session_tick(s, outp)); break;
        case 7: now_ms += 250LL * (pos < size ? data[pos++] : 1); break;
        case 8: { char *st = state_of(s); fuzz_check_json(st); stepkit_string_free(st); break; }
        case 9: {
            char *out = NULL;
            rc = stepkit_session_result(s, &out);
            FUZZ_CHECK(rc == STEPKIT_OK, "result rc %d", rc);
            fuzz_check_json(out);
            stepkit_string_free(out);
            break;
        }
        case 10: {
            char *saved = NULL;
            rc = stepkit_session_save(s, &saved);
            FUZZ_CHECK(rc == STEPKIT_OK, "save rc %d", rc);
            stepkit_session *r = NULL;
            rc = stepkit_session_restore(task, saved, "{\"continueOnRecorderFailure\": true}", &r);
            FUZZ_CHECK(rc == STEPKIT_OK, "restoring fresh restoration data failed: rc %d\n%s", rc, saved);
            FUZZ_CHECK(stepkit_session_set_clock(r, manual_clock, NULL) == STEPKIT_OK, "set_clock");
            /* The whole state, running timer included: restore + set_clock is exact (stepkit.h). */
            char *a = state_of(s), *c = state_of(r);
            FUZZ_CHECK(strcmp(a, c) == 0, "restored state differs\noriginal: %s\nrestored: %s\nsaved: %s", a, c, saved);
            stepkit_string_free(a);
            stepkit_string_free(c);
            stepkit_string_free(saved);
            stepkit_session_free(r);
            break;
        }
        case 11: {
            const char *rec = recorders[(pos < size ? data[pos++] : 0) % 5];
            size_t len = 0;
            if (pos < size) len = data[pos++];
            if (pos < size) len |= (size_t)data[pos++] << 8;
            if (len > size - pos) len = size - pos;
            char *samples = fuzz_cstr(data + pos, len);
            pos += len;
            CALL(stepkit_session_record(s, rec, samples, outp));
            free(samples);
            break;
        }
        case 12:
            if (null_out) stepkit_session_set_event_callback(s, NULL, NULL, NULL);
            else stepkit_session_set_event_callback(s, on_event, s, NULL);
            break;
        default: break;
        }
    }
    stepkit_session_free(s);
    return 0;
}
