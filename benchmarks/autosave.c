/*
 * autosave.c — what one call costs when a session autosaves, as its history grows (issue 11).
 *
 *   autosave DIR [VISITS...]   (default visits: 0 1000 2000 5000)
 *
 * A task of 10,001 question steps (integer answers). A session without autosave is walked
 * forward (set_answer + go_forward per step) until it holds VISITS visits, saved, and restored
 * with {"autosave": "DIR/bench.json"}; then, repeatedly, one call is timed on each:
 * stepkit_session_set_answer on the current step (out NULL, so no state is built: the figure is
 * the call and, on the restored session, its autosave). Beside them: stepkit_session_save of the
 * autosaving session (building the restoration data, which every autosave writes), and the
 * floor, what any crash-safe rewrite of the whole file must do: write the restoration data to a
 * new file, fsync it, rename it over the old one, fsync the directory.
 *
 * Prints one JSON line per visit count:
 *   {"figure":"autosave","visits":N,"bytes":B,"autosave":[s...],"plain":[s...],"floor":[s...],"save":[s...]}
 * benchmarks/run.py turns them into the table; `bash benchmarks/run` runs it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stepkit.h"

enum { STEPS = 10001, SAMPLES = 15 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(int rc, const char *what) {
    if (rc != STEPKIT_OK) {
        const char *error = stepkit_last_error();
        fprintf(stderr, "autosave bench: %s failed (%d): %.500s\n", what, rc, error ? error : "");
        exit(2);
    }
}

static char *task_text(void) {
    size_t cap = (size_t)STEPS * 256 + 64, len = 0;
    char *text = malloc(cap);
    if (!text) exit(2);
    len += (size_t)sprintf(text + len, "{\"identifier\":\"long\",\"steps\":[");
    for (int i = 0; i < STEPS; i++) {
        len += (size_t)sprintf(text + len, "%s{\"type\":\"question\",\"identifier\":\"q%d\",\"question\":\"Q%d\","
                               "\"answerFormat\":{\"type\":\"numeric\",\"style\":\"integer\",\"minimum\":0,\"maximum\":1000000}}",
                               i ? "," : "", i, i);
    }
    sprintf(text + len, "]}");
    return text;
}

/* Walks `session` forward until it has `visits` visits (it starts with one). */
static void walk(stepkit_session *session, int *visits, int target) {
    char answer[32];
    while (*visits < target) {
        sprintf(answer, "%d", *visits);
        check(stepkit_session_set_answer(session, answer, NULL), "set_answer");
        check(stepkit_session_go_forward(session, NULL), "go_forward");
        (*visits)++;
    }
}

static double time_call(stepkit_session *session, int i) {
    char answer[32];
    sprintf(answer, "%d", 500000 + i);
    double start = now();
    check(stepkit_session_set_answer(session, answer, NULL), "set_answer");
    return now() - start;
}

/* The floor: a crash-safe rewrite of `bytes` bytes beside `path`. */
static double time_floor(const char *directory, const char *data, size_t bytes) {
    char temporary[4096], target[4096];
    snprintf(temporary, sizeof temporary, "%s/floor.tmp", directory);
    snprintf(target, sizeof target, "%s/floor.json", directory);
    double start = now();
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, data, bytes) != (ssize_t)bytes || fsync(fd) != 0) exit(2);
    close(fd);
    if (rename(temporary, target) != 0) exit(2);
    int dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || fsync(dir) != 0) exit(2);
    close(dir);
    return now() - start;
}

static void print_array(const char *key, const double *v, int n) {
    printf(",\"%s\":[", key);
    for (int i = 0; i < n; i++) printf("%s%.9g", i ? "," : "", v[i]);
    printf("]");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: autosave DIR [VISITS...]\n");
        return 1;
    }
    const char *directory = argv[1];
    int counts[16] = {1, 1000, 2000, 5000}, ncounts = 4;
    if (argc > 2) {
        ncounts = 0;
        for (int i = 2; i < argc && ncounts < 16; i++) counts[ncounts++] = atoi(argv[i]);
    }
    char *text = task_text();
    stepkit_task *task = NULL;
    check(stepkit_task_compile(text, &task), "compile");
    free(text);
    char options[4200];
    snprintf(options, sizeof options, "{\"autosave\": \"%s/bench.json\"}", directory);
    /* The history is built without autosave (fast), then restored into an autosaving session. */
    stepkit_session *plain = NULL;
    check(stepkit_session_open(task, NULL, &plain), "open");
    int visits = 1;
    for (int c = 0; c < ncounts; c++) {
        int target = counts[c] < 1 ? 1 : counts[c];
        if (target >= STEPS) target = STEPS - 1;
        walk(plain, &visits, target);
        char *saved = NULL;
        check(stepkit_session_save(plain, &saved), "save");
        size_t bytes = strlen(saved);
        stepkit_session *saving = NULL;
        check(stepkit_session_restore(task, saved, options, &saving), "restore (autosave)");
        double a[SAMPLES], p[SAMPLES], f[SAMPLES], s[SAMPLES];
        for (int i = 0; i < SAMPLES; i++) {  /* interleaved, so load changes hit all alike */
            a[i] = time_call(saving, i);
            p[i] = time_call(plain, i);
            f[i] = time_floor(directory, saved, bytes);
            double start = now();
            char *out = NULL;
            check(stepkit_session_save(saving, &out), "save");
            s[i] = now() - start;
            stepkit_string_free(out);
        }
        stepkit_session_free(saving);
        stepkit_string_free(saved);
        printf("{\"figure\":\"autosave\",\"visits\":%d,\"bytes\":%zu", visits, bytes);
        print_array("autosave", a, SAMPLES);
        print_array("plain", p, SAMPLES);
        print_array("floor", f, SAMPLES);
        print_array("save", s, SAMPLES);
        printf("}\n");
        fflush(stdout);
    }
    stepkit_session_free(plain);
    stepkit_task_free(task);
    return 0;
}
