/* libFuzzer target: stepkit_task_verify_result on submissions mutated without end.
 *
 * At start-up each example task (fuzz_common.h) is walked with its answers file on a manual
 * clock, as make_seeds.py walks it, to a completed run whose result is the clean submission.
 * Input: byte 0 picks the task; byte 1 the mode and options:
 *   mode (b & 1) 0: an edit program on the clean result, each edit three bytes <op><a><b>:
 *     0 remove step result a   1 copy step result a to place b   2 swap step results a and b
 *     3 set the answer of question result a (over the whole result, sections walked) to value b
 *       of a small table (true, 0, -1, 1e9, "x", [], {}, null, a choice, a date, a long text)
 *     4 another task identifier  5 a calculation set to value b  6 an unknown member
 *     7 the run's endDate set to date b of a table   8 a step result renamed after step a
 *     9 a question result renamed   others: nothing
 *   mode 1: the rest of the input is the submission's text, as it is.
 *   options (b >> 1 & 3): none, {"ignore": ["dates"]}, {"unknownFields": "ignore"}, both.
 * Oracles: the call returns a documented status; a failure leaves *out NULL and an error JSON
 * (never EINTERNAL); a report is a JSON object with a boolean "verified" that is true exactly when
 * "divergences" is empty, each divergence {"code": one of the documented codes, "message",
 * "path"} (strings), and "result" an object or null; a clean submission (no edit, or edits that
 * left it equal to the clean result) verifies; a submission that verifies has a recomputed result
 * that verifies too. */
#include "fuzz_common.h"

static stepkit_task *tasks[FUZZ_TASK_COUNT];
static json_t *clean[FUZZ_TASK_COUNT];
static int64_t now_ms = 1767225600000;

static int64_t manual_clock(void *user_data) { (void)user_data; return now_ms; }

static const char *const codes[] = {"otherTask", "otherVersion", "unexpectedStep", "missingStep", "repeatedStep",
                                    "reorderedStep", "answerRefused", "wrongType", "requiredAnswerMissing",
                                    "disabledItem", "duplicateItem", "calculationMismatch", "datesOutOfOrder",
                                    "invalidDate", "unknownIdentifier", "unknownField", "orderMismatch", "gameMismatch"};

/* Walks task i with its answers file (as make_seeds.py does) and keeps the completed result. */
static void walk_clean(int i) {
    char path[4096];
    const char *dir = getenv("STEPKIT_EXAMPLES");
    snprintf(path, sizeof path, "%s/%s.answers.json", dir ? dir : STEPKIT_EXAMPLES_DIR, fuzz_task_names[i]);
    json_error_t err;
    json_t *answers = json_load_file(path, 0, &err);
    stepkit_session *s = NULL;
    FUZZ_CHECK(stepkit_session_open(tasks[i], "{\"continueOnRecorderFailure\": true}", &s) == STEPKIT_OK, "open");
    stepkit_session_set_clock(s, manual_clock, NULL);
    for (int move = 0; move < 80; move++) {
        char *out = NULL;
        if (stepkit_session_state(s, &out) != STEPKIT_OK) break;
        json_t *state = json_loads(out, 0, &err);
        stepkit_string_free(out);
        const char *status = json_string_value(json_object_get(state, "status"));
        json_t *step = json_object_get(state, "step");
        if (!status || strcmp(status, "inProgress") != 0 || !json_is_object(step)) {
            json_decref(state);
            break;
        }
        const char *id = json_string_value(json_object_get(step, "identifier"));
        const char *type = json_string_value(json_object_get(step, "type"));
        json_t *answer = id && answers ? json_object_get(answers, id) : NULL;
        now_ms += 1000;
        if (answer) {
            char *text = json_dumps(answer, JSON_ENCODE_ANY | JSON_COMPACT);
            stepkit_session_set_answer(s, text, NULL);
            free(text);
        }
        if (type && (!strcmp(type, "active") || !strcmp(type, "countdown") || !strcmp(type, "wait"))) {
            stepkit_session_control(s, "start", NULL);
            now_ms += 127500;
            stepkit_session_tick(s, NULL);
        }
        if (stepkit_session_go_forward(s, NULL) != STEPKIT_OK && stepkit_session_skip(s, NULL) != STEPKIT_OK) {
            json_decref(state);
            break;
        }
        json_decref(state);
    }
    /* only a completed run is a clean submission (a task whose walk stops short has none) */
    char *out = NULL, *st = NULL;
    stepkit_session_state(s, &st);
    json_t *state = st ? json_loads(st, 0, &err) : NULL;
    const char *reason = json_string_value(json_object_get(state, "finishReason"));
    if (reason && !strcmp(reason, "completed") && stepkit_session_result(s, &out) == STEPKIT_OK) clean[i] = json_loads(out, 0, &err);
    stepkit_string_free(out);
    stepkit_string_free(st);
    json_decref(state);
    stepkit_session_free(s);
    json_decref(answers);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    fuzz_skip_byte_compare_hooks_of("verify", *argc, *argv); /* fuzz_common.h */
    for (int i = 0; i < FUZZ_TASK_COUNT; i++) {
        tasks[i] = fuzz_compile_example(fuzz_task_names[i]);
        walk_clean(i);
    }
    return 0;
}

/* The step results of a result in order, sections walked (into `list`, at most `cap`). */
static size_t step_results(json_t *entries, json_t **list, size_t n, size_t cap, int depth) {
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e) {
        json_t *inner = json_object_get(e, "results");
        json_t *first = json_array_get(inner, 0);
        if (first && json_object_get(first, "results") && depth < 8) n = step_results(inner, list, n, cap, depth + 1);
        else if (n < cap) list[n++] = e;
    }
    return n;
}

static json_t *table_value(uint8_t b) {
    switch (b % 11) {
    case 0: return json_true();
    case 1: return json_integer(0);
    case 2: return json_integer(-1);
    case 3: return json_real(1e9);
    case 4: return json_string("x");
    case 5: return json_array();
    case 6: return json_object();
    case 7: return json_null();
    case 8: return json_pack("[s]", "headache");
    case 9: return json_string("2026-01-01");
    default: {
        char text[300];
        memset(text, 'a', sizeof text - 1);
        text[sizeof text - 1] = 0;
        return json_string(text);
    }
    }
}

static const char *const dates[] = {"2000-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2099-12-31T23:59:59.999Z",
                                    "not a date", "2026-02-30T00:00:00Z"};

/* Applies one edit (one that does not apply, on a result too small for it, does nothing). */
static void apply_edit(json_t *r, int task, uint8_t op, uint8_t a, uint8_t b) {
    json_t *steps[256], *questions[512];
    size_t n = step_results(json_object_get(r, "results"), steps, 0, 256, 0);
    json_t *top = json_object_get(r, "results");
    size_t nt = json_array_size(top);
    switch (op % 10) {
    case 0: if (nt) json_array_remove(top, a % nt); break;
    case 1: if (nt) json_array_insert_new(top, b % (nt + 1), json_deep_copy(json_array_get(top, a % nt))); break;
    case 2: if (nt) {
        json_t *x = json_incref(json_array_get(top, a % nt)), *y = json_incref(json_array_get(top, b % nt));
        json_array_set(top, a % nt, y); json_array_set(top, b % nt, x);
        json_decref(x); json_decref(y);
    } break;
    case 3: {
        size_t q = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j; json_t *e;
            json_array_foreach(json_object_get(steps[i], "results"), j, e) if (q < 512) questions[q++] = e;
        }
        if (q) json_object_set_new(questions[a % q], "answer", table_value(b));
    } break;
    case 4: json_object_set_new(r, "identifier", json_string(task % 2 ? "another" : "")); break;
    case 5: {
        json_t *calcs = json_object_get(r, "calculations");
        if (json_is_object(calcs)) {
            const char *key = json_object_iter_key(json_object_iter(calcs));
            if (key) json_object_set_new(calcs, key, table_value(b));
        } else {
            json_object_set_new(r, "calculations", table_value(b));
        }
    } break;
    case 6: json_object_set_new(a & 1 ? r : (n ? steps[a % n] : r), "extra", table_value(b)); break;
    case 7: json_object_set_new(r, "endDate", json_string(dates[b % 5])); break;
    case 8: if (n) json_object_set(steps[a % n], "identifier", json_object_get(steps[b % n], "identifier")); break;
    case 9: if (n) {
        json_t *first = json_array_get(json_object_get(steps[a % n], "results"), 0);
        if (first) json_object_set_new(first, "identifier", json_string(b & 1 ? "nope" : ""));
    } break;
    }
}

/* The oracles on a report (text owned by the caller). */
static int check_report(const char *text) {
    json_error_t err;
    fuzz_check_json(text);
    json_t *r = json_loads(text, 0, &err);
    FUZZ_CHECK(json_is_object(r), "the report is not an object: %s", text);
    json_t *verified = json_object_get(r, "verified"), *list = json_object_get(r, "divergences");
    FUZZ_CHECK(json_is_boolean(verified) && json_is_array(list), "the report lacks verified/divergences: %s", text);
    FUZZ_CHECK(json_is_true(verified) == (json_array_size(list) == 0), "verified disagrees with divergences: %s", text);
    size_t i;
    json_t *d;
    json_array_foreach(list, i, d) {
        const char *code = json_string_value(json_object_get(d, "code"));
        int known = 0;
        for (size_t k = 0; code && k < sizeof codes / sizeof *codes; k++) known |= !strcmp(code, codes[k]);
        FUZZ_CHECK(known, "an undocumented divergence code: %s", text);
        FUZZ_CHECK(json_is_string(json_object_get(d, "message")) && json_is_string(json_object_get(d, "path")),
                   "a divergence lacks message/path: %s", text);
    }
    json_t *result = json_object_get(r, "result");
    FUZZ_CHECK(json_is_object(result) || json_is_null(result), "the report's result: %s", text);
    int ok = json_is_true(verified);
    json_decref(r);
    return ok;
}

static const char *const option_texts[] = {NULL, "{\"ignore\": [\"dates\"]}", "{\"unknownFields\": \"ignore\"}",
                                           "{\"ignore\": [\"dates\"], \"unknownFields\": \"ignore\"}"};

/* Verifies `text`; returns 1 verified, 0 divergences, -1 an error (checked). Keeps the
 * recomputed result of a verified submission in *recomputed (the caller frees it). */
static int verify(int task, const char *text, const char *options, char **recomputed) {
    char *out = (char *)1;
    int rc = stepkit_task_verify_result(tasks[task], text, options, &out);
    FUZZ_CHECK(fuzz_known_status(rc), "undocumented status %d", rc);
    if (rc != STEPKIT_OK) {
        FUZZ_CHECK(out == NULL, "*out not NULL after a failure");
        fuzz_check_error(rc);
        return -1;
    }
    int ok = check_report(out);
    if (ok && recomputed) {
        json_error_t err;
        json_t *r = json_loads(out, 0, &err);
        *recomputed = json_dumps(json_object_get(r, "result"), JSON_COMPACT);
        json_decref(r);
    }
    stepkit_string_free(out);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    int task = data[0] % FUZZ_TASK_COUNT;
    const char *options = option_texts[(data[1] >> 1) & 3];
    if (data[1] & 1) {
        char *text = fuzz_cstr(data + 2, size - 2);
        verify(task, text, options, NULL);
        free(text);
        return 0;
    }
    if (!clean[task]) return 0;
    json_t *r = json_deep_copy(clean[task]);
    for (size_t i = 2; i + 2 < size && i < 2 + 3 * 16; i += 3) apply_edit(r, task, data[i], data[i + 1], data[i + 2]);
    char *text = json_dumps(r, JSON_COMPACT);
    char *recomputed = NULL;
    int ok = verify(task, text, options, &recomputed);
    FUZZ_CHECK(ok >= 0, "an edited result is refused as input: %s", text);
    if (json_equal(r, clean[task])) FUZZ_CHECK(ok == 1, "the clean result of %s does not verify", fuzz_task_names[task]);
    if (ok == 1 && recomputed) {
        FUZZ_CHECK(verify(task, recomputed, options, NULL) == 1, "a recomputed result does not verify: %s", recomputed);
    }
    free(recomputed);
    free(text);
    json_decref(r);
    return 0;
}
