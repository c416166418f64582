/*
 * bench.c — the C driver of StepKit's benchmark suite (benchmarks/run builds and runs it).
 *
 * Every figure goes through the real ABI (include/stepkit.h) of the release libstepkit.so, and
 * its floor is measured in the same process, interleaved with it, with jansson. Each subcommand
 * prints one JSON line per figure: {"figure", ..., "engine": [seconds per op, one per sample],
 * "floor": [...]}; benchmarks/run.py turns them into the table.
 *
 *   bench compile   TASK.json BUDGET_S [MIN_SAMPLES]
 *   bench compile-fhir QUESTIONNAIRE.json BUDGET_S [MIN_SAMPLES]   (stepkit_task_compile_fhir)
 *   bench steps     TASK.json TASK.walk MAX_ENTRIES BUDGET_S
 *   bench scaling   SMALL.json SMALL.walk BIG.json BIG.walk STEPS BUDGET_S
 *   bench saverestore TASK.json TASK.walk BUDGET_S
 *   bench memory    TASK.json TASK.walk SESSIONS ANSWERED_SESSIONS ANSWERED_ENTRIES
 *   bench threads   TASK.json TASK.walk BUDGET_S   (also: two threads each on a task of its own)
 *   bench profile   TASK.json TASK.walk ENTRIES      (callgrind: instruments the walk only)
 *   bench profile-compile TASK.json N                 (callgrind: N compiles)
 *   bench profile-save TASK.json TASK.walk            (callgrind: one save + one restore)
 *   bench run       TASK.json TASK.walk BUDGET_S     (a whole run, a reused-task run, result JSON)
 *   bench instr     TASK.json TASK.walk ENTRIES      (callgrind: ENTRIES no-output steps)
 *   bench instr-entries TASK.json TASK.walk FROM TO  (callgrind: one dump per entry FROM..TO-1)
 *   bench instr-input N [stroop|hanoi] [AUTOSAVE]     (callgrind: N game inputs, a Stroop key or a
 *                   Hanoi move each; AUTOSAVE: autosaved to that file)
 *   bench shared    TASK.json TASK.walk WALKS STATE   (DHAT: WALKS walks on one compiled task)
 *   bench verify    TASK.json TASK.walk BUDGET_S     (verify the finished run's result vs restore it)
 *   bench instr-run TASK.json TASK.walk N            (callgrind: one dump each for N compiles,
 *                   N json_loads, N reused runs, N results, N json_dumps of the result: the run
 *                   figures and their floors in instructions)
 *
 * A walk file (benchmarks/gen_task.py) lists the steps a session presents, in order:
 * "identifier<TAB>answer JSON" or "identifier<TAB>-" (go forward without an answer). One step of
 * a walk is stepkit_session_set_answer (when there is an answer) + stepkit_session_go_forward,
 * whose output is the new state; both outputs are freed with stepkit_string_free.
 * "identifier<TAB><back>" is a back step: the session presents the step, the driver calls
 * stepkit_session_go_backward (benchmarks/survey.walk has one).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "stepkit.h"
#include "../bindings/c/tests/read_file.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#endif

/* ------------------------------------------------------------------------------------------ */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int rc) {
    const char *err = stepkit_last_error();
    fprintf(stderr, "bench: %s failed (%d): %.2000s\n", what, rc, err ? err : "(no error JSON)");
    exit(2);
}

/* The file's text (free it); a file that cannot be read ends the run. */
static char *text_of(const char *path, size_t *len) {
    errno = 0;
    char *text = read_file(path, len);
    if (!text) {
        fprintf(stderr, "bench: cannot read %s: %s\n", path, errno ? strerror(errno) : "short read");
        exit(2);
    }
    return text;
}

/* a walk entry that goes back instead of answering and going forward */
static char BACK[] = "<back>";

typedef struct {
    size_t count;
    char **ids;
    char **answers; /* NULL: go forward without an answer */
} walk_t;

static walk_t load_walk(const char *path) {
    char *text = text_of(path, NULL);
    walk_t w = {0, NULL, NULL};
    size_t cap = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        if (w.count == cap) {
            cap = cap ? cap * 2 : 1024;
            w.ids = realloc(w.ids, cap * sizeof *w.ids);
            w.answers = realloc(w.answers, cap * sizeof *w.answers);
        }
        w.ids[w.count] = line;
        w.answers[w.count] = strcmp(tab + 1, "-") == 0 ? NULL : strcmp(tab + 1, "<back>") == 0 ? BACK : tab + 1;
        w.count++;
    }
    return w; /* `text` stays allocated: the walk points into it */
}

/* an entry count argument: 0 or more than the walk has means the whole walk */
static size_t entries_arg(const char *arg, size_t count) {
    size_t n = (size_t)atol(arg);
    return n == 0 || n > count ? count : n;
}

static stepkit_task *compile_file(const char *path, double *seconds) {
    char *text = text_of(path, NULL);
    stepkit_task *task = NULL;
    double t0 = now();
    int rc = stepkit_task_compile(text, &task);
    double t1 = now();
    if (rc) die("stepkit_task_compile", rc);
    if (seconds) *seconds = t1 - t0;
    free(text);
    return task;
}

static void print_array(const char *key, const double *v, int n) {
    printf("\"%s\":[", key);
    for (int i = 0; i < n; i++) printf("%s%.9g", i ? "," : "", v[i]);
    printf("]");
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One step of a walk: set the answer (if any) and go forward. Returns the new state (caller
 * frees with stepkit_string_free) when `keep` is set, else frees it. */
static char *one_step(stepkit_session *s, const char *answer, int keep) {
    char *out = NULL;
    int rc;
    if (answer == BACK) {
        rc = stepkit_session_go_backward(s, keep ? &out : NULL);
        if (rc) die("stepkit_session_go_backward", rc);
        return out;
    }
    if (answer) {
        /* The new state comes with go_forward; set_answer is asked for none (out NULL). */
        rc = stepkit_session_set_answer(s, answer, NULL);
        if (rc) die("stepkit_session_set_answer", rc);
    }
    rc = stepkit_session_go_forward(s, &out);
    if (rc) die("stepkit_session_go_forward", rc);
    if (keep) return out;
    stepkit_string_free(out);
    return NULL;
}

static void expect_step(const char *state, const char *id, size_t i) {
    json_error_t err;
    json_t *root = json_loads(state, 0, &err);
    json_t *step = root ? json_object_get(root, "step") : NULL;
    const char *got = step ? json_string_value(json_object_get(step, "identifier")) : NULL;
    if (!got || strcmp(got, id) != 0) {
        fprintf(stderr, "bench: walk entry %zu: the session presents %s, the walk expects %s\n", i,
                got ? got : "(no step)", id);
        exit(3);
    }
    json_decref(root);
}

/* STEPKIT_BENCH_OPTIONS: session options for every session the driver opens (e.g.
 * {"audit": false}, to measure what the audit trail costs a step); none by default. */
static stepkit_session *open_session(stepkit_task *task) {
    stepkit_session *s = NULL;
    int rc = stepkit_session_open(task, getenv("STEPKIT_BENCH_OPTIONS"), &s);
    if (rc) die("stepkit_session_open", rc);
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* compile: stepkit_task_compile + stepkit_task_free vs json_loads + json_decref;
 * compile-fhir: the same with stepkit_task_compile_fhir (a Questionnaire's import + compile) */

static int compile_any(int fhir, const char *text, stepkit_task **t) {
    return fhir ? stepkit_task_compile_fhir(text, NULL, t) : stepkit_task_compile(text, t);
}

static int cmd_compile(int argc, char **argv) {
    if (argc < 4) return 1;
    size_t len;
    char *text = text_of(argv[2], &len);
    int fhir = !strcmp(argv[1], "compile-fhir");
    double budget = atof(argv[3]);
    enum { MAXS = 64 };
    double eng[MAXS], flo[MAXS];
    int n = 0;
    /* iterations per sample: enough for ~40 ms, from one timed compile */
    stepkit_task *t = NULL;
    double t0 = now();
    int rc = compile_any(fhir, text, &t);
    double first = now() - t0;
    if (rc) die("stepkit_task_compile", rc);
    stepkit_task_free(t);
    long iters = first >= 0.04 ? 1 : (long)(0.04 / (first > 1e-7 ? first : 1e-7)) + 1;
    json_error_t err;
    double start = now();
    int min_samples = argc > 4 ? atoi(argv[4]) : 3;
    if (first >= 1.0) {
        /* a slow compile: the timing above is the first sample */
        double b = now();
        json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
        json_decref(root);
        eng[n] = first;
        flo[n] = now() - b;
        n++;
    }
    while (n < MAXS && !(n >= min_samples && now() - start > budget)) {
        double a = now();
        for (long i = 0; i < iters; i++) {
            if ((rc = compile_any(fhir, text, &t))) die("stepkit_task_compile", rc);
            stepkit_task_free(t);
        }
        double b = now();
        for (long i = 0; i < iters; i++) {
            json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
            if (!root) { fprintf(stderr, "bench: jansson: %s\n", err.text); return 2; }
            json_decref(root);
        }
        double c = now();
        eng[n] = (b - a) / iters;
        flo[n] = (c - b) / iters;
        n++;
        if (n >= 15) break;
    }
    printf("{\"figure\":\"%s\",\"task\":\"%s\",\"bytes\":%zu,\"iters\":%ld,", argv[1], base_name(argv[2]), len, iters);
    print_array("engine", eng, n);
    printf(",");
    print_array("floor", flo, n);
    printf("}\n");
    free(text);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* steps: per-step cost of a walk vs jansson parsing the answer + dumping the new state */

/* the floor of `n` steps, `reps` times: parse each answer, dump each state */
static void steps_floor(const walk_t *w, json_t **states, size_t n, long reps) {
    json_error_t err;
    for (long r = 0; r < reps; r++)
        for (size_t i = 0; i < n; i++) {
            if (w->answers[i]) {
                json_t *ans = json_loads(w->answers[i], JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
                json_decref(ans);
            }
            char *d = json_dumps(states[i], JSON_COMPACT);
            free(d);
        }
}

static int cmd_steps(int argc, char **argv) {
    if (argc < 6) return 1;
    double compile_s;
    stepkit_task *task = compile_file(argv[2], &compile_s);
    walk_t w = load_walk(argv[3]);
    size_t max = entries_arg(argv[4], w.count);
    double budget = atof(argv[5]);
    double start = now();

    /* first walk: verified against the walk file; keeps each new state for the floor; stops early
     * (at least 5 steps) when a third of the budget is spent */
    json_t **states = calloc(max, sizeof *states);
    size_t state_bytes = 0, n = 0;
    double first_sum = 0;
    stepkit_session *s = open_session(task);
    char *st = NULL;
    if (stepkit_session_state(s, &st)) die("stepkit_session_state", -1);
    for (n = 0; n < max; n++) {
        expect_step(st, w.ids[n], n);
        stepkit_string_free(st);
        double a = now();
        st = one_step(s, w.answers[n], 1);
        first_sum += now() - a;
        json_error_t err;
        states[n] = json_loads(st, 0, &err);
        state_bytes += strlen(st);
        if (n + 1 >= 5 && now() - start > budget / 3) { n++; break; }
    }
    int finished = strstr(st, "\"status\":\"finished\"") != NULL;
    stepkit_string_free(st);
    stepkit_session_free(s);

    enum { MAXS = 64 };
    double eng[MAXS], flo[MAXS];
    int ns = 0;
    eng[ns] = first_sum / n;
    /* floor, repeated to last >= 20 ms */
    long reps = 1;
    for (;;) {
        double a = now();
        steps_floor(&w, states, n, reps);
        double el = now() - a;
        if (el >= 0.02 || reps >= (1L << 20)) {
            if (ns == 0) flo[0] = el / (double)(reps * n);
            break;
        }
        reps *= 2;
    }
    ns = 1;
    /* the later walks also time set_answer and go_forward apart */
    double set_part[MAXS], fwd_part[MAXS];
    int nparts = 0;
    while (ns < MAXS && (ns < 3 || now() - start < budget) && ns < 25) {
        s = open_session(task);
        double sum = 0, set_sum = 0, fwd_sum = 0;
        for (size_t i = 0; i < n; i++) {
            char *out = NULL;
            int rc;
            double a = now();
            if (w.answers[i]) {
                if ((rc = stepkit_session_set_answer(s, w.answers[i], NULL))) die("stepkit_session_set_answer", rc);
            }
            double b = now();
            if ((rc = stepkit_session_go_forward(s, &out))) die("stepkit_session_go_forward", rc);
            stepkit_string_free(out);
            double c = now();
            sum += c - a;
            set_sum += b - a;
            fwd_sum += c - b;
        }
        stepkit_session_free(s);
        eng[ns] = sum / n;
        set_part[nparts] = set_sum / n;
        fwd_part[nparts] = fwd_sum / n;
        nparts++;
        double a = now();
        steps_floor(&w, states, n, reps);
        flo[ns] = (now() - a) / (double)(reps * n);
        ns++;
    }
    printf("{\"figure\":\"steps\",\"task\":\"%s\",\"steps\":%zu,\"walk\":%zu,\"finished\":%s,"
           "\"stateBytes\":%.1f,\"compileSeconds\":%.6f,",
           base_name(argv[2]), n, w.count, finished ? "true" : "false", (double)state_bytes / n, compile_s);
    print_array("engine", eng, ns);
    printf(",");
    print_array("floor", flo, ns);
    printf(",");
    print_array("setAnswerPerStep", set_part, nparts);
    printf(",");
    print_array("goForwardPerStep", fwd_part, nparts);
    printf("}\n");
    for (size_t i = 0; i < n; i++) json_decref(states[i]);
    free(states);
    stepkit_task_free(task);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* scaling: per-step cost on a big task vs a small one, samples interleaved in one process so
 * that the machine's load affects both alike. A sample of the big task walks its first MAX
 * steps on a new session; a sample of the small task walks whole sessions until it has taken
 * as many steps. */

static double walk_steps(stepkit_task *task, walk_t *w, size_t steps, int verify) {
    double sum = 0;
    size_t done = 0;
    while (done < steps) {
        stepkit_session *s = open_session(task);
        char *st = NULL;
        if (verify && stepkit_session_state(s, &st)) die("stepkit_session_state", -1);
        for (size_t i = 0; i < w->count && done < steps; i++, done++) {
            if (verify) { expect_step(st, w->ids[i], i); stepkit_string_free(st); }
            double a = now();
            st = one_step(s, w->answers[i], verify);
            sum += now() - a;
        }
        if (verify) stepkit_string_free(st);
        stepkit_session_free(s);
    }
    return sum / (double)steps;
}

static int cmd_scaling(int argc, char **argv) {
    if (argc < 8) return 1;
    double small_compile, big_compile;
    stepkit_task *small = compile_file(argv[2], &small_compile);
    walk_t ws = load_walk(argv[3]);
    stepkit_task *big = compile_file(argv[4], &big_compile);
    walk_t wb = load_walk(argv[5]);
    size_t steps = (size_t)atol(argv[6]);
    double budget = atof(argv[7]);
    if (steps == 0 || steps > wb.count) steps = wb.count;
    /* verified walks first (not counted) */
    walk_steps(small, &ws, ws.count, 1);
    walk_steps(big, &wb, steps < 200 ? steps : 200, 1);
    enum { MAXS = 64 };
    double eb[MAXS], es[MAXS];
    int n = 0;
    double start = now();
    while (n < MAXS && (n < 3 || now() - start < budget) && n < 25) {
        es[n] = walk_steps(small, &ws, steps, 0);
        eb[n] = walk_steps(big, &wb, steps, 0);
        n++;
    }
    printf("{\"figure\":\"scaling\",\"task\":\"%s\",\"small\":\"%s\",\"steps\":%zu,\"walk\":%zu,"
           "\"compileSeconds\":%.6f,", base_name(argv[4]), base_name(argv[2]), steps, wb.count, big_compile);
    print_array("engine", eb, n);
    printf(",");
    print_array("floor", es, n);
    printf("}\n");
    stepkit_task_free(small);
    stepkit_task_free(big);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* saverestore: a session with every answer of the walk but the last entry. The floor of a save
 * is json_dumps of the same document + SHA-256 of that text (the integrity digest any saved data
 * needs); of a restore, json_loads + SHA-256 of the text + json_decref. */

static size_t count_answers(const char *answer) {
    if (!answer) return 0;
    json_error_t err;
    json_t *a = json_loads(answer, JSON_DECODE_ANY, &err);
    size_t n = json_is_object(a) ? json_object_size(a) : 1;
    json_decref(a);
    return n;
}

static int cmd_saverestore(int argc, char **argv) {
    if (argc < 5) return 1;
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    double budget = atof(argv[4]);
    stepkit_session *s = open_session(task);
    size_t answers = 0;
    double a0 = now();
    for (size_t i = 0; i + 1 < w.count; i++) {
        one_step(s, w.answers[i], 0);
        answers += count_answers(w.answers[i]);
    }
    double walk_s = now() - a0;
    char *st = NULL;
    if (stepkit_session_state(s, &st)) die("stepkit_session_state", -1);
    expect_step(st, w.ids[w.count - 1], w.count - 1);
    stepkit_string_free(st);

    char *saved = NULL;
    int rc = stepkit_session_save(s, &saved);
    if (rc) die("stepkit_session_save", rc);
    size_t saved_len = strlen(saved);
    json_error_t err;
    json_t *doc = json_loads(saved, JSON_REJECT_DUPLICATES, &err);
    if (!doc) { fprintf(stderr, "bench: saved data is not JSON: %s\n", err.text); return 2; }
    /* the restored session must save the same data (modulo nothing: same clock readings) */
    stepkit_session *r = NULL;
    if ((rc = stepkit_session_restore(task, saved, NULL, &r))) die("stepkit_session_restore", rc);
    char *again = NULL;
    stepkit_session_save(r, &again);
    int same = strcmp(again, saved) == 0;
    stepkit_string_free(again);
    stepkit_session_free(r);

    enum { MAXS = 64 };
    double es[MAXS], fs[MAXS], er[MAXS], fr[MAXS];
    int n = 0;
    double start = now();
    while (n < MAXS && (n < 5 || now() - start < budget) && n < 31) {
        char *out = NULL;
        double a = now();
        if ((rc = stepkit_session_save(s, &out))) die("stepkit_session_save", rc);
        stepkit_string_free(out);
        double b = now();
        char *d = json_dumps(doc, JSON_COMPACT);
        unsigned char md[SHA256_DIGEST_LENGTH];
        SHA256((const unsigned char *)d, strlen(d), md);
        free(d);
        double c = now();
        if ((rc = stepkit_session_restore(task, saved, NULL, &r))) die("stepkit_session_restore", rc);
        stepkit_session_free(r);
        double e = now();
        json_t *p = json_loads(saved, JSON_REJECT_DUPLICATES, &err);
        SHA256((const unsigned char *)saved, saved_len, md);
        json_decref(p);
        double f = now();
        es[n] = b - a; fs[n] = c - b; er[n] = e - c; fr[n] = f - e;
        n++;
    }
    printf("{\"figure\":\"save\",\"task\":\"%s\",\"answers\":%zu,\"bytes\":%zu,\"walkSeconds\":%.6f,\"roundTrip\":%s,",
           base_name(argv[2]), answers, saved_len, walk_s, same ? "true" : "false");
    print_array("engine", es, n); printf(","); print_array("floor", fs, n); printf("}\n");
    printf("{\"figure\":\"restore\",\"task\":\"%s\",\"answers\":%zu,\"bytes\":%zu,", base_name(argv[2]), answers, saved_len);
    print_array("engine", er, n); printf(","); print_array("floor", fr, n); printf("}\n");
    double esr[MAXS], fsr[MAXS];
    for (int i = 0; i < n; i++) { esr[i] = es[i] + er[i]; fsr[i] = fs[i] + fr[i]; }
    printf("{\"figure\":\"saverestore\",\"task\":\"%s\",\"answers\":%zu,\"bytes\":%zu,", base_name(argv[2]), answers, saved_len);
    print_array("engine", esr, n); printf(","); print_array("floor", fsr, n); printf("}\n");
    json_decref(doc);
    stepkit_string_free(saved);
    stepkit_session_free(s);
    stepkit_task_free(task);
    return 0;
}

/* verify: the whole walk's result verified (stepkit_task_verify_result: a replay through the
 * task with the report and the recomputed result written), against restoring the same finished
 * run from its saved data (stepkit_session_restore, which replays it too, then frees): issue 33
 * asks that verifying cost at most 1.5x restoring. Interleaved, same task, same run. */
static int cmd_verify(int argc, char **argv) {
    if (argc < 5) return 1;
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    double budget = atof(argv[4]);
    stepkit_session *s = open_session(task);
    for (size_t i = 0; i < w.count; i++) one_step(s, w.answers[i], 0);
    char *result = NULL, *saved = NULL, *report = NULL;
    int rc = stepkit_session_result(s, &result);
    if (rc) die("stepkit_session_result", rc);
    if ((rc = stepkit_session_save(s, &saved))) die("stepkit_session_save", rc);
    /* the report must say the run verifies, and count the result's step results */
    if ((rc = stepkit_task_verify_result(task, result, NULL, &report))) die("stepkit_task_verify_result", rc);
    json_error_t err;
    json_t *parsed = json_loads(report, 0, &err), *doc = json_loads(result, 0, &err);
    int verified = parsed && json_is_true(json_object_get(parsed, "verified"));
    size_t steps = 0;
    json_t *entries = doc ? json_object_get(doc, "results") : NULL;
    for (size_t i = 0; i < json_array_size(entries); i++) {
        json_t *inner = json_object_get(json_array_get(entries, i), "results");
        json_t *first = json_array_get(inner, 0);
        /* a section result holds step results (which have results of their own) */
        steps += first && json_object_get(first, "results") ? json_array_size(inner) : 1;
    }
    json_decref(parsed);
    json_decref(doc);
    stepkit_string_free(report);
    if (!verified) { fprintf(stderr, "bench: the walk's result does not verify\n"); return 3; }
    enum { MAXS = 64 };
    double ev[MAXS], fr[MAXS];
    int n = 0;
    double start = now();
    while (n < MAXS && (n < 7 || now() - start < budget)) {
        /* one verify, one restore, in turn: a load that comes and goes on a shared machine
         * weighs on both alike */
        enum { REPS = 20 };
        double tv = 0, tr = 0;
        for (int k = 0; k < REPS; k++) {
            char *out = NULL;
            stepkit_session *r = NULL;
            double a = now();
            if ((rc = stepkit_task_verify_result(task, result, NULL, &out))) die("stepkit_task_verify_result", rc);
            stepkit_string_free(out);
            double b = now();
            if ((rc = stepkit_session_restore(task, saved, NULL, &r))) die("stepkit_session_restore", rc);
            stepkit_session_free(r);
            double c = now();
            tv += b - a; tr += c - b;
        }
        ev[n] = tv / REPS; fr[n] = tr / REPS;
        n++;
    }
    printf("{\"figure\":\"verify\",\"task\":\"%s\",\"steps\":%zu,\"resultBytes\":%zu,\"savedBytes\":%zu,",
           base_name(argv[2]), steps, strlen(result), strlen(saved));
    print_array("engine", ev, n); printf(","); print_array("floor", fr, n); printf("}\n");
    stepkit_string_free(result);
    stepkit_string_free(saved);
    stepkit_session_free(s);
    stepkit_task_free(task);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* memory: malloc'd bytes (mallinfo2) and RSS (/proc/self/statm) deltas */

static long rss_bytes(void) {
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

static long heap_bytes(void) {
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}

static int cmd_memory(int argc, char **argv) {
    if (argc < 7) return 1;
    char *text = text_of(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    long nsessions = atol(argv[4]), nanswered = atol(argv[5]);
    size_t entries = (size_t)atol(argv[6]);
    if (entries > w.count) entries = w.count;
    stepkit_session **ss = calloc((size_t)nsessions, sizeof *ss);
    /* warm the library (lazy runtime init, thread-locals) on a throwaway task and session */
    {
        stepkit_task *t0 = NULL;
        if (stepkit_task_compile(text, &t0)) die("stepkit_task_compile", -1);
        stepkit_session *s0 = open_session(t0);
        one_step(s0, w.answers[0], 0);
        stepkit_session_free(s0);
        stepkit_task_free(t0);
    }
    malloc_trim(0);
    long h0 = heap_bytes(), r0 = rss_bytes();
    stepkit_task *task = NULL;
    int rc = stepkit_task_compile(text, &task);
    if (rc) die("stepkit_task_compile", rc);
    long h1 = heap_bytes(), r1 = rss_bytes();
    double a = now();
    for (long i = 0; i < nsessions; i++) ss[i] = open_session(task);
    double open_s = (now() - a) / nsessions;
    long h2 = heap_bytes(), r2 = rss_bytes();
    size_t answers = 0;
    a = now();
    for (long i = 0; i < nanswered && i < nsessions; i++)
        for (size_t e = 0; e < entries; e++) {
            one_step(ss[i], w.answers[e], 0);
            if (i == 0) answers += count_answers(w.answers[e]);
        }
    double answered_s = now() - a;
    long h3 = heap_bytes(), r3 = rss_bytes();
    a = now();
    for (long i = 0; i < nsessions; i++) stepkit_session_free(ss[i]);
    double free_s = (now() - a) / nsessions;
    long h4 = heap_bytes();
    stepkit_task_free(task);
    long h5 = heap_bytes();
    printf("{\"figure\":\"memory\",\"task\":\"%s\",\"sessions\":%ld,\"taskHeapBytes\":%ld,\"taskRssBytes\":%ld,"
           "\"sessionHeapBytes\":%.1f,\"sessionRssBytes\":%.1f,\"answeredSessions\":%ld,\"answersPerSession\":%zu,"
           "\"answeredSessionHeapBytes\":%.1f,\"answeredSessionRssBytes\":%.1f,\"heapBytesPerAnswer\":%.1f,"
           "\"openSeconds\":%.9f,\"freeSeconds\":%.9f,\"answeredWalkSeconds\":%.6f,"
           "\"heapLeftAfterSessionsFree\":%ld,\"heapLeftAfterTaskFree\":%ld,\"taskJsonBytes\":%zu}\n",
           base_name(argv[2]), nsessions, h1 - h0, r1 - r0, (double)(h2 - h1) / nsessions,
           (double)(r2 - r1) / nsessions, nanswered, answers,
           (double)(h2 - h1) / nsessions + (double)(h3 - h2) / (nanswered ? nanswered : 1),
           (double)(r2 - r1) / nsessions + (double)(r3 - r2) / (nanswered ? nanswered : 1),
           answers ? (double)(h3 - h2) / (double)(answers * (size_t)nanswered) : 0.0,
           open_s, free_s, answered_s, h4 - h1, h5 - h0, strlen(text));
    free(text);
    free(ss);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* threads: two threads walking separate sessions of one task vs one thread; and, to tell what
 * sharing the task costs, two threads each walking sessions of a task it compiled itself */

typedef struct {
    stepkit_task *task;
    walk_t *w;
    long walks;
    pthread_barrier_t *barrier;
    /* non-NULL: the thread compiles this task text for itself before the barrier (not timed) */
    const char *own_task;
} thread_arg;

static void walk_many(stepkit_task *task, walk_t *w, long walks) {
    for (long k = 0; k < walks; k++) {
        stepkit_session *s = open_session(task);
        for (size_t i = 0; i < w->count; i++) one_step(s, w->answers[i], 0);
        stepkit_session_free(s);
    }
}

static void *thread_main(void *p) {
    thread_arg *t = p;
    stepkit_task *task = t->task;
    if (t->own_task && stepkit_task_compile(t->own_task, &task) != 0) {
        fprintf(stderr, "bench: the task did not compile in a thread\n");
        exit(2);
    }
    pthread_barrier_wait(t->barrier);
    walk_many(task, t->w, t->walks);
    if (t->own_task) stepkit_task_free(task);
    return NULL;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

/* CPU time / wall time of the last run_threads or run_control: the cores the run really had */
static double last_cpu_share;

/* releases the threads waiting at the barrier and times them until the last has ended */
static double join_timed(pthread_t *th, int nthreads, pthread_barrier_t *barrier) {
    pthread_barrier_wait(barrier);
    double a = now(), ca = cpu_seconds();
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double el = now() - a;
    last_cpu_share = (cpu_seconds() - ca) / el;
    pthread_barrier_destroy(barrier);
    return el;
}

static double run_threads(stepkit_task *task, walk_t *w, long walks, int nthreads, const char *own_task) {
    pthread_t th[8];
    thread_arg args[8];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads + 1);
    for (int i = 0; i < nthreads; i++) {
        args[i] = (thread_arg){task, w, walks, &barrier, own_task};
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    return join_timed(th, nthreads, &barrier);
}

/* the control: the same thread layout doing only jansson work (parse + dump the task text), to
 * tell how much parallelism the machine gives right now (2 cores shared with other work) */
typedef struct {
    const char *text;
    long reps;
    pthread_barrier_t *barrier;
} control_arg;

static void *control_main(void *p) {
    control_arg *c = p;
    json_error_t err;
    pthread_barrier_wait(c->barrier);
    for (long i = 0; i < c->reps; i++) {
        json_t *root = json_loads(c->text, 0, &err);
        char *d = json_dumps(root, JSON_COMPACT);
        free(d);
        json_decref(root);
    }
    return NULL;
}

static double run_control(const char *text, long reps, int nthreads) {
    pthread_t th[8];
    control_arg args[8];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads + 1);
    for (int i = 0; i < nthreads; i++) {
        args[i] = (control_arg){text, reps, &barrier};
        pthread_create(&th[i], NULL, control_main, &args[i]);
    }
    return join_timed(th, nthreads, &barrier);
}

static int cmd_threads(int argc, char **argv) {
    if (argc < 5) return 1;
    char *text = text_of(argv[2], NULL);
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    double budget = atof(argv[4]);
    /* calibrate: walks per thread so that one thread works ~0.4 s; control ~0.2 s. Each count is
     * doubled until a run lasts 50 ms before it is scaled, so one short or preempted first sample
     * cannot make the counts (and the run) a thousand times too long. */
    long walks = 1, creps = 1;
    double one, c1;
    while ((one = run_threads(task, &w, walks, 1, NULL)) < 0.05 && walks < (1L << 20)) walks *= 2;
    walks = (long)(0.4 * (double)walks / one) + 1;
    while ((c1 = run_control(text, creps, 1)) < 0.05 && creps < (1L << 20)) creps *= 2;
    creps = (long)(0.2 * (double)creps / c1) + 1;
    enum { MAXS = 32 };
    double t1[MAXS], t2[MAXS], ratio[MAXS], cratio[MAXS], cpu2[MAXS], ccpu2[MAXS], ratio_own[MAXS];
    int n = 0;
    double start = now();
    while (n < MAXS && (n < 3 || now() - start < budget) && n < 9) {
        double k1 = run_control(text, creps, 1);
        double k2 = run_control(text, creps, 2);
        ccpu2[n] = last_cpu_share;
        cratio[n] = 2.0 * k1 / k2;
        t1[n] = run_threads(task, &w, walks, 1, NULL);
        t2[n] = run_threads(task, &w, walks, 2, NULL);
        cpu2[n] = last_cpu_share;
        /* throughput of 2 threads / throughput of 1: (2*walks/t2) / (walks/t1) */
        ratio[n] = 2.0 * t1[n] / t2[n];
        ratio_own[n] = 2.0 * t1[n] / run_threads(task, &w, walks, 2, text);
        t1[n] /= (double)(walks * w.count);
        t2[n] /= (double)(2 * walks * w.count);
        n++;
    }
    double lo[3];
    getloadavg(lo, 3);
    printf("{\"figure\":\"threads\",\"task\":\"%s\",\"walksPerThread\":%ld,\"stepsPerWalk\":%zu,\"loadavg\":%.2f,",
           base_name(argv[2]), walks, w.count, lo[0]);
    print_array("ratio", ratio, n); printf(",");
    print_array("controlRatio", cratio, n); printf(",");
    print_array("ratioTaskPerThread", ratio_own, n); printf(",");
    print_array("cpuShare2", cpu2, n); printf(",");
    print_array("controlCpuShare2", ccpu2, n); printf(",");
    print_array("oneThreadStep", t1, n); printf(",");
    print_array("twoThreadStep", t2, n);
    printf("}\n");
    stepkit_task_free(task);
    free(text);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* profile: for callgrind --instr-atstart=no; instruments only ENTRIES steps of the walk */

static int cmd_profile(int argc, char **argv) {
    if (argc < 5) return 1;
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    size_t n = entries_arg(argv[4], w.count);
    stepkit_session *s = open_session(task);
    one_step(s, w.answers[0], 0); /* warm: first-call work stays out of the profile */
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    for (size_t i = 1; i < n; i++) one_step(s, w.answers[i], 0);
    CALLGRIND_STOP_INSTRUMENTATION;
    fprintf(stderr, "profiled %zu steps of %s\n", n - 1, base_name(argv[2]));
    stepkit_session_free(s);
    stepkit_task_free(task);
    return 0;
}

/* profile-compile TASK N: instruments N compiles (+ frees) of the task */
static int cmd_profile_compile(int argc, char **argv) {
    if (argc < 4) return 1;
    char *text = text_of(argv[2], NULL);
    long n = atol(argv[3]);
    stepkit_task *t = NULL;
    if (stepkit_task_compile(text, &t)) die("stepkit_task_compile", -1);
    stepkit_task_free(t);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    for (long i = 0; i < n; i++) {
        if (stepkit_task_compile(text, &t)) die("stepkit_task_compile", -1);
        stepkit_task_free(t);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    free(text);
    return 0;
}

/* profile-save TASK WALK: walks all but the last entry, then instruments one save and one
 * restore (+ free) of the session */
static int cmd_profile_save(int argc, char **argv) {
    if (argc < 4) return 1;
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    stepkit_session *s = open_session(task), *r = NULL;
    for (size_t i = 0; i + 1 < w.count; i++) one_step(s, w.answers[i], 0);
    char *saved = NULL;
    if (stepkit_session_save(s, &saved)) die("stepkit_session_save", -1);
    stepkit_string_free(saved);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    if (stepkit_session_save(s, &saved)) die("stepkit_session_save", -1);
    if (stepkit_session_restore(task, saved, NULL, &r)) die("stepkit_session_restore", -1);
    stepkit_session_free(r);
    CALLGRIND_STOP_INSTRUMENTATION;
    stepkit_string_free(saved);
    stepkit_session_free(s);
    stepkit_task_free(task);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* run: a realistic run end to end (benchmarks/survey.json and its walk: sections, predicate
 * rules, one back step). Three figures, samples interleaved with their floors:
 *   whole run:  compile + open + walk (no outputs) + result JSON + free everything,
 *               vs json_loads of the task text + json_decref + json_dumps of the result document;
 *   reused:     the same with the task compiled once: open + walk + result + free,
 *               vs json_dumps of the result document;
 *   result:     stepkit_session_result of the finished session vs json_dumps of its document. */

/* the walk with no output asked for: set_answer and go_forward (go_backward) with out NULL */
static void walk_quiet(stepkit_session *s, walk_t *w, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) {
        int rc;
        if (w->answers[i] == BACK) {
            if ((rc = stepkit_session_go_backward(s, NULL))) die("stepkit_session_go_backward", rc);
            continue;
        }
        if (w->answers[i] && (rc = stepkit_session_set_answer(s, w->answers[i], NULL)))
            die("stepkit_session_set_answer", rc);
        if ((rc = stepkit_session_go_forward(s, NULL))) die("stepkit_session_go_forward", rc);
    }
}

static char *result_of(stepkit_session *s) {
    char *out = NULL;
    int rc = stepkit_session_result(s, &out);
    if (rc) die("stepkit_session_result", rc);
    return out;
}

/* open + walk + result + free, on a compiled task */
static void reused_run(stepkit_task *task, walk_t *w) {
    stepkit_session *x = open_session(task);
    walk_quiet(x, w, 0, w->count);
    stepkit_string_free(result_of(x));
    stepkit_session_free(x);
}

/* compile + the reused run + free */
static void whole_run(const char *text, walk_t *w) {
    stepkit_task *t = NULL;
    int rc = stepkit_task_compile(text, &t);
    if (rc) die("stepkit_task_compile", rc);
    reused_run(t, w);
    stepkit_task_free(t);
}

static int cmd_run(int argc, char **argv) {
    if (argc < 5) return 1;
    size_t task_len;
    char *text = text_of(argv[2], &task_len);
    walk_t w = load_walk(argv[3]);
    double budget = atof(argv[4]);
    json_error_t err;

    /* first run: checked step by step against the walk; its result is the floor's document */
    stepkit_task *task = compile_file(argv[2], NULL);
    stepkit_session *s = open_session(task);
    char *st = NULL;
    if (stepkit_session_state(s, &st)) die("stepkit_session_state", -1);
    for (size_t i = 0; i < w.count; i++) {
        expect_step(st, w.ids[i], i);
        stepkit_string_free(st);
        st = one_step(s, w.answers[i], 1);
    }
    if (!strstr(st, "\"status\":\"finished\"")) { fprintf(stderr, "bench: the survey walk does not finish\n"); return 3; }
    stepkit_string_free(st);
    char *result = result_of(s);
    size_t result_len = strlen(result);
    json_t *doc = json_loads(result, JSON_REJECT_DUPLICATES, &err);
    if (!doc) { fprintf(stderr, "bench: result is not JSON: %s\n", err.text); return 2; }
    stepkit_string_free(result);
    stepkit_session *finished = s; /* kept for the result figure */

    /* repetitions per sample: ~20 ms of the whole run */
    long reps = 1;
    for (;;) {
        double a = now();
        for (long r = 0; r < reps; r++) whole_run(text, &w);
        if (now() - a >= 0.02 || reps >= (1L << 16)) break;
        reps *= 2;
    }
    enum { MAXS = 64 };
    double ew[MAXS], fw[MAXS], er[MAXS], fr[MAXS], eres[MAXS], fres[MAXS];
    int n = 0;
    double start = now();
    while (n < 31 && (n < 5 || now() - start < budget)) {
        double a = now();
        for (long r = 0; r < reps; r++) whole_run(text, &w);
        double b = now();
        for (long r = 0; r < reps; r++) {
            json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
            json_decref(root);
            free(json_dumps(doc, JSON_COMPACT));
        }
        double c = now();
        for (long r = 0; r < reps; r++) reused_run(task, &w);
        double d = now();
        for (long r = 0; r < reps; r++) free(json_dumps(doc, JSON_COMPACT));
        double e = now();
        for (long r = 0; r < reps; r++) stepkit_string_free(result_of(finished));
        double f = now();
        for (long r = 0; r < reps; r++) free(json_dumps(doc, JSON_COMPACT));
        double g = now();
        ew[n] = (b - a) / reps; fw[n] = (c - b) / reps;
        er[n] = (d - c) / reps; fr[n] = (e - d) / reps;
        eres[n] = (f - e) / reps; fres[n] = (g - f) / reps;
        n++;
    }
    const char *name = base_name(argv[2]);
    printf("{\"figure\":\"run\",\"task\":\"%s\",\"bytes\":%zu,\"resultBytes\":%zu,\"entries\":%zu,\"reps\":%ld,",
           name, task_len, result_len, w.count, reps);
    print_array("engine", ew, n); printf(","); print_array("floor", fw, n); printf("}\n");
    printf("{\"figure\":\"reusedRun\",\"task\":\"%s\",\"resultBytes\":%zu,\"entries\":%zu,", name, result_len, w.count);
    print_array("engine", er, n); printf(","); print_array("floor", fr, n); printf("}\n");
    printf("{\"figure\":\"result\",\"task\":\"%s\",\"resultBytes\":%zu,", name, result_len);
    print_array("engine", eres, n); printf(","); print_array("floor", fres, n); printf("}\n");
    json_decref(doc);
    stepkit_session_free(finished);
    stepkit_task_free(task);
    free(text);
    return 0;
}

/* instr TASK WALK N: for callgrind --instr-atstart=no; instruments the walk's entries 2..N with
 * no output asked for (set_answer and go_forward with out NULL) and no event callback, on a
 * session opened outside the instrumentation. benchmarks/run.py divides the instruction count by
 * N - 1 and reads the events' share from the same profile. */
static int cmd_instr(int argc, char **argv) {
    if (argc < 5) return 1;
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    size_t n = entries_arg(argv[4], w.count);
    stepkit_session *s = open_session(task);
    walk_quiet(s, &w, 0, 1); /* warm: first-call work stays out */
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    walk_quiet(s, &w, 1, n);
    CALLGRIND_STOP_INSTRUMENTATION;
    printf("{\"figure\":\"instr\",\"task\":\"%s\",\"steps\":%zu}\n", base_name(argv[2]), n - 1);
    stepkit_session_free(s);
    stepkit_task_free(task);
    return 0;
}

/* instr-input N [stroop|hanoi] [AUTOSAVE]: for callgrind --instr-atstart=no; N inputs
 * (stepkit_session_input, no output asked for, no event callback) on a session opened and given
 * one input outside the instrumentation, its manual clock moved 500 ms before each: a Stroop
 * game of N + 2 attempts, a key each (N <= 190: a Stroop test has at most 200), or a tower of
 * Hanoi of three disks, a disk dragged from tower 0 to 1 and back (never solved, so any N).
 * AUTOSAVE: the session autosaves to that file (option "autosave"; removed first). benchmarks/run.py
 * divides the instruction count by N (docs/active-tasks.md). */
static int64_t input_clock_ms = 1767225600000LL;
static int64_t input_clock(void *user_data) { (void)user_data; return input_clock_ms; }
static int cmd_instr_input(int argc, char **argv) {
    if (argc < 3) return 1;
    long n = strtol(argv[2], NULL, 10);
    int hanoi = argc > 3 && !strcmp(argv[3], "hanoi");
    const char *autosave = argc > 4 ? argv[4] : NULL;
    if (n < 1 || (!hanoi && n > 190) || n > 100000) return 1;
    char definition[256], options[4096 + 64];
    if (hanoi)
        snprintf(definition, sizeof definition, "{\"identifier\":\"g\",\"steps\":[{\"type\":\"towerOfHanoi\",\"identifier\":\"hanoi\","
                 "\"numberOfDisks\":3},{\"type\":\"completion\",\"identifier\":\"done\"}]}");
    else
        snprintf(definition, sizeof definition, "{\"identifier\":\"g\",\"steps\":[{\"type\":\"stroop\",\"identifier\":\"stroop\","
                 "\"numberOfAttempts\":%ld},{\"type\":\"completion\",\"identifier\":\"done\"}]}", n + 2);
    if (autosave) {
        if (strlen(autosave) > 4096) return 1;
        unlink(autosave);
        snprintf(options, sizeof options, "{\"seed\":1,\"autosave\":\"%s\"}", autosave);
    } else {
        snprintf(options, sizeof options, "{\"seed\":1}");
    }
    stepkit_task *task = NULL;
    stepkit_session *s = NULL;
    if (stepkit_task_compile(definition, &task) != STEPKIT_OK || stepkit_session_open(task, options, &s) != STEPKIT_OK) {
        fprintf(stderr, "instr-input: %s\n", stepkit_last_error());
        return 1;
    }
    stepkit_session_set_clock(s, input_clock, NULL);
    const char *inputs[2] = {"{\"type\":\"key\",\"key\":\"red\"}", "{\"type\":\"key\",\"key\":\"red\"}"};
    if (hanoi) {
        inputs[0] = "{\"type\":\"drag\",\"from\":0,\"to\":1}";
        inputs[1] = "{\"type\":\"drag\",\"from\":1,\"to\":0}";
    }
    input_clock_ms += 500;
    if (stepkit_session_input(s, inputs[0], NULL) != STEPKIT_OK) return 1; /* warm: first-call work stays out */
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    for (long i = 0; i < n; i++) {
        input_clock_ms += 500;
        if (stepkit_session_input(s, inputs[(i + 1) & 1], NULL) != STEPKIT_OK) {
            fprintf(stderr, "instr-input: input %ld: %s\n", i, stepkit_last_error());
            return 1;
        }
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    printf("{\"figure\":\"instr-input\",\"inputs\":%ld,\"game\":\"%s\",\"autosave\":%s}\n", n, hanoi ? "hanoi" : "stroop",
           autosave ? "true" : "false");
    stepkit_session_free(s);
    stepkit_task_free(task);
    if (autosave) unlink(autosave);
    return 0;
}

/* instr-entries TASK WALK FROM TO: for callgrind --instr-atstart=no; the walk's entries FROM..TO-1
 * instrumented one by one, each ended with a dump named "entry INDEX IDENTIFIER" (callgrind zeroes
 * its counts at each dump), so benchmarks/run.py can say what each kind of step costs. Entries
 * before FROM are walked outside the instrumentation. */
/* The run figures (`bench run`) and their floors, in instructions: one callgrind dump each for
 * N compiles + frees of the task, N json_loads + json_decref of its text, N reused runs (open +
 * walk + result + free), N stepkit_session_result + free of the finished run, and N json_dumps
 * (JSON_COMPACT) of the same result document. Each dump is named after its figure. */
static int cmd_instr_run(int argc, char **argv) {
    if (argc < 5) return 1;
    size_t task_len;
    char *text = text_of(argv[2], &task_len);
    walk_t w = load_walk(argv[3]);
    long n = atol(argv[4]);
    json_error_t err;
    stepkit_task *task = compile_file(argv[2], NULL);
    stepkit_session *finished = open_session(task);
    walk_quiet(finished, &w, 0, w.count);
    char *result = result_of(finished);
    json_t *doc = json_loads(result, JSON_REJECT_DUPLICATES, &err);
    if (!doc) { fprintf(stderr, "bench: result is not JSON: %s\n", err.text); return 2; }
    stepkit_string_free(result);
    reused_run(task, &w); /* first uses (type metadata, lazy globals) stay out */
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
    for (long r = 0; r < n; r++) {
        stepkit_task *t = NULL;
        if (stepkit_task_compile(text, &t)) die("stepkit_task_compile", -1);
        stepkit_task_free(t);
    }
    CALLGRIND_DUMP_STATS_AT("compile");
    for (long r = 0; r < n; r++) json_decref(json_loads(text, JSON_REJECT_DUPLICATES, &err));
    CALLGRIND_DUMP_STATS_AT("json_loads");
    for (long r = 0; r < n; r++) reused_run(task, &w);
    CALLGRIND_DUMP_STATS_AT("reused run");
    for (long r = 0; r < n; r++) stepkit_string_free(result_of(finished));
    CALLGRIND_DUMP_STATS_AT("result");
    for (long r = 0; r < n; r++) free(json_dumps(doc, JSON_COMPACT));
    CALLGRIND_DUMP_STATS_AT("json_dumps");
    CALLGRIND_STOP_INSTRUMENTATION;
    printf("{\"figure\":\"instr-run\",\"task\":\"%s\",\"n\":%ld}\n", base_name(argv[2]), n);
    json_decref(doc);
    stepkit_session_free(finished);
    stepkit_task_free(task);
    free(text);
    return 0;
}

static int cmd_instr_entries(int argc, char **argv) {
    if (argc < 6) return 1;
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    size_t from = (size_t)atol(argv[4]), to = (size_t)atol(argv[5]);
    if (to > w.count) to = w.count;
    if (from > to) from = to;
    stepkit_session *s = open_session(task);
    walk_quiet(s, &w, 0, from);
    char name[512];
    CALLGRIND_START_INSTRUMENTATION;
    for (size_t i = from; i < to; i++) {
        snprintf(name, sizeof name, "entry %zu %s", i, w.ids[i]);
        CALLGRIND_ZERO_STATS; /* the name's formatting stays out */
        walk_quiet(s, &w, i, i + 1);
        CALLGRIND_DUMP_STATS_AT(name);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    printf("{\"figure\":\"instr-entries\",\"task\":\"%s\",\"entries\":%zu}\n", base_name(argv[2]), to - from);
    stepkit_session_free(s);
    stepkit_task_free(task);
    return 0;
}

/* shared TASK WALK WALKS STATE: for valgrind --tool=dhat; compiles the task once and walks it
 * WALKS times, each on a new session, asking go_forward for the state when STATE is 1 (what the
 * threads figure does) and for nothing when it is 0. benchmarks/run.py runs it for two values of
 * WALKS and subtracts: what the extra walks wrote into blocks allocated before them (the compiled
 * task's, and the process's handle registry) is what every step of every session writes to memory
 * that all threads running the task share. */
static int cmd_shared(int argc, char **argv) {
    if (argc < 6) return 1;
    stepkit_task *task = compile_file(argv[2], NULL);
    walk_t w = load_walk(argv[3]);
    long walks = atol(argv[4]);
    int state = atoi(argv[5]);
    for (long k = 0; k < walks; k++) {
        stepkit_session *s = open_session(task);
        for (size_t i = 0; i < w.count; i++) {
            if (state) one_step(s, w.answers[i], 0);
            else walk_quiet(s, &w, i, i + 1);
        }
        stepkit_session_free(s);
    }
    printf("{\"figure\":\"shared\",\"task\":\"%s\",\"walks\":%ld,\"steps\":%zu}\n", base_name(argv[2]), walks, w.count);
    stepkit_task_free(task);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = 1;
    if (argc >= 2) {
        if (!strcmp(argv[1], "compile") || !strcmp(argv[1], "compile-fhir")) rc = cmd_compile(argc, argv);
        else if (!strcmp(argv[1], "steps")) rc = cmd_steps(argc, argv);
        else if (!strcmp(argv[1], "saverestore")) rc = cmd_saverestore(argc, argv);
        else if (!strcmp(argv[1], "scaling")) rc = cmd_scaling(argc, argv);
        else if (!strcmp(argv[1], "memory")) rc = cmd_memory(argc, argv);
        else if (!strcmp(argv[1], "threads")) rc = cmd_threads(argc, argv);
        else if (!strcmp(argv[1], "profile")) rc = cmd_profile(argc, argv);
        else if (!strcmp(argv[1], "profile-compile")) rc = cmd_profile_compile(argc, argv);
        else if (!strcmp(argv[1], "profile-save")) rc = cmd_profile_save(argc, argv);
        else if (!strcmp(argv[1], "run")) rc = cmd_run(argc, argv);
        else if (!strcmp(argv[1], "instr")) rc = cmd_instr(argc, argv);
        else if (!strcmp(argv[1], "instr-entries")) rc = cmd_instr_entries(argc, argv);
        else if (!strcmp(argv[1], "instr-input")) rc = cmd_instr_input(argc, argv);
        else if (!strcmp(argv[1], "shared")) rc = cmd_shared(argc, argv);
        else if (!strcmp(argv[1], "verify")) rc = cmd_verify(argc, argv);
        else if (!strcmp(argv[1], "instr-run")) rc = cmd_instr_run(argc, argv);
    }
    if (rc == 1) fprintf(stderr, "usage: see the comment at the top of benchmarks/bench.c\n");
    return rc;
}
