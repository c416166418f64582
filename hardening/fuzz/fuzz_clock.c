/* libFuzzer target: host clocks. Every example task (every NAME.json in examples/tasks but the
 * answers files, found at start-up) driven by a fuzz-chosen sequence of host clock values and operations.
 *
 * Input: byte 0 picks the task; byte 1 bit 0 picks the clock: 1 = monotone (it only moves
 * forward), 0 = wild (any int64: INT64_MIN, INT64_MAX, jumps back). Then operations, one byte
 * each (op = b % 16) with their operands:
 *   0 clock = special[<byte>] (wild: INT64_MIN, INT64_MIN+1, INT64_MAX, INT64_MAX-1, 0, -1,
 *     -2e12, 2026-01-01, ...; monotone: advance by a day/year/century-sized amount)
 *   1 clock = <8 bytes little-endian> (monotone: advance by their value mod 2^40)
 *   2 advance by <byte> * 250 ms     3 jump back by <byte> * 1000 ms (monotone: advance)
 *   4 tick   5 active <op byte>: start, suspend, resume, finish, suspendTask, resumeTask
 *   6 forward   7 back   8 skip   9 answer the current step from the example's answers file
 *   10 save, restore, set the clock, compare; <byte> bit 0: carry on with the restored session
 *   11 record a sample for <recorder byte>   12 set the clock again   13 finish <reason byte>
 *   14 check the state and result   15 state after a rejected-or-not answer of garbage
 * Oracles: no call traps or returns EINTERNAL; every status is documented; a rejected call
 * leaves the state as it was; outputs are JSON. Restore: fresh restoration data restores;
 * after set_clock the restored state equals the original's (wild clock: all but nextDeadline,
 * which a clock set behind a running step's start may change) and, monotone, the restoration
 * data written again equals the saved text. Monotone clock: event dates never go back; in the
 * result the task's start <= every step's start <= its end <= the task's end; an active step's
 * elapsed and remaining time are >= 0. */
#define _DEFAULT_SOURCE
#include "fuzz_common.h" /* first: it defines _GNU_SOURCE */
#include <dirent.h>
#include <unistd.h>

#define MAX_TASKS 32
#define T0 1767225600000LL /* 2026-01-01T00:00:00.000Z */

static stepkit_task *tasks[MAX_TASKS];
static json_t *answers[MAX_TASKS];
static int task_count;
static int64_t now_ms;
static int monotone;
static char last_event_date[64];
static char options_open[512], options_restore[512];

static int64_t fuzz_clock(void *user_data) { (void)user_data; return now_ms; }

/* Moves the clock forward by `ms` (>= 0), stopping at INT64_MAX. */
static void advance(int64_t ms) { now_ms = ms > INT64_MAX - now_ms ? INT64_MAX : now_ms + ms; }

/* Sets the clock to `value` (a monotone clock only moves forward: it then advances by |value|). */
static void set_clock_value(int64_t value) {
    if (monotone) advance(value == INT64_MIN ? INT64_MAX : (value < 0 ? -value : value));
    else now_ms = value;
}

static void on_event(const char *event_json, void *user_data) {
    (void)user_data;
    FUZZ_CHECK(event_json != NULL, "NULL event");
    json_error_t err;
    json_t *event = json_loads(event_json, 0, &err);
    FUZZ_CHECK(event != NULL, "event is not JSON: %s", event_json);
    const char *date = json_string_value(json_object_get(event, "date"));
    FUZZ_CHECK(date != NULL && strlen(date) == 24, "event without an ISO 8601 date: %s", event_json);
    if (monotone) {
        FUZZ_CHECK(strcmp(date, last_event_date) >= 0, "monotone clock, but an event is dated before the previous one (%s)\n%s",
                   last_event_date, event_json);
    }
    snprintf(last_event_date, sizeof last_event_date, "%s", date);
    json_decref(event);
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char out_dir[64];

/* Removes the recorders' directory at exit. */
static void remove_out_dir(void) {
    DIR *d = opendir(out_dir);
    if (!d) return;
    struct dirent *entry;
    char path[4096];
    while ((entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", out_dir, entry->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(out_dir);
}

/* Every example task (sorted by name, so inputs mean the same task from run to run), with its
 * answers file when there is one. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    fuzz_skip_byte_compare_hooks_of("clock", *argc, *argv); /* fuzz_common.h */
    const char *dir = getenv("STEPKIT_EXAMPLES");
    if (!dir) dir = STEPKIT_EXAMPLES_DIR;
    DIR *d = opendir(dir);
    if (!d) { fprintf(stderr, "cannot open %s\n", dir); abort(); }
    char *names[MAX_TASKS];
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL && n < MAX_TASKS) {
        if (!ends_with(entry->d_name, ".json") || ends_with(entry->d_name, ".answers.json")) continue;
        names[n++] = strndup(entry->d_name, strlen(entry->d_name) - 5);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        tasks[i] = fuzz_compile_example(names[i]);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.answers.json", dir, names[i]);
        json_error_t err;
        answers[i] = json_load_file(path, 0, &err); /* NULL when there is none */
        free(names[i]);
    }
    task_count = n;
    if (task_count == 0) { fprintf(stderr, "no example tasks in %s\n", dir); abort(); }
    /* Recorders write in one directory per process (the run UUID is fixed, so files are
     * overwritten from input to input rather than piling up). */
    /* tmpfs when there is one: recorders fsync their files. */
    snprintf(out_dir, sizeof out_dir, "%s/stepkit-fuzz-clock.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(out_dir)) { perror("mkdtemp"); abort(); }
    atexit(remove_out_dir);
    snprintf(options_open, sizeof options_open,
             "{\"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\", \"continueOnRecorderFailure\": true, \"outputDirectory\": \"%s\"}", out_dir);
    snprintf(options_restore, sizeof options_restore, "{\"continueOnRecorderFailure\": true, \"outputDirectory\": \"%s\"}", out_dir);
    return 0;
}

static char *state_text(stepkit_session *s) {
    char *out = NULL;
    int rc = stepkit_session_state(s, &out);
    FUZZ_CHECK(rc == STEPKIT_OK && out, "state rc %d", rc);
    return out;
}

static json_t *parsed(const char *text) {
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    FUZZ_CHECK(j != NULL, "not JSON (%s): %.300s", err.text, text);
    return j;
}

/* The state as compact sorted JSON, without "nextDeadline" when `drop_deadline`. */
static char *comparable_state(stepkit_session *s, int drop_deadline) {
    char *text = state_text(s);
    json_t *j = parsed(text);
    stepkit_string_free(text);
    if (drop_deadline) json_object_del(j, "nextDeadline");
    char *out = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    return out;
}

static const char *date_of(json_t *o, const char *key) {
    const char *d = json_string_value(json_object_get(o, key));
    FUZZ_CHECK(d != NULL && strlen(d) == 24, "missing or malformed %s", key);
    return d;
}

/* The state and result hold together; on a monotone clock the dates are in order. */
static void check_invariants(stepkit_session *s) {
    char *text = state_text(s);
    json_t *state = parsed(text);
    json_t *active = json_object_get(state, "active");
    if (json_is_object(active)) {
        json_t *elapsed = json_object_get(active, "elapsed"), *remaining = json_object_get(active, "remaining");
        FUZZ_CHECK(json_is_number(elapsed) && json_number_value(elapsed) >= 0, "elapsed < 0: %s", text);
        FUZZ_CHECK(json_is_null(remaining) || (json_is_number(remaining) && json_number_value(remaining) >= 0),
                   "remaining < 0: %s", text);
    }
    json_decref(state);
    stepkit_string_free(text);
    char *out = NULL;
    int rc = stepkit_session_result(s, &out);
    FUZZ_CHECK(rc == STEPKIT_OK && out, "result rc %d", rc);
    json_t *result = parsed(out);
    const char *start = date_of(result, "startDate"), *end = date_of(result, "endDate");
    if (monotone) FUZZ_CHECK(strcmp(start, end) <= 0, "task start %s after its end %s", start, end);
    json_t *steps = json_object_get(result, "results");
    for (size_t i = 0; i < json_array_size(steps); i++) {
        json_t *step = json_array_get(steps, i);
        const char *a = date_of(step, "startDate"), *b = date_of(step, "endDate");
        if (monotone) {
            FUZZ_CHECK(strcmp(start, a) <= 0 && strcmp(a, b) <= 0 && strcmp(b, end) <= 0,
                       "monotone clock, dates out of order: task %s..%s, step %zu %s..%s\n%s", start, end, i, a, b, out);
        }
    }
    json_decref(result);
    stepkit_string_free(out);
}

/* Save, restore, set the clock, compare. Returns the restored session (the caller frees one). */
static stepkit_session *save_and_restore(stepkit_task *task, stepkit_session *s) {
    char *saved = NULL;
    int rc = stepkit_session_save(s, &saved);
    FUZZ_CHECK(rc == STEPKIT_OK && saved, "save rc %d", rc);
    stepkit_session *r = NULL;
    rc = stepkit_session_restore(task, saved, options_restore, &r);
    FUZZ_CHECK(rc == STEPKIT_OK && r, "restoring fresh restoration data failed: rc %d\n%s", rc, saved);
    FUZZ_CHECK(stepkit_session_set_clock(r, fuzz_clock, NULL) == STEPKIT_OK, "set_clock on the restored session");
    char *a = comparable_state(s, !monotone), *b = comparable_state(r, !monotone);
    FUZZ_CHECK(strcmp(a, b) == 0, "restored state differs\noriginal: %s\nrestored: %s\nsaved: %s", a, b, saved);
    free(a);
    free(b);
    if (monotone) {
        char *again = NULL;
        rc = stepkit_session_save(r, &again);
        FUZZ_CHECK(rc == STEPKIT_OK && again, "save of the restored session rc %d", rc);
        FUZZ_CHECK(strcmp(saved, again) == 0, "restoration data written again differs\nsaved: %s\nagain: %s", saved, again);
        stepkit_string_free(again);
    }
    stepkit_string_free(saved);
    FUZZ_CHECK(stepkit_session_set_event_callback(r, on_event, NULL, NULL) == STEPKIT_OK, "set_event_callback");
    return r;
}

/* Runs one call and checks the oracles (as fuzz_answers.c does). */
#define CALL(expr)                                                                                \
    do {                                                                                          \
        char *before = state_text(s);                                                             \
        char *out = NULL;                                                                         \
        int rc = (expr);                                                                          \
        FUZZ_CHECK(fuzz_known_status(rc), "unknown status %d", rc);                               \
        if (rc == STEPKIT_OK) {                                                                   \
            fuzz_check_json(out);                                                                 \
            stepkit_string_free(out);                                                             \
        } else {                                                                                  \
            FUZZ_CHECK(out == NULL, "*out not NULL on failure");                                  \
            fuzz_check_error(rc);                                                                 \
            char *after = state_text(s);                                                          \
            FUZZ_CHECK(strcmp(before, after) == 0, "a rejected call (%s, rc %d) changed the state\nbefore: %s\nafter:  %s", #expr, rc, before, after); \
            stepkit_string_free(after);                                                           \
        }                                                                                         \
        stepkit_string_free(before);                                                              \
    } while (0)

static const int64_t specials[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, 0, -1, 1,
                                   -2000000000000LL, T0, T0 - 1, -62167219200000LL, 253402300799999LL,
                                   86400000LL, 31556952000LL, 3155695200000LL, INT64_MAX / 2};
static const char *const active_ops[] = {"start", "suspend", "resume", "finish", "suspendTask", "resumeTask"};
static const char *const reasons[] = {"completed", "saved", "discarded", "failed", "earlyTermination"};
static const char *const recorders[] = {"accelerometer", "pedometer", "restMotion", "location", "deviceMotion", "nope"};
static const char *const garbage[] = {"null", "true", "1", "\"x\"", "[0]", "{}", "-1e308", "\"2026-01-01\""};

/* The current step's answer from the example's answers file, as JSON text, or NULL. */
static char *example_answer(stepkit_session *s, json_t *task_answers) {
    if (!task_answers) return NULL;
    char *text = state_text(s);
    json_t *state = parsed(text);
    stepkit_string_free(text);
    const char *id = json_string_value(json_object_get(json_object_get(state, "step"), "identifier"));
    json_t *answer = id ? json_object_get(task_answers, id) : NULL;
    char *out = answer ? json_dumps(answer, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_decref(state);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t pos = 0;
    int index = data[pos++] % task_count;
    stepkit_task *task = tasks[index];
    monotone = data[pos++] & 1;
    now_ms = T0;
    last_event_date[0] = 0;
    stepkit_session *s = NULL;
    int rc = stepkit_session_open(task, options_open, &s);
    FUZZ_CHECK(rc == STEPKIT_OK, "open rc %d", rc);
    FUZZ_CHECK(stepkit_session_set_clock(s, fuzz_clock, NULL) == STEPKIT_OK, "set_clock");
    char *first = state_text(s); /* the events queued by open: dated on the system clock, dropped */
    stepkit_string_free(first);
    FUZZ_CHECK(stepkit_session_set_event_callback(s, on_event, NULL, NULL) == STEPKIT_OK, "set_event_callback");
    int ops = 0;
#define BYTE() (pos < size ? data[pos++] : 0)
    while (pos < size && ops++ < 200) {
        uint8_t b = data[pos++];
        switch (b % 16) {
        case 0: {
            int64_t v = specials[BYTE() % (sizeof specials / sizeof specials[0])];
            set_clock_value(v);
            break;
        }
        case 1: {
            uint64_t v = 0;
            for (int i = 0; i < 8; i++) v |= (uint64_t)BYTE() << (8 * i);
            if (monotone) advance((int64_t)(v & ((1ULL << 40) - 1)));
            else now_ms = (int64_t)v;
            break;
        }
        case 2: advance(250LL * BYTE()); break;
        case 3: {
            int64_t back = 1000LL * BYTE();
            if (monotone) advance(back);
            else now_ms = now_ms < INT64_MIN + back ? INT64_MIN : now_ms - back;
            break;
        }
        case 4: CALL(stepkit_session_tick(s, &out)); break;
        case 5: CALL(stepkit_session_active(s, active_ops[BYTE() % 6], &out)); break;
        case 6: CALL(stepkit_session_go_forward(s, &out)); break;
        case 7: CALL(stepkit_session_go_backward(s, &out)); break;
        case 8: CALL(stepkit_session_skip(s, &out)); break;
        case 9: {
            char *answer = example_answer(s, answers[index]);
            if (answer) CALL(stepkit_session_set_answer(s, answer, &out));
            free(answer);
            break;
        }
        case 10: {
            int carry_on = BYTE() & 1;
            stepkit_session *r = save_and_restore(task, s);
            if (carry_on) {
                stepkit_session_free(s);
                s = r;
            } else {
                stepkit_session_free(r);
            }
            break;
        }
        case 11: {
            const char *rec = recorders[BYTE() % 6];
            CALL(stepkit_session_record(s, rec, "[{\"t\": 1}, {\"t\": 2}]", &out));
            break;
        }
        case 12: FUZZ_CHECK(stepkit_session_set_clock(s, fuzz_clock, NULL) == STEPKIT_OK, "set_clock again"); break;
        case 13: CALL(stepkit_session_finish(s, reasons[BYTE() % 5], &out)); break;
        case 14: check_invariants(s); break;
        case 15: CALL(stepkit_session_set_answer(s, garbage[BYTE() % 8], &out)); break;
        }
    }
#undef BYTE
    check_invariants(s);
    stepkit_session_free(s);
    return 0;
}
