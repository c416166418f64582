/* libFuzzer target: a session driven by the fuzz input.
 *
 * Input: byte 0 picks one of the example tasks (compiled once); byte 1 where the session starts:
 * 0 opened afresh, k > 0 restored from the k-th point of a walk through the task with its
 * answers file (made once, at start-up; the number wraps), so a short input reaches every step
 * (each starting point is opened or restored once, and an input starts from a copy of it);
 * then a sequence of operations, each one byte (op = b & 0x0f; b & 0x80: pass out = NULL) with
 * its operands:
 *   0 set_answer  <len lo><len hi><len bytes of answer JSON>
 *   1 forward  2 back  3 skip  4 finish <reason byte>  5 active <op byte>  6 tick
 *   7 advance the manual clock by <byte> * 250 ms   8 state   9 result
 *   10 save, restore, set the clock and compare whole states (the restored session must equal
 *      the original, its running timer included); once per input, later ones do nothing (a
 *      save and a restore cost as much as a dozen other operations, and the fuzzer favoured
 *      inputs with five of them: where one input checks, the next checks elsewhere)
 *   11 record <recorder byte> <len lo><len hi><samples JSON>
 *   12 remove/set the event callback   others: no-op
 * Oracles: every status is documented; a failing call sets *out to NULL, leaves an error JSON
 * whose status is the code, never EINTERNAL, and leaves the state exactly as it was; output is
 * JSON; the state a call returns (its events emptied) is the state read after it; fresh
 * restoration data restores to the same state. The event callback calls back into the session
 * (a state read on the input's first event) and gets exactly the events each call's output lists.
 * "A rejected call changes nothing" is checked with a shadow session: a second session of the
 * same task, on the same clock, that gets every call the first one accepted (with out = NULL,
 * without a callback) and none it refused. Every call accepted must be accepted by the shadow
 * too, and the two whole states must be equal byte for byte at every "state" operation and at
 * the end of the input; so a refused call that changed anything, or a call whose effect depends
 * on whether its state or events were asked for, shows as a difference. This replaced reading
 * the whole state after every refused call (most fuzzed calls are refused) and from the
 * callback on every event: the harness read about 40 whole states per input, now about 20
 * (docs/reliability.md, section 1, issue 26). */
#include "fuzz_common.h"

static stepkit_task *tasks[FUZZ_TASK_COUNT];
static int64_t now_ms;

#ifdef FUZZ_STATS /* counts what an input costs, printed at exit (measuring the harness) */
static long st_inputs, st_ops, st_calls, st_rejected, st_reads, st_cb_reads, st_events, st_saves, st_outs;
static void print_stats(void) {
    fprintf(stderr, "stats: inputs %ld ops %ld calls %ld (with out %ld) rejected %ld state reads %ld callback reads %ld events %ld save+restore %ld\n",
            st_inputs, st_ops, st_calls, st_outs, st_rejected, st_reads, st_cb_reads, st_events, st_saves);
}
#define STAT(x) (x)++
#else
#define STAT(x) ((void)0)
#endif

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

/* The callback re-enters the session on the first event of an input's deliveries (`reentered`
 * is cleared at the start of each input): a re-entry that deadlocked or failed would do so
 * there, since every call delivers its events the same way (after the session's lock is let go,
 * SessionHandle.deliver). Reading the whole state again on every further event found nothing
 * more while it cost a third of the target's time; on the first event of every call, a twentieth. */
static int event_depth, reentered;
static void on_event(const char *event_json, void *user_data) {
    stepkit_session *s = user_data;
    FUZZ_CHECK(event_json != NULL, "NULL event");
    STAT(st_events);
    if (collecting) collect_event(event_json);
    else fuzz_check_json(event_json);
    if (event_depth > 0 || reentered) return;
    reentered = 1;
    event_depth++;
    char *out = NULL;
    STAT(st_cb_reads);
    int rc = stepkit_session_state(s, &out); /* re-entering the session from its callback */
    FUZZ_CHECK(rc == STEPKIT_OK, "state from the event callback: rc %d", rc);
    stepkit_string_free(out);
    event_depth--;
}

/* Starting points: restoration data saved along a walk through each example task (its answers
 * file's answer set on every step that has one, active steps started and run for 127.5 s,
 * forward, else skip), with the clock's time at each save. An input starting from one restores
 * it (session and shadow) instead of replaying the walk: before, reaching the 40th step of a
 * task took 40 operations in every execution, each building the whole state. */
#define FUZZ_MAX_STARTS 64
#define FUZZ_START_MS 1767225600000LL
static const char *const session_options = "{\"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\", \"continueOnRecorderFailure\": true}";
static char *starts[FUZZ_TASK_COUNT][FUZZ_MAX_STARTS];
static int64_t start_ms[FUZZ_TASK_COUNT][FUZZ_MAX_STARTS];
static int start_count[FUZZ_TASK_COUNT];

static void make_starts(int t) {
    char path[4096];
    const char *dir = getenv("STEPKIT_EXAMPLES");
    snprintf(path, sizeof path, "%s/%s.answers.json", dir ? dir : STEPKIT_EXAMPLES_DIR, fuzz_task_names[t]);
    json_error_t err;
    json_t *answers = json_load_file(path, 0, &err); /* NULL without an answers file */
    now_ms = FUZZ_START_MS;
    stepkit_session *s = NULL;
    FUZZ_CHECK(stepkit_session_open(tasks[t], session_options, &s) == STEPKIT_OK, "open for the starting points");
    FUZZ_CHECK(stepkit_session_set_clock(s, manual_clock, NULL) == STEPKIT_OK, "set_clock");
    while (start_count[t] < FUZZ_MAX_STARTS) {
        char *text = NULL;
        FUZZ_CHECK(stepkit_session_state(s, &text) == STEPKIT_OK, "state");
        json_t *state = json_loads(text, 0, &err);
        stepkit_string_free(text);
        FUZZ_CHECK(state != NULL, "state is not JSON");
        const char *status = json_string_value(json_object_get(state, "status"));
        json_t *step = json_object_get(state, "step");
        const char *id = json_string_value(json_object_get(step, "identifier"));
        const char *type = json_string_value(json_object_get(step, "type"));
        int done = !status || strcmp(status, "inProgress") != 0 || !id;
        if (!done) {
            json_t *answer = answers ? json_object_get(answers, id) : NULL;
            if (answer) {
                char *a = json_dumps(answer, JSON_ENCODE_ANY | JSON_COMPACT);
                (void)stepkit_session_set_answer(s, a, NULL); /* refused answers are part of the walk too */
                free(a);
            }
            if (type && (!strcmp(type, "active") || !strcmp(type, "countdown") || !strcmp(type, "wait"))) {
                (void)stepkit_session_active(s, "start", NULL);
                now_ms += 127500;
                (void)stepkit_session_tick(s, NULL);
            }
            if (stepkit_session_go_forward(s, NULL) != STEPKIT_OK && stepkit_session_skip(s, NULL) != STEPKIT_OK) done = 1;
        }
        json_decref(state);
        if (done) break;
        char *saved = NULL;
        FUZZ_CHECK(stepkit_session_save(s, &saved) == STEPKIT_OK, "save");
        starts[t][start_count[t]] = strdup(saved);
        FUZZ_CHECK(starts[t][start_count[t]] != NULL, "out of memory");
        start_ms[t][start_count[t]] = now_ms;
        start_count[t]++;
        stepkit_string_free(saved);
    }
    stepkit_session_free(s);
    json_decref(answers);
}

/* The state of each starting point right after restore_start, at its time (made at start-up). */
static char *start_states[FUZZ_TASK_COUNT][FUZZ_MAX_STARTS + 1];

/* Opens (`start` 0) or restores (the start-th starting point) a session of task `t` on the
 * manual clock, at the time the starting point was saved: restore + set_clock is exact. */
static stepkit_session *restore_start(int t, int start) {
    stepkit_session *s = NULL;
    if (start == 0) {
        now_ms = FUZZ_START_MS;
        int rc = stepkit_session_open(tasks[t], session_options, &s);
        FUZZ_CHECK(rc == STEPKIT_OK, "open rc %d", rc);
    } else {
        now_ms = start_ms[t][start - 1];
        int rc = stepkit_session_restore(tasks[t], starts[t][start - 1], "{\"continueOnRecorderFailure\": true}", &s);
        FUZZ_CHECK(rc == STEPKIT_OK, "restoring starting point %d of task %d: rc %d", start, t, rc);
    }
    FUZZ_CHECK(stepkit_session_set_clock(s, manual_clock, NULL) == STEPKIT_OK, "set_clock");
    return s;
}

/* Each starting point opened or restored once, at start-up, and never changed: an input starts
 * from a copy of one (stepkit_hardening_session_copy, a hardening-only function), on the same
 * manual clock, at the starting point's time. Restoring the starting point for every input (and
 * again for its shadow) was a fifth of the target's time; restore itself is checked by the save
 * operation (10) and the `restore` target. Start-up checks that a copy's state is the state of
 * the starting point restored afresh. */
static stepkit_session *templates[FUZZ_TASK_COUNT][FUZZ_MAX_STARTS + 1];

static int64_t start_time(int t, int start) { return start == 0 ? FUZZ_START_MS : start_ms[t][start - 1]; }

static stepkit_session *start_session(int t, int start) {
    now_ms = start_time(t, start);
    stepkit_session *s = NULL;
    int rc = stepkit_hardening_session_copy(templates[t][start], &s);
    FUZZ_CHECK(rc == STEPKIT_OK && s != NULL, "copying starting point %d of task %d: rc %d", start, t, rc);
    return s;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    /* the library's 1- and 2-byte comparisons feed only the value profile, unused here (fuzz_common.h) */
    fuzz_skip_byte_compare_hooks_of("answers", *argc, *argv);
    for (int i = 0; i < FUZZ_TASK_COUNT; i++) tasks[i] = fuzz_compile_example(fuzz_task_names[i]);
    for (int i = 0; i < FUZZ_TASK_COUNT; i++) make_starts(i);
    for (int t = 0; t < FUZZ_TASK_COUNT; t++) {
        for (int k = 0; k <= start_count[t]; k++) {
            templates[t][k] = restore_start(t, k);
            char *out = NULL;
            FUZZ_CHECK(stepkit_session_state(templates[t][k], &out) == STEPKIT_OK && out, "state of a starting point");
            start_states[t][k] = strdup(out);
            FUZZ_CHECK(start_states[t][k] != NULL, "out of memory");
            stepkit_string_free(out);
            /* a copy is the starting point as restored afresh, and goes on on its own */
            stepkit_session *c = start_session(t, k);
            out = NULL;
            FUZZ_CHECK(stepkit_session_state(c, &out) == STEPKIT_OK && out && strcmp(out, start_states[t][k]) == 0,
                       "a copy of starting point %d of task %d differs from it\ncopy: %s\nrestored: %s", k, t, out, start_states[t][k]);
            stepkit_string_free(out);
            (void)stepkit_session_skip(c, NULL);
            (void)stepkit_session_go_forward(c, NULL);
            stepkit_session_free(c);
            out = NULL;
            FUZZ_CHECK(stepkit_session_state(templates[t][k], &out) == STEPKIT_OK && out && strcmp(out, start_states[t][k]) == 0,
                       "moving a copy of starting point %d of task %d changed the starting point", k, t);
            stepkit_string_free(out);
        }
    }
#ifdef FUZZ_STATS
    for (int i = 0; i < FUZZ_TASK_COUNT; i++) fprintf(stderr, "starting points of %s: %d\n", fuzz_task_names[i], start_count[i]);
    atexit(print_stats);
#endif
    return 0;
}

static char *state_of(stepkit_session *s) {
    STAT(st_reads);
    char *out = NULL;
    int rc = stepkit_session_state(s, &out);
    FUZZ_CHECK(rc == STEPKIT_OK && out, "state rc %d", rc);
    return out;
}

/* The state as the harness last saw it, for the state operation's check that the state a call
 * returned is the state read after it (refused calls in between change nothing). `known` is
 * set only when nothing can have changed the session since that text was taken: the output of
 * the previous successful call (stepkit.h: "the new state (as stepkit_session_state)", its
 * "events" emptied, since a state read hands out none), or a state read. Anything else (the
 * clock moved, a call without `out`, result, save, the callback replaced) forgets it.
 * `checked`: the text is known to be JSON (it was parsed, or derived from parsed output), so a
 * state read equal to it byte for byte need not be parsed again. */
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

/* The shadow session (see the header comment): gets the calls the session accepted, nothing else.
 * It is made when first needed (`need_shadow`): until the session accepts a call or the clock
 * moves, the shadow would be the starting point as it was restored, whose state is known from
 * start-up (`start_state`). Most fuzzed calls are refused, and restoring the shadow cost as much
 * as the rest of a short input (docs/reliability.md, the answers target's speed). */
static stepkit_session *shadow;
static int input_task, input_start, clock_moved;

static stepkit_session *need_shadow(void) {
    if (!shadow) {
        /* Restored as the session was, at the starting point's time: restore + set_clock is
         * exact, so a shadow made now equals one made at the start of the input. */
        int64_t now = now_ms;
        shadow = start_session(input_task, input_start);
        now_ms = now;
    }
    return shadow;
}

/* The session and its shadow must be in the same state, byte for byte. `a`: the session's
 * state when already read (borrowed), else NULL. Without a shadow yet and with the clock where
 * the input started, the shadow's state is the starting point's. */
static void compare_shadow(stepkit_session *s, const char *a, const char *where) {
    char *own = a ? NULL : state_of(s);
    char *b = NULL;
    const char *theirs;
    if (!shadow && !clock_moved) {
        theirs = start_states[input_task][input_start];
    } else {
        b = state_of(need_shadow());
        theirs = b;
    }
    const char *mine = a ? a : own;
    FUZZ_CHECK(strcmp(mine, theirs) == 0,
               "%s: the session differs from its shadow, which got only the calls the session accepted "
               "(a refused call changed something, or asking for the output or the events changed the outcome)\n"
               "session: %s\nshadow:  %s", where, mine, theirs);
    stepkit_string_free(own);
    stepkit_string_free(b);
}

/* Runs one call `fn(session, args..., out)`, checks the oracles, and gives the shadow the same
 * call when the session accepted it. A successful call's output is parsed once (it must be JSON)
 * and becomes the known state. */
#define CALL(fn, ...)                                                                             \
    do {                                                                                          \
        char *out = (char *)0x1;                                                                  \
        char **outp = null_out ? NULL : &out;                                                     \
        collecting = callback_set && !null_out;                                                   \
        STAT(st_calls); if (!null_out) STAT(st_outs);                                             \
        int rc = fn(s, __VA_ARGS__ outp);                                                         \
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
            int shadow_rc = fn(need_shadow(), __VA_ARGS__ NULL);                                         \
            FUZZ_CHECK(shadow_rc == STEPKIT_OK, "%s: the session accepted the call, its shadow (which got only the accepted calls) refused it: rc %d", #fn, shadow_rc); \
        } else {                                                                                  \
            STAT(st_rejected);                                                                    \
            check_collected_alone();                                                              \
            if (!null_out) FUZZ_CHECK(out == NULL, "*out not NULL on failure");                   \
            fuzz_check_error(rc);                                                                 \
        }                                                                                         \
        clear_collected();                                                                        \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    STAT(st_inputs);
    size_t pos = 0;
    int t = data[pos++] % FUZZ_TASK_COUNT;
    int start = data[pos++] % (start_count[t] + 1);
    stepkit_task *task = tasks[t];
    stepkit_session *s = start_session(t, start);
    input_task = t;
    input_start = start;
    clock_moved = 0;
    reentered = 0;
    FUZZ_CHECK(stepkit_session_set_event_callback(s, on_event, s, NULL) == STEPKIT_OK, "set_event_callback");
    callback_set = 1;
    int rc, ops = 0, saved_once = 0;
    while (pos < size && ops++ < 200) {
        uint8_t b = data[pos++];
        STAT(st_ops);
        int null_out = (b & 0x80) != 0;
        switch (b & 0x0f) {
        case 0: {
            size_t len = 0;
            if (pos < size) len = data[pos++];
            if (pos < size) len |= (size_t)data[pos++] << 8;
            if (len > size - pos) len = size - pos;
            char *answer = fuzz_cstr(data + pos, len);
            pos += len;
            CALL(stepkit_session_set_answer, answer,);
            free(answer);
            break;
        }
        case 1: CALL(stepkit_session_go_forward,); break;
        case 2: CALL(stepkit_session_go_backward,); break;
        case 3: CALL(stepkit_session_skip,); break;
        case 4: {
            const char *reason = reasons[(pos < size ? data[pos++] : 0) % 7];
            CALL(stepkit_session_finish, reason,);
            break;
        }
        case 5: {
            const char *op = active_ops[(pos < size ? data[pos++] : 0) % 8];
            CALL(stepkit_session_active, op,);
            break;
        }
        case 6: CALL(stepkit_session_tick,); break;
        case 7: {
            int64_t step = 250LL * (pos < size ? data[pos++] : 1);
            now_ms += step;
            if (step) clock_moved = 1;
            forget_known();
            break;
        }
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
            compare_shadow(s, st, "state operation");
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
            if (saved_once) break;
            saved_once = 1;
            STAT(st_saves);
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
            CALL(stepkit_session_record, rec, samples,);
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
    compare_shadow(s, NULL, "end of the input");
    forget_known();
    stepkit_session_free(s);
    if (shadow) stepkit_session_free(shadow);
    shadow = NULL;
    return 0;
}
