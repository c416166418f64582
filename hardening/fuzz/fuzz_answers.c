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
 * JSON; the state a call returns (its events emptied) is the state read after it; fresh
 * restoration data restores to the same state. The event callback calls back into the session
 * (state) on every event and gets exactly the events the call's output lists.
 * Cost: the state before a call is the one the previous call returned, not read again (see
 * `known`); the state is read after every rejected call, for save+restore and from the callback. */
#include "fuzz_common.h"

static stepkit_task *tasks[FUZZ_TASK_COUNT];
static int64_t now_ms;

static int64_t manual_clock(void *user_data) { (void)user_data; return now_ms; }

/* The events the callback received during the current call, when the call's output will list
 * them too (stepkit.h: "the same events go to the event callback"): they are then compared with
 * the output's "events" byte for byte instead of each being parsed on its own. */
static int collecting, callback_set;
static char **collected;
static size_t collected_count, collected_cap;

static void collect_event(const char *event_json) {
    if (collected_count == collected_cap) {
        collected_cap = collected_cap ? 2 * collected_cap : 16;
        collected = realloc(collected, collected_cap * sizeof *collected);
        FUZZ_CHECK(collected != NULL, "out of memory");
    }
    size_t n = strlen(event_json);
    char *c = malloc(n + 1);
    FUZZ_CHECK(c != NULL, "out of memory");
    memcpy(c, event_json, n + 1);
    collected[collected_count++] = c;
}

/* Parses what was collected but not matched against an output (a failed call, or no output). */
static void check_collected_alone(void) {
    for (size_t i = 0; i < collected_count; i++) fuzz_check_json(collected[i]);
}

static void clear_collected(void) {
    for (size_t i = 0; i < collected_count; i++) free(collected[i]);
    collected_count = 0;
}

static int event_depth;
static void on_event(const char *event_json, void *user_data) {
    stepkit_session *s = user_data;
    FUZZ_CHECK(event_json != NULL, "NULL event");
    if (collecting) collect_event(event_json);
    else fuzz_check_json(event_json);
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

/* The state as the harness last saw it, so that a call's "before" need not be read again.
 * `known` is set only when nothing can have changed the session since that text was taken: the
 * output of the previous successful call (stepkit.h: "the new state (as stepkit_session_state)",
 * its "events" emptied, since a state read hands out none), or a state read. Anything else (the
 * clock moved, a call without `out`, result, save, the callback replaced) forgets it, so the next
 * call reads the state itself. `checked`: the text is known to be JSON (it was parsed, or derived
 * from parsed output), so a state read equal to it byte for byte need not be parsed again. */
static char *known;
static int known_checked;

static void forget_known(void) {
    free(known);
    known = NULL;
    known_checked = 0;
}

static void keep_known(char *text, int checked) { /* takes ownership of a malloc'd copy */
    free(known);
    known = text;
    known_checked = checked;
}

static char *copy_text(const char *text, size_t n) {
    char *c = malloc(n + 1);
    FUZZ_CHECK(c != NULL, "out of memory");
    memcpy(c, text, n);
    c[n] = 0;
    return c;
}

/* Reads the state into `known` (a copy of the library's string, freed by the harness). */
static void read_known(stepkit_session *s) {
    char *st = state_of(s);
    keep_known(copy_text(st, strlen(st)), 0);
    stepkit_string_free(st);
}

/* Where a successful call's output keeps its events: "events" is its last top-level member
 * (stepkit.h: the state, whose "events" lists what the call produced). The output was parsed
 * first (it is JSON), so outside strings the depth count is exact, and `,"events":[` cannot occur
 * inside a string (its quote would be escaped). Returns 0 if the output is not shaped that way;
 * else *key_end is the offset of the array's '[' and the array runs to the output's last '}'.
 * Not coverage-instrumented: the harness's own scanning is no feature of the engine, and per-byte
 * comparison hooks would make it cost as much as parsing. */
__attribute__((no_sanitize("coverage"), noinline))
static int find_events(const char *out, size_t n, size_t *array_start) {
    static const char key[] = ",\"events\":[";
    const size_t k = sizeof key - 1;
    if (n < 2 || out[n - 1] != '}' || out[n - 2] != ']') return 0;
    int depth = 0, in_string = 0;
    for (size_t i = 0; i < n; i++) {
        char c = out[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == ',' && depth == 1 && n - i >= k && memcmp(out + i, key, k) == 0) {
            *array_start = i + k - 1;
            /* the array must close at n - 2: its ']' then the object's '}' */
            int d = 0, str = 0;
            for (size_t j = *array_start; j < n; j++) {
                char e = out[j];
                if (str) { if (e == '\\') j++; else if (e == '"') str = 0; }
                else if (e == '"') str = 1;
                else if (e == '[' || e == '{') d++;
                else if ((e == ']' || e == '}') && --d == 0) return j == n - 2;
            }
            return 0;
        }
    }
    return 0;
}

/* The events array's elements, one by one, are exactly the collected event texts in order. The
 * texts each begin with '{', so element boundaries cannot be shifted (an object's text cannot
 * end inside the next one's). Since the output parsed as JSON, each matched event is JSON. */
__attribute__((no_sanitize("coverage"), noinline))
static int events_match(const char *array, size_t len) {
    /* array = "[e1,e2,...]" */
    size_t pos = 1;
    for (size_t i = 0; i < collected_count; i++) {
        size_t m = strlen(collected[i]);
        if (i > 0) { if (pos >= len || array[pos] != ',') return 0; pos++; }
        if (m == 0 || collected[i][0] != '{' || len - pos < m || memcmp(array + pos, collected[i], m) != 0) return 0;
        pos += m;
    }
    return pos == len - 1 && array[pos] == ']';
}

static const char *const reasons[] = {"completed", "saved", "discarded", "failed", "earlyTermination", "bogus", ""};
static const char *const active_ops[] = {"start", "suspend", "resume", "finish", "suspendTask", "resumeTask", "stop", ""};
static const char *const recorders[] = {"accelerometer", "pedometer", "restMotion", "location", "nope"};

/* After a successful call with output (already parsed: it is JSON): the events the callback got
 * must be the output's events, and the output with its events emptied is the state (stepkit.h:
 * "the new state (as stepkit_session_state)"; a state read hands out no events), which becomes
 * the known state. If the output is not shaped as expected, the events are parsed one by one and
 * the next call reads the state itself. */
static void after_output(const char *out) {
    size_t n = strlen(out), start = 0;
    if (!find_events(out, n, &start)) {
        check_collected_alone();
        forget_known();
        return;
    }
    if (collecting)
        FUZZ_CHECK(events_match(out + start, n - 1 - start),
                   "the event callback got other events than the output lists\noutput: %s", out);
    char *st = malloc(start + 4);
    FUZZ_CHECK(st != NULL, "out of memory");
    memcpy(st, out, start);
    memcpy(st + start, "[]}", 4);
    keep_known(st, 1);
}

/* Runs one call, checks the oracles. "before" is the known state when there is one (see
 * `known`), else read now; a rejected call reads the state again and must give it back byte for
 * byte. A successful call's output is parsed once (it must be JSON) and becomes the known state. */
#define CALL(expr)                                                                                \
    do {                                                                                          \
        if (!known) read_known(s);                                                                \
        char *out = (char *)0x1;                                                                  \
        char **outp = null_out ? NULL : &out;                                                     \
        collecting = callback_set && !null_out;                                                   \
        int rc = (expr);                                                                          \
        collecting = 0;                                                                           \
        FUZZ_CHECK(fuzz_known_status(rc), "unknown status %d", rc);                               \
        if (rc == STEPKIT_OK) {                                                                   \
            if (!null_out) {                                                                      \
                fuzz_check_json(out);                                                             \
                after_output(out);                                                                \
                stepkit_string_free(out);                                                         \
            } else {                                                                              \
                forget_known();                                                                   \
            }                                                                                     \
        } else {                                                                                  \
            check_collected_alone();                                                              \
            if (!null_out) FUZZ_CHECK(out == NULL, "*out not NULL on failure");                   \
            fuzz_check_error(rc);                                                                 \
            char *after = state_of(s);                                                            \
            FUZZ_CHECK(strcmp(known, after) == 0, "a rejected call (%s, rc %d) changed the state\nbefore: %s\nafter:  %s", #expr, rc, known, after); \
            stepkit_string_free(after);                                                           \
        }                                                                                         \
        clear_collected();                                                                        \
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
    callback_set = 1;
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
        case 7: now_ms += 250LL * (pos < size ? data[pos++] : 1); forget_known(); break;
        case 8: {
            char *st = state_of(s);
            if (known) {
                /* the state a call returned is the state read after it (stepkit.h) */
                FUZZ_CHECK(strcmp(known, st) == 0, "the state read differs from the state last returned/read\nknown: %s\nread:  %s", known, st);
                if (!known_checked) { fuzz_check_json(st); known_checked = 1; }
            } else {
                fuzz_check_json(st);
                keep_known(copy_text(st, strlen(st)), 1);
            }
            stepkit_string_free(st);
            break;
        }
        case 9: {
            char *out = NULL;
            rc = stepkit_session_result(s, &out);
            FUZZ_CHECK(rc == STEPKIT_OK, "result rc %d", rc);
            fuzz_check_json(out);
            stepkit_string_free(out);
            forget_known();
            break;
        }
        case 10: {
            forget_known();
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
            forget_known();
            if (null_out) stepkit_session_set_event_callback(s, NULL, NULL, NULL);
            else stepkit_session_set_event_callback(s, on_event, s, NULL);
            callback_set = !null_out;
            break;
        default: break;
        }
    }
    forget_known();
    stepkit_session_free(s);
    return 0;
}
