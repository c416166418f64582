/* pywalk.c — the C side of the Python walk figures (benchmarks/bench_pywalk.py).
 *
 * Built as a shared object and loaded by the Python driver through ctypes, so the C walk and the
 * Python walk run in the same process on the same compiled task, their samples interleaved:
 * this machine's load moves both alike. The library's functions come in as pointers taken from
 * the binding's own handle on libstepkit.so (one copy of the library, one handle registry).
 *
 *   pywalk_run(api, task, answers, kinds, n, reps, read_states) -> seconds for `reps` walks
 *
 * A walk is: stepkit_session_open, then for each entry (kinds[i]: 0 no answer, 1 answer, 2 back)
 * stepkit_session_set_answer(answers[i]) when it has one and stepkit_session_go_forward (or
 * stepkit_session_go_backward), then stepkit_session_free. With read_states == 0 every call
 * passes out == NULL (no state is built); with read_states != 0 every call asks for its state
 * and parses it with jansson (json_loads, as the engine parses: JSON_REJECT_DUPLICATES), then
 * frees both: what a C host reading every state does. Returns a negative number on an error.
 */
#include <jansson.h>
#include <stddef.h>
#include <time.h>

typedef int (*open_fn)(void *task, const char *options, void **out);
typedef int (*answer_fn)(void *session, const char *answer, char **out);
typedef int (*move_fn)(void *session, char **out);
typedef void (*free_fn)(void *p);

typedef struct {
    open_fn open;
    answer_fn set_answer;
    move_fn go_forward;
    move_fn go_backward;
    free_fn session_free;
    free_fn string_free;
} pywalk_api;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parses and frees one state; 0 when it was JSON. */
static int read_state(const pywalk_api *api, char *text) {
    json_error_t error;
    json_t *state = json_loads(text, JSON_REJECT_DUPLICATES, &error);
    api->string_free(text);
    if (state == NULL) return -1;
    json_decref(state);
    return 0;
}

double pywalk_run(const pywalk_api *api, void *task, const char *const *answers, const int *kinds,
                  int n, int reps, int read_states) {
    double start = now();
    for (int r = 0; r < reps; r++) {
        void *session = NULL;
        if (api->open(task, NULL, &session) != 0) return -1;
        for (int i = 0; i < n; i++) {
            char *state = NULL;
            char **out = read_states ? &state : NULL;
            if (kinds[i] == 1) {
                if (api->set_answer(session, answers[i], out) != 0) return -2;
                if (read_states && read_state(api, state) != 0) return -3;
            }
            int rc = kinds[i] == 2 ? api->go_backward(session, out) : api->go_forward(session, out);
            if (rc != 0) return -4;
            if (read_states && read_state(api, state) != 0) return -3;
        }
        api->session_free(session);
    }
    return now() - start;
}
