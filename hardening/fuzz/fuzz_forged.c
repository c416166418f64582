/* libFuzzer target: restoration data that is well-formed and correctly signed but semantically
 * forged (issue 11, item 4).
 *
 * At start-up every example task is walked with its answers file (a counting clock, so every
 * date differs), saving after every move, plus a back move and a run finished "saved": a pool of
 * legitimate restoration data. Input: <base><mode>(<op><a><b>)*
 *   base   picks a saved run from the pool;
 *   mode   bit 0: sign with HMAC-SHA256 under a key and restore with it (else plain SHA-256);
 *   ops    semantic edits of the parsed document: swap, reverse, delete or duplicate visits,
 *          point a visit at another step, move or drop answers, change the finish reason and
 *          end date, shift dates, toggle skipped/modified, forge additionalTaskResults, reopen
 *          visits, change hidden items.
 * The edited document is signed exactly as stepkit_session_save signs it (compact JSON without
 * "integrity", keys in order), so it always reaches the semantic check.
 * Oracles: a refusal is ERESTORE with no session; an accepted document must describe a run the
 * task allows: its own save restores again, its dates follow each other, and
 * a fresh session driven through the public API along its path (each visit's answer set, or the
 * visit skipped, then forward) visits exactly the same steps and, for a run saved "completed",
 * completes. */
#include "fuzz_common.h"
#include <openssl/hmac.h>
#include <openssl/sha.h>

#define POOL_MAX 256
#define FUZZ_KEY "forged-fuzz-key"

static stepkit_task *tasks[FUZZ_TASK_COUNT];
static json_t *step_ids[FUZZ_TASK_COUNT]; /* array of the task's step identifiers */
static json_t *pool[POOL_MAX];
static int pool_task[POOL_MAX];
static int pool_size;
static int64_t clock_now;
static unsigned long accepted, refused; /* printed at exit (hardening/fuzz/run shows them) */

static void print_counts(void) {
    fprintf(stderr, "forged: %lu accepted (each replayed through the API), %lu refused\n", accepted, refused);
}

static int64_t counting_clock(void *user_data) {
    (void)user_data;
    clock_now += 1000;
    return clock_now;
}

static json_t *call_json(int rc, char *out) {
    if (rc != STEPKIT_OK) return NULL;
    json_t *j = json_loads(out, 0, NULL);
    stepkit_string_free(out);
    return j;
}

static json_t *state_of(stepkit_session *s) {
    char *out = NULL;
    return call_json(stepkit_session_state(s, &out), out);
}

/* The current step's identifier and type, or NULL when finished. */
static const char *current_step(json_t *state, const char **type) {
    json_t *step = json_object_get(state, "step");
    if (type) *type = json_string_value(json_object_get(step, "type"));
    return json_string_value(json_object_get(step, "identifier"));
}

static void keep(stepkit_session *s, int task) {
    if (pool_size >= POOL_MAX) return;
    char *saved = NULL;
    if (stepkit_session_save(s, &saved) != STEPKIT_OK) abort();
    json_t *doc = json_loads(saved, 0, NULL);
    stepkit_string_free(saved);
    if (!doc) abort();
    pool_task[pool_size] = task;
    pool[pool_size++] = doc;
}

static void walk(int t, int finish_saved) {
    char *answers_text = NULL;
    {
        const char *dir = getenv("STEPKIT_EXAMPLES");
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.answers.json", dir ? dir : STEPKIT_EXAMPLES_DIR, fuzz_task_names[t]);
        answers_text = read_file(path, NULL);
    }
    json_t *answers = answers_text ? json_loads(answers_text, 0, NULL) : json_object();
    free(answers_text);
    stepkit_session *s = NULL;
    if (stepkit_session_open(tasks[t], "{\"taskRunUUID\": \"9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10\", "
                                       "\"continueOnRecorderFailure\": true}", &s) != STEPKIT_OK) abort();
    stepkit_session_set_clock(s, counting_clock, NULL);
    keep(s, t);
    for (int i = 0; i < 60; i++) {
        json_t *state = state_of(s);
        const char *type = NULL;
        const char *id = current_step(state, &type);
        if (!id) { json_decref(state); break; }
        json_t *answer = json_object_get(answers, id);
        if (answer) {
            char *text = json_dumps(answer, JSON_COMPACT | JSON_ENCODE_ANY);
            stepkit_session_set_answer(s, text, NULL);
            free(text);
        }
        if (type && (!strcmp(type, "active") || !strcmp(type, "countdown") || !strcmp(type, "wait")))
            stepkit_session_active(s, "finish", NULL);
        json_decref(state);
        if (stepkit_session_go_forward(s, NULL) != STEPKIT_OK && stepkit_session_skip(s, NULL) != STEPKIT_OK) break;
        if (i == 2) { /* a back move and forward again: the path is the back stack */
            stepkit_session_go_backward(s, NULL);
            keep(s, t);
            stepkit_session_go_forward(s, NULL);
        }
        keep(s, t);
        if (finish_saved && i == 3) { stepkit_session_finish(s, "saved", NULL); keep(s, t); break; }
    }
    json_decref(answers);
    stepkit_session_free(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    fuzz_skip_byte_compare_hooks_of("forged", *argc, *argv); /* fuzz_common.h */
    atexit(print_counts);
    for (int t = 0; t < FUZZ_TASK_COUNT; t++) {
        tasks[t] = fuzz_compile_example(fuzz_task_names[t]);
        char *info = NULL;
        if (stepkit_task_info(tasks[t], &info) != STEPKIT_OK) abort();
        json_t *j = json_loads(info, 0, NULL);
        stepkit_string_free(info);
        step_ids[t] = json_array();
        size_t i;
        json_t *step;
        json_array_foreach(json_object_get(j, "steps"), i, step)
            json_array_append(step_ids[t], json_object_get(step, "identifier"));
        json_decref(j);
        clock_now = 1767225600000LL;
        walk(t, 0);
        walk(t, 1);
    }
    return 0;
}

/* ---- semantic edits ---- */

static json_t *visit(json_t *path, size_t n, uint8_t a) { return n ? json_array_get(path, a % n) : NULL; }

static void shift(json_t *object, const char *key, int delta) {
    json_t *v = json_object_get(object, key);
    if (json_is_integer(v)) json_object_set_new(object, key, json_integer(json_integer_value(v) + delta));
}

static void edit(json_t *doc, int t, uint8_t op, uint8_t a, uint8_t b) {
    json_t *path = json_object_get(doc, "path");
    size_t n = json_array_size(path);
    json_t *va = visit(path, n, a), *vb = visit(path, n, b);
    static const char *const reasons[] = {"completed", "saved", "discarded", "failed", "earlyTermination"};
    switch (op % 13) {
    case 0: /* swap two visits */
        if (va && vb && va != vb) {
            json_incref(va); json_incref(vb);
            json_array_set(path, a % n, vb); json_array_set(path, b % n, va);
            json_decref(va); json_decref(vb);
        }
        break;
    case 1: { /* reverse the path */
        json_t *reversed = json_array();
        for (size_t i = n; i > 0; i--) json_array_append(reversed, json_array_get(path, i - 1));
        json_object_set_new(doc, "path", reversed);
        break;
    }
    case 2: if (va) json_array_remove(path, a % n); break;
    case 3: if (va) json_array_insert_new(path, b % (n + 1), json_deep_copy(va)); break;
    case 4: /* a visit points at another step */
        if (va) json_object_set(va, "step", json_array_get(step_ids[t], b % json_array_size(step_ids[t])));
        break;
    case 5: /* a visit takes another visit's answer, or loses its own */
        if (va && vb && json_object_get(vb, "answer")) json_object_set(va, "answer", json_object_get(vb, "answer"));
        else if (va) json_object_del(va, "answer");
        break;
    case 6: { /* the step's latest answer moved or dropped */
        json_t *answers = json_object_get(doc, "answers");
        const char *step = va ? json_string_value(json_object_get(va, "step")) : NULL;
        if (!step || !json_is_object(answers)) break;
        if (vb && json_object_get(vb, "answer")) json_object_set(answers, step, json_object_get(vb, "answer"));
        else json_object_del(answers, step);
        break;
    }
    case 7: { /* another finish reason and end date */
        json_t *last = n ? json_array_get(path, n - 1) : NULL;
        json_int_t start = last ? json_integer_value(json_object_get(last, "startDate")) : 0;
        if (a % 6 == 5) {
            json_object_set_new(doc, "finishReason", json_null());
            json_object_set_new(doc, "endDate", json_null());
        } else {
            json_object_set_new(doc, "finishReason", json_string(reasons[a % 6]));
            json_object_set_new(doc, "endDate", json_integer(start + (json_int_t)b * 100));
            if (last && (b & 1)) json_object_set_new(last, "endDate", json_integer(start + (json_int_t)b * 50));
        }
        break;
    }
    case 8: { /* shift a date by -128..127 seconds */
        int delta = (int)(int8_t)b * 1000;
        switch (a % 4) {
        case 0: shift(doc, "startDate", delta); break;
        case 1: shift(doc, "endDate", delta); break;
        case 2: if (vb) shift(vb, "startDate", delta); break;
        default: if (vb) shift(vb, "endDate", delta); break;
        }
        break;
    }
    case 9: /* skipped toggled (and its answer dropped) */
        if (va) {
            json_object_set_new(va, "skipped", json_boolean(!json_is_true(json_object_get(va, "skipped"))));
            if (b & 1) json_object_del(va, "answer");
        }
        break;
    case 10: /* modifier toggled, or the arrival forgotten */
        if (va && (b & 1)) json_object_set_new(va, "modified", json_boolean(!json_is_true(json_object_get(va, "modified"))));
        else if (va) json_object_set_new(va, "arrival", json_array());
        break;
    case 11: /* additionalTaskResults forged */
        if (a % 3 == 0) json_object_set_new(doc, "additionalTaskResults", json_null());
        else json_object_set_new(doc, "additionalTaskResults", json_pack(
            "[{s:s, s:[{s:s, s:[{s:s, s:s, s:b}]}]}]", "identifier", a % 3 == 1 ? "baseline" : fuzz_task_names[t],
            "results", "identifier", json_string_value(json_array_get(step_ids[t], b % json_array_size(step_ids[t]))),
            "results", "identifier", "smoker", "type", "boolean", "answer", b & 1));
        break;
    default: /* a visit reopened, or its hidden items changed */
        if (va && (b & 1)) json_object_set_new(va, "endDate", json_null());
        else if (va) json_object_set_new(va, "hiddenItems", (b & 2) ? json_array() : json_pack("[s]", "email"));
        break;
    }
}

/* ---- signing, as stepkit_session_save signs ---- */

static char *sign(json_t *doc, int keyed) {
    json_object_del(doc, "integrity");
    char *body = json_dumps(doc, JSON_COMPACT);
    if (!body) return NULL;
    unsigned char digest[32];
    unsigned int length = 32;
    if (keyed) HMAC(EVP_sha256(), FUZZ_KEY, (int)strlen(FUZZ_KEY), (const unsigned char *)body, strlen(body), digest, &length);
    else SHA256((const unsigned char *)body, strlen(body), digest);
    char hex[65];
    for (int i = 0; i < 32; i++) sprintf(hex + 2 * i, "%02x", digest[i]);
    size_t n = strlen(body);
    char *text = malloc(n + 128);
    memcpy(text, body, n - 1); /* without the closing brace */
    sprintf(text + n - 1, ",\"integrity\":{\"algorithm\":\"%s\",\"digest\":\"%s\"}}", keyed ? "HMAC-SHA256" : "SHA-256", hex);
    free(body);
    return text;
}

/* ---- oracles ---- */

/* Dates follow each other in data the library accepted. */
static void check_dates(json_t *doc, const char *text) {
    json_int_t previous = json_integer_value(json_object_get(doc, "startDate"));
    json_t *path = json_object_get(doc, "path");
    size_t i, n = json_array_size(path);
    json_t *v;
    json_array_foreach(path, i, v) {
        json_int_t start = json_integer_value(json_object_get(v, "startDate"));
        FUZZ_CHECK(start >= previous, "visit %zu starts before what precedes it\n%s", i, text);
        previous = start;
        json_t *end = json_object_get(v, "endDate");
        if (json_is_integer(end)) {
            FUZZ_CHECK(json_integer_value(end) >= start, "visit %zu ends before it starts\n%s", i, text);
            previous = json_integer_value(end);
        } else {
            FUZZ_CHECK(i + 1 == n, "visit %zu, not the last, was never left\n%s", i, text);
        }
    }
    json_t *end = json_object_get(doc, "endDate");
    if (json_is_integer(end)) FUZZ_CHECK(json_integer_value(end) >= previous, "the run ends before its last visit\n%s", text);
}

/* A fresh session driven along the accepted path visits the same steps. */
static void replay_through_the_api(int t, json_t *doc, const char *text) {
    json_t *options = json_pack("{s:O, s:b}", "taskRunUUID", json_object_get(doc, "taskRunUUID"), "continueOnRecorderFailure", 1);
    json_t *external = json_object_get(doc, "additionalTaskResults");
    if (external && !json_is_null(external)) json_object_set(options, "additionalTaskResults", external);
    char *options_text = json_dumps(options, JSON_COMPACT);
    json_decref(options);
    stepkit_session *s = NULL;
    FUZZ_CHECK(stepkit_session_open(tasks[t], options_text, &s) == STEPKIT_OK, "open for the replay");
    free(options_text);
    stepkit_session_set_clock(s, counting_clock, NULL);
    const char *reason = json_string_value(json_object_get(doc, "finishReason"));
    int completed = reason && !strcmp(reason, "completed");
    json_t *path = json_object_get(doc, "path");
    size_t i, n = json_array_size(path);
    json_t *v;
    json_array_foreach(path, i, v) {
        json_t *state = state_of(s);
        const char *id = current_step(state, NULL);
        const char *saved = json_string_value(json_object_get(v, "step"));
        FUZZ_CHECK(id && saved && !strcmp(id, saved), "accepted path visit %zu is \"%s\", the task shows \"%s\"\n%s",
                   i, saved ? saved : "?", id ? id : "(finished)", text);
        json_decref(state);
        if (i + 1 == n && !completed) break;
        if (json_is_true(json_object_get(v, "skipped"))) {
            FUZZ_CHECK(stepkit_session_skip(s, NULL) == STEPKIT_OK, "accepted skipped visit %zu cannot be skipped\n%s", i, text);
            continue;
        }
        json_t *answer = json_object_get(v, "answer");
        if (answer) {
            char *a = json_dumps(answer, JSON_COMPACT | JSON_ENCODE_ANY);
            FUZZ_CHECK(stepkit_session_set_answer(s, a, NULL) == STEPKIT_OK, "accepted answer of visit %zu refused: %s\n%s", i, a, text);
            free(a);
        }
        json_t *active = json_object_get(v, "active");
        if (active && stepkit_session_active(s, "finish", NULL) == STEPKIT_OK) {
            /* a step that continues on finish has moved on by itself */
            json_t *after = state_of(s);
            const char *now = current_step(after, NULL);
            int moved = !now || strcmp(now, saved) != 0;
            json_decref(after);
            if (moved) continue;
        }
        int rc = stepkit_session_go_forward(s, NULL);
        FUZZ_CHECK(rc == STEPKIT_OK, "accepted visit %zu (\"%s\") cannot be left going forward: %s\n%s", i, saved,
                   stepkit_last_error(), text);
    }
    if (completed) {
        json_t *state = state_of(s);
        const char *finish = json_string_value(json_object_get(state, "finishReason"));
        FUZZ_CHECK(finish && !strcmp(finish, "completed"), "an accepted completed run does not complete\n%s", text);
        json_decref(state);
    }
    stepkit_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || pool_size == 0) return 0;
    int base = data[0] % pool_size;
    int keyed = data[1] & 1;
    int t = pool_task[base];
    json_t *doc = json_deep_copy(pool[base]);
    for (size_t i = 2; i + 2 < size && i < 2 + 3 * 16; i += 3) edit(doc, t, data[i], data[i + 1], data[i + 2]);
    char *text = sign(doc, keyed);
    json_decref(doc);
    if (!text) return 0;
    stepkit_session *s = (stepkit_session *)0x1;
    int rc = stepkit_session_restore(tasks[t], text, keyed ? "{\"integrityKey\": \"" FUZZ_KEY "\"}" : NULL, &s);
    if (rc != STEPKIT_OK) {
        FUZZ_CHECK(s == NULL, "session not NULL on failure");
        FUZZ_CHECK(rc == STEPKIT_ERESTORE, "forged data refused with rc %d\n%s", rc, text);
        fuzz_check_error(rc);
        const char *e = stepkit_last_error();
        FUZZ_CHECK(strstr(e, "integrityCheckFailed") == NULL, "correctly signed data failed its integrity check: %s\n%s", e, text);
        refused++;
        free(text);
        return 0;
    }
    accepted++;
    char *saved = NULL;
    FUZZ_CHECK(stepkit_session_save(s, &saved) == STEPKIT_OK, "save of a restored session");
    stepkit_session *again = NULL;
    rc = stepkit_session_restore(tasks[t], saved, keyed ? "{\"integrityKey\": \"" FUZZ_KEY "\"}" : NULL, &again);
    FUZZ_CHECK(rc == STEPKIT_OK, "an accepted run's own save is refused: %s\n%s", stepkit_last_error(), saved);
    json_t *accepted = json_loads(saved, 0, NULL);
    FUZZ_CHECK(accepted != NULL, "own save is not JSON");
    check_dates(accepted, text);
    replay_through_the_api(t, accepted, text);
    json_decref(accepted);
    stepkit_string_free(saved);
    stepkit_session_free(again);
    stepkit_session_free(s);
    free(text);
    return 0;
}
