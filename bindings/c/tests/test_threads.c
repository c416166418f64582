/*
 * test_threads.c — one compiled task shared by several threads, each running its own sessions;
 * stepkit_last_error() per thread; one session used from two threads, one call at a time.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "check.h"

enum { THREADS = 4, RUNS = 100 };

struct worker {
    stepkit_task *task;
    pthread_barrier_t *barrier;
    int index;
    int walks;     /* completed walks */
    int failures;  /* anything unexpected */
};

/* The thread's own failing call: each thread fails with a different status, then all threads
 * wait at the barrier, then each checks that stepkit_last_error() still describes its own. */
static int own_error(struct worker *worker)
{
    static const char *const codes[] = {"EPARSE", "EDEFINITION", "EINVAL", "ESTATE"};
    static const int statuses[] = {STEPKIT_EPARSE, STEPKIT_EDEFINITION, STEPKIT_EINVAL, STEPKIT_ESTATE};
    int which = worker->index % 4;
    stepkit_task *task = NULL;
    stepkit_session *session = NULL;
    char *out = NULL;
    int rc = STEPKIT_OK;
    const char *text;
    json_t *error;
    int ok;

    switch (which) {
    case 0:
        rc = stepkit_task_compile("{", &task);
        break;
    case 1:
        rc = stepkit_task_compile("{\"identifier\": \"x\", \"steps\": []}", &task);
        break;
    case 2:
        rc = stepkit_session_open(worker->task, "{\"bogus\": true}", &session);
        break;
    default:
        /* (A failure to open leaves rc at STEPKIT_OK: reported below, after the barriers.) */
        if (stepkit_session_open(worker->task, NULL, &session) == STEPKIT_OK)
            rc = stepkit_session_go_backward(session, &out);
        break;
    }
    pthread_barrier_wait(worker->barrier);
    text = stepkit_last_error();
    error = text ? json_loads(text, 0, NULL) : NULL;
    ok = rc == statuses[which] && error &&
         json_integer_value(json_object_get(error, "status")) == statuses[which] &&
         strcmp(json_string_value(json_object_get(error, "code")) ? json_string_value(json_object_get(error, "code")) : "",
                codes[which]) == 0;
    json_decref(error);
    stepkit_session_free(session);
    stepkit_task_free(task);
    pthread_barrier_wait(worker->barrier);
    return ok;
}

static void *work(void *argument)
{
    struct worker *worker = argument;
    int run;

    /* No call has failed on this new thread yet. */
    if (stepkit_last_error() != NULL)
        worker->failures++;
    if (!own_error(worker))
        worker->failures++;

    for (run = 0; run < RUNS; run++) {
        stepkit_session *session = NULL;
        char name[64];
        char expected[64];
        char *out = NULL;
        json_t *result;
        json_t *results;
        json_t *name_step;
        const char *answer;

        if (stepkit_session_open(worker->task, NULL, &session) != STEPKIT_OK) {
            worker->failures++;
            continue;
        }
        sprintf(name, "\"thread %d run %d\"", worker->index, run);
        sprintf(expected, "thread %d run %d", worker->index, run);
        if (walk_survey(session, name) != 0) {
            worker->failures++;
            stepkit_session_free(session);
            continue;
        }
        if (stepkit_session_result(session, &out) != STEPKIT_OK || !out) {
            worker->failures++;
            stepkit_session_free(session);
            continue;
        }
        result = json_loads(out, 0, NULL);
        results = json_object_get(result, "results");
        name_step = json_array_get(results, 4);
        answer = json_string_value(
            json_object_get(json_array_get(json_object_get(name_step, "results"), 0), "answer"));
        if (json_array_size(results) == 6 && answer && strcmp(answer, expected) == 0)
            worker->walks++;
        else
            worker->failures++;
        json_decref(result);
        stepkit_string_free(out);
        stepkit_session_free(session);
    }
    return NULL;
}

static void test_threads_share_a_task(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    pthread_barrier_t barrier;
    int i;

    pthread_barrier_init(&barrier, NULL, THREADS);
    for (i = 0; i < THREADS; i++) {
        workers[i].task = task;
        workers[i].barrier = &barrier;
        workers[i].index = i;
        workers[i].walks = 0;
        workers[i].failures = 0;
        CHECK(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
    }
    for (i = 0; i < THREADS; i++)
        CHECK(pthread_join(threads[i], NULL) == 0);
    pthread_barrier_destroy(&barrier);
    for (i = 0; i < THREADS; i++) {
        CHECK(workers[i].failures == 0);
        CHECK(workers[i].walks == RUNS);
    }
    stepkit_task_free(task);
}

/* Two threads call into one session, one call at a time (the session's lock serializes them). */
struct sharer {
    stepkit_session *session;
    int index;
    int failures;
};

static void *share(void *argument)
{
    struct sharer *sharer = argument;
    int i;
    for (i = 0; i < 500; i++) {
        char *out = NULL;
        json_t *state;
        const char *answer = (i + sharer->index) % 2 ? "{\"age\": 30}" : "{\"notes\": \"n\"}";
        if (stepkit_session_set_answer(sharer->session, answer, &out) != STEPKIT_OK || !out) {
            sharer->failures++;
            continue;
        }
        stepkit_string_free(out);
        out = NULL;
        if (stepkit_session_state(sharer->session, &out) != STEPKIT_OK || !out) {
            sharer->failures++;
            continue;
        }
        state = json_loads(out, 0, NULL);
        if (!state || strcmp(json_string_value(json_object_get(json_object_get(state, "step"), "identifier"))
                                 ? json_string_value(json_object_get(json_object_get(state, "step"), "identifier"))
                                 : "",
                             "about") != 0)
            sharer->failures++;
        json_decref(state);
        stepkit_string_free(out);
    }
    return NULL;
}

static void test_threads_share_a_session(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    stepkit_session *session = open_ok(task, NULL);
    pthread_t threads[2];
    struct sharer sharers[2];
    json_t *state;
    char *out = NULL;
    int i;

    stepkit_task_free(task);
    /* Move to the form. */
    CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_OK);
    stepkit_string_free(out);
    CHECK_RC(stepkit_session_set_answer(session, "true", &out), STEPKIT_OK);
    stepkit_string_free(out);
    CHECK_RC(stepkit_session_go_forward(session, &out), STEPKIT_OK);
    stepkit_string_free(out);
    CHECK_RC(stepkit_session_skip(session, &out), STEPKIT_OK);
    stepkit_string_free(out);
    CHECK_STEP(session, "about");

    for (i = 0; i < 2; i++) {
        sharers[i].session = session;
        sharers[i].index = i;
        sharers[i].failures = 0;
        CHECK(pthread_create(&threads[i], NULL, share, &sharers[i]) == 0);
    }
    for (i = 0; i < 2; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK(sharers[i].failures == 0);
    }
    state = state_of(session);
    CHECK(json_integer_value(json_object_get(json_object_get(state, "answer"), "age")) == 30);
    CHECK_STR(json_str(json_object_get(state, "answer"), "notes"), "n");
    json_decref(state);
    stepkit_session_free(session);
}

/* stepkit_session_free() while another thread calls into the session: the running call finishes
 * safely, later calls get STEPKIT_EINVAL (stepkit.h, stepkit_session_free). */
struct racer {
    stepkit_session *session;
    pthread_mutex_t mutex;
    long calls;      /* successful calls so far */
    int finished;    /* the thread has stopped calling */
    int failures;    /* results other than OK and EINVAL, or OK after EINVAL */
};

static void *race(void *argument)
{
    struct racer *racer = argument;
    int refused = 0;
    long i;
    for (i = 0; i < 1000000 && !refused; i++) {
        char *out = NULL;
        int rc = stepkit_session_state(racer->session, &out);
        if (rc == STEPKIT_OK && out) {
            pthread_mutex_lock(&racer->mutex);
            racer->calls++;
            pthread_mutex_unlock(&racer->mutex);
        } else if (rc == STEPKIT_EINVAL && !out) {
            refused = 1;
        } else {
            racer->failures++;
            refused = 1;
        }
        stepkit_string_free(out);
    }
    if (!refused)
        racer->failures++; /* never saw the free */
    pthread_mutex_lock(&racer->mutex);
    racer->finished = 1;
    pthread_mutex_unlock(&racer->mutex);
    return NULL;
}

static void test_free_while_another_thread_calls(void)
{
    stepkit_task *task = compile_ok(SURVEY_TASK);
    struct racer racer;
    pthread_t thread;
    long calls = 0;
    int finished = 0;

    racer.session = open_ok(task, NULL);
    racer.calls = 0;
    racer.finished = 0;
    racer.failures = 0;
    pthread_mutex_init(&racer.mutex, NULL);
    CHECK(pthread_create(&thread, NULL, race, &racer) == 0);
    /* Free once the other thread is well into its calls. */
    while (calls < 200 && !finished) {
        pthread_mutex_lock(&racer.mutex);
        calls = racer.calls;
        finished = racer.finished;
        pthread_mutex_unlock(&racer.mutex);
    }
    CHECK(!finished); /* it was still calling when the session was freed */
    stepkit_session_free(racer.session);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(racer.failures == 0);
    pthread_mutex_destroy(&racer.mutex);
    stepkit_task_free(task);
}

int main(void)
{
    RUN(test_threads_share_a_task);
    RUN(test_threads_share_a_session);
    RUN(test_free_while_another_thread_calls);
    return check_report();
}
