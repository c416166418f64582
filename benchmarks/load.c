/*
 * load.c — library load and first calls, in a fresh process (benchmarks/run runs it several
 * times): dlopen(RTLD_NOW) of libstepkit.so, the first call (stepkit_version), the first compile
 * of a small task + open + state (first-use work inside the engine), and the same again warm;
 * then the first save (the first digest: the engine loads libcrypto for it) and a warm one.
 *
 *   load LIBSTEPKIT.so TASK.json
 *   load --empty LIBEMPTY.so        the floor: dlopen + first call (empty_version) of an empty
 *                                   Swift library built the same way (benchmarks/empty/)
 *
 * Prints one JSON line: {"figure": "load", "dlopen", "firstCall", "firstTask", "warmTask",
 * "firstSave", "warmSave"} (s),
 * or {"figure": "loadEmpty", "dlopen", "firstCall"}.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stepkit.h"
#include "../bindings/c/tests/read_file.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef int (*compile_fn)(const char *, stepkit_task **);
typedef int (*open_fn)(stepkit_task *, const char *, stepkit_session **);
typedef int (*state_fn)(stepkit_session *, char **);
typedef int (*save_fn)(stepkit_session *, char **);
typedef void (*sfree_fn)(stepkit_session *);
typedef void (*tfree_fn)(stepkit_task *);
typedef void (*strfree_fn)(char *);
typedef const char *(*version_fn)(void);

static int load_empty(const char *path) {
    double t0 = now();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    double t1 = now();
    if (!h) { fprintf(stderr, "load: %s\n", dlerror()); return 2; }
    version_fn version = (version_fn)dlsym(h, "empty_version");
    if (!version) { fprintf(stderr, "load: missing empty_version\n"); return 2; }
    double t2 = now();
    const char *v = version();
    double t3 = now();
    printf("{\"figure\":\"loadEmpty\",\"version\":\"%s\",\"dlopen\":%.9f,\"firstCall\":%.9f}\n", v, t1 - t0, t3 - t2);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--empty") == 0) return load_empty(argv[2]);
    if (argc < 3) { fprintf(stderr, "usage: load LIBSTEPKIT.so TASK.json\n"); return 1; }
    char *text = read_file(argv[2], NULL);
    if (!text) { perror(argv[2]); return 2; }

    double t0 = now();
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    double t1 = now();
    if (!h) { fprintf(stderr, "load: %s\n", dlerror()); return 2; }
    version_fn version = (version_fn)dlsym(h, "stepkit_version");
    compile_fn compile = (compile_fn)dlsym(h, "stepkit_task_compile");
    open_fn open_s = (open_fn)dlsym(h, "stepkit_session_open");
    state_fn state = (state_fn)dlsym(h, "stepkit_session_state");
    save_fn save = (save_fn)dlsym(h, "stepkit_session_save");
    sfree_fn sfree = (sfree_fn)dlsym(h, "stepkit_session_free");
    tfree_fn tfree = (tfree_fn)dlsym(h, "stepkit_task_free");
    strfree_fn strfree = (strfree_fn)dlsym(h, "stepkit_string_free");
    if (!version || !compile || !open_s || !state || !save || !sfree || !tfree || !strfree) {
        fprintf(stderr, "load: missing symbols\n");
        return 2;
    }
    double t2 = now();
    const char *v = version();
    double t3 = now();
    double times[2], saves[2];
    for (int round = 0; round < 2; round++) {
        double a = now();
        stepkit_task *task = NULL;
        stepkit_session *s = NULL;
        char *out = NULL;
        if (compile(text, &task) || open_s(task, NULL, &s) || state(s, &out)) {
            fprintf(stderr, "load: first task failed\n");
            return 2;
        }
        strfree(out);
        times[round] = now() - a;
        double b = now();
        if (save(s, &out)) {
            fprintf(stderr, "load: save failed\n");
            return 2;
        }
        saves[round] = now() - b;
        strfree(out);
        sfree(s);
        tfree(task);
    }
    printf("{\"figure\":\"load\",\"version\":\"%s\",\"dlopen\":%.9f,\"firstCall\":%.9f,"
           "\"firstTask\":%.9f,\"warmTask\":%.9f,\"firstSave\":%.9f,\"warmSave\":%.9f}\n",
           v, t1 - t0, t3 - t2, times[0], times[1], saves[0], saves[1]);
    free(text);
    return 0;
}
