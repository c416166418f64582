/* Multi-threaded stress of StepKit (issue 7, item 2): 8 threads, hundreds of sessions on a few
 * shared compiled tasks (examples/tasks), random actions, event callbacks that call back into the
 * library, sessions shared between threads, and shared sessions freed while other threads use
 * them. Built with -fsanitize=address,undefined or -fsanitize=thread by hardening/sanitize.
 *
 *   stress [threads (8)] [sessions per thread (50)] [actions per session (60)]
 *   STEPKIT_EXAMPLES=examples/tasks (default: ./examples/tasks)
 *
 * Checks: every status is documented, never STEPKIT_EINTERNAL; outputs are non-NULL on success;
 * the session's own restoration data always restores. Prints counts; exit 1 on a failed check. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stepkit.h"
#include "../bindings/c/tests/read_file.h"

#define NTASKS 6
static const char *names[NTASKS] = {"headache", "daily-checkin", "health-survey", "intake", "medications", "short-walk"};
static stepkit_task *tasks[NTASKS];
#define NSHARED 16
static _Atomic(stepkit_session *) shared[NSHARED];
static atomic_long calls, ok_calls, events, reentries, failures, restores;

static const char *answers[] = {
    "true", "false", "42", "8", "0", "-0", "3.5", "[\"headache\"]", "[\"dizziness\"]", "[\"none\"]",
    "\"07:30\"", "\"2026-11-22\"", "\"ann@example.org\"", "\"some text\"", "{\"age\": 42}",
    "{\"age\": 42, \"email\": \"ann@example.org\"}", "{\"dontKnow\": true}", "null", "[]", "{}",
    "{\"latitude\": 52.5, \"longitude\": 13.4}", "1e400", "[1,", "\"\\u0000\"",
};
#define NANSWERS (sizeof answers / sizeof answers[0])
static const char *reasons[] = {"completed", "saved", "discarded", "failed", "earlyTermination", "bogus"};
static const char *ops[] = {"start", "suspend", "resume", "finish", "suspendTask", "resumeTask", "nope"};

static void fail(const char *what, int rc) {
    atomic_fetch_add(&failures, 1);
    fprintf(stderr, "FAILED: %s rc %d: %s\n", what, rc, stepkit_last_error() ? stepkit_last_error() : "(none)");
}

static void check(const char *what, int rc, char *out, int out_given) {
    atomic_fetch_add(&calls, 1);
    if (rc > 0 || rc < STEPKIT_EINTERNAL || rc == STEPKIT_EINTERNAL) fail(what, rc);
    if (rc == STEPKIT_OK) {
        atomic_fetch_add(&ok_calls, 1);
        if (out_given && !out) fail(what, -100);
    } else {
        if (out_given && out) fail("out not NULL on failure", rc);
        if (!stepkit_last_error()) fail("no last_error", rc);
    }
    stepkit_string_free(out);
}

static void on_event(const char *event_json, void *user_data) {
    stepkit_session *s = user_data;
    atomic_fetch_add(&events, 1);
    if (!event_json) fail("NULL event", 0);
    char *out = NULL;
    int rc = stepkit_session_state(s, &out); /* re-enter the session (EINVAL if another thread freed it) */
    if (rc == STEPKIT_OK) atomic_fetch_add(&reentries, 1);
    else if (rc != STEPKIT_EINVAL) fail("state from callback", rc);
    stepkit_string_free(out);
    if (strstr(event_json ? event_json : "", "stepWillAppear")) {
        rc = stepkit_session_result(s, &out);
        if (rc != STEPKIT_OK && rc != STEPKIT_EINVAL) fail("result from callback", rc);
        stepkit_string_free(out);
    }
}

static stepkit_session *open_one(unsigned *seed) {
    stepkit_session *s = NULL;
    int rc = stepkit_session_open(tasks[rand_r(seed) % NTASKS], "{\"continueOnRecorderFailure\": true}", &s);
    if (rc) { fail("open", rc); return NULL; }
    stepkit_session_set_event_callback(s, on_event, s, NULL);
    return s;
}

static void act(stepkit_session *s, unsigned *seed, int own) {
    char *out = NULL;
    int want_out = rand_r(seed) % 4 != 0;
    char **o = want_out ? &out : NULL;
    int rc;
    switch (rand_r(seed) % 14) {
    case 0: case 1: case 2:
        rc = stepkit_session_set_answer(s, answers[rand_r(seed) % NANSWERS], o); check("set_answer", rc, out, want_out); break;
    case 3: case 4: case 5: rc = stepkit_session_go_forward(s, o); check("forward", rc, out, want_out); break;
    case 6: rc = stepkit_session_go_backward(s, o); check("back", rc, out, want_out); break;
    case 7: rc = stepkit_session_skip(s, o); check("skip", rc, out, want_out); break;
    case 8:
        if (rand_r(seed) % 8 == 0) { rc = stepkit_session_finish(s, reasons[rand_r(seed) % 6], o); check("finish", rc, out, want_out); }
        break;
    case 9: rc = stepkit_session_active(s, ops[rand_r(seed) % 7], o); check("active", rc, out, want_out); break;
    case 10: rc = stepkit_session_tick(s, o); check("tick", rc, out, want_out); break;
    case 11: rc = stepkit_session_state(s, &out); check("state", rc, out, 1); break;
    case 12: rc = stepkit_session_result(s, &out); check("result", rc, out, 1); break;
    case 13: {
        char *saved = NULL;
        rc = stepkit_session_save(s, &saved);
        if (rc == STEPKIT_OK && own) {
            /* restore on the task it belongs to: find it by trying (differentTask otherwise) */
            for (int i = 0; i < NTASKS; i++) {
                stepkit_session *r = NULL;
                int rr = stepkit_session_restore(tasks[i], saved, NULL, &r);
                if (rr == STEPKIT_OK) { atomic_fetch_add(&restores, 1); stepkit_session_free(r); break; }
                if (rr != STEPKIT_ERESTORE) fail("restore", rr);
            }
        }
        check("save", rc, saved, 1);
        break;
    }
    }
}

typedef struct { int id, sessions, actions; } worker_args;

static void *worker(void *arg) {
    worker_args *a = arg;
    unsigned seed = 1234u + (unsigned)a->id * 7919u;
    for (int n = 0; n < a->sessions; n++) {
        stepkit_session *s = open_one(&seed);
        if (!s) continue;
        for (int i = 0; i < a->actions; i++) {
            act(s, &seed, 1);
            if (rand_r(&seed) % 4 == 0) {
                /* a shared session, possibly freed meanwhile by another thread: EINVAL then */
                stepkit_session *sh = atomic_load(&shared[rand_r(&seed) % NSHARED]);
                act(sh, &seed, 0);
            }
            if (rand_r(&seed) % 200 == 0) {
                /* replace a shared session: the old one is freed while others may be using it */
                stepkit_session *fresh = open_one(&seed);
                stepkit_session *old = atomic_exchange(&shared[rand_r(&seed) % NSHARED], fresh);
                stepkit_session_free(old);
            }
            if (rand_r(&seed) % 100 == 0) {
                char *out = NULL;
                int rc = stepkit_task_info(tasks[rand_r(&seed) % NTASKS], &out);
                check("task_info", rc, out, 1);
            }
        }
        stepkit_session_free(s);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int nthreads = argc > 1 ? atoi(argv[1]) : 8;
    int sessions = argc > 2 ? atoi(argv[2]) : 50;
    int actions = argc > 3 ? atoi(argv[3]) : 60;
    const char *dir = getenv("STEPKIT_EXAMPLES");
    if (!dir) dir = "examples/tasks";
    for (int i = 0; i < NTASKS; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.json", dir, names[i]);
        char *text = read_file(path, NULL);
        if (!text || stepkit_task_compile(text, &tasks[i]) != STEPKIT_OK) { fprintf(stderr, "cannot compile %s\n", path); return 2; }
        free(text);
    }
    unsigned seed = 42;
    for (int i = 0; i < NSHARED; i++) atomic_store(&shared[i], open_one(&seed));
    /* the tasks are released now: the sessions keep them alive (the workers open new sessions,
     * so keep our references until the end instead) */
    pthread_t th[64];
    worker_args args[64];
    if (nthreads > 64) nthreads = 64;
    for (int i = 0; i < nthreads; i++) {
        args[i] = (worker_args){i, sessions, actions};
        pthread_create(&th[i], NULL, worker, &args[i]);
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NSHARED; i++) stepkit_session_free(atomic_load(&shared[i]));
    for (int i = 0; i < NTASKS; i++) stepkit_task_free(tasks[i]);
    printf("stress: %d threads, %d sessions, %ld calls (%ld ok), %ld events, %ld re-entrant calls from callbacks, %ld restores, %ld failed checks\n",
           nthreads, nthreads * sessions + NSHARED, (long)calls, (long)ok_calls, (long)events, (long)reentries, (long)restores, (long)failures);
    return failures ? 1 : 0;
}
