/* choice_scaling: compiles one long choice list, for callgrind (issue 26, item 10).
 *
 *   choice_scaling task N      a textChoice question of N choices (stepkit_task_compile)
 *   choice_scaling fhir N      a choice item of N answerOptions (stepkit_task_compile_fhir)
 *   choice_scaling text task|fhir N    prints the definition instead (benchmarks/run times its
 *                                      compile against json_loads with `bench compile`)
 *
 * The definition is built in memory (before instrumentation starts), then compiled once with
 * callgrind's instrumentation switched on around the compile alone: under
 * `valgrind --tool=callgrind --instr-atstart=no` the count is the compile's instructions, which
 * repeat from run to run where a time would not. check_choice_scaling.sh compares N with 4N: a
 * compile linear in the choices costs about 4 times as much, a quadratic one 16 times.
 * Outside valgrind it just compiles and prints the seconds, for a quick look.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stepkit.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_ZERO_STATS
#endif

/* A growing string; every piece is short, so a fixed margin checks room once a piece. */
typedef struct { char *text; size_t length, capacity; } buffer;

static void put(buffer *b, const char *format, long i) {
    if (b->length + 256 > b->capacity) {
        b->capacity = b->capacity * 2 + 4096;
        b->text = realloc(b->text, b->capacity);
        if (!b->text) { perror("realloc"); exit(2); }
    }
    b->length += (size_t)snprintf(b->text + b->length, 256, format, i);
}

/* Values, texts and codes all differ, as in a real list (a code list, a drug list). */
static char *task_text(long n) {
    buffer b = {0};
    put(&b, "{\"identifier\":\"choices\",\"steps\":[{\"type\":\"question\",\"identifier\":\"q\",\"title\":\"Pick\","
            "\"answerFormat\":{\"type\":\"textChoice\",\"style\":\"singleChoice\",\"textChoices\":[", 0);
    for (long i = 0; i < n; i++) {
        if (i) put(&b, ",", 0);
        put(&b, "{\"text\":\"Choice %ld\",", i);
        put(&b, "\"value\":\"v%ld\"}", i);
    }
    put(&b, "]}}]}", 0);
    return b.text;
}

static char *fhir_text(long n) {
    buffer b = {0};
    put(&b, "{\"resourceType\":\"Questionnaire\",\"status\":\"active\",\"item\":[{\"linkId\":\"q\",\"text\":\"Pick\","
            "\"type\":\"choice\",\"answerOption\":[", 0);
    for (long i = 0; i < n; i++) {
        if (i) put(&b, ",", 0);
        put(&b, "{\"valueCoding\":{\"system\":\"http://example.org/codes\",\"code\":\"c%ld\",", i);
        put(&b, "\"display\":\"Answer %ld\"}}", i);
    }
    put(&b, "]}]}", 0);
    return b.text;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "text") && (!strcmp(argv[2], "task") || !strcmp(argv[2], "fhir"))) {
        char *text = strcmp(argv[2], "fhir") ? task_text(atol(argv[3])) : fhir_text(atol(argv[3]));
        fputs(text, stdout);
        free(text);
        return 0;
    }
    if (argc != 3 || (strcmp(argv[1], "task") && strcmp(argv[1], "fhir"))) {
        fprintf(stderr, "usage: choice_scaling task|fhir N, or choice_scaling text task|fhir N\n");
        return 2;
    }
    long n = atol(argv[2]);
    int fhir = !strcmp(argv[1], "fhir");
    char *text = fhir ? fhir_text(n) : task_text(n);
    stepkit_task *task = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    int status = fhir ? stepkit_task_compile_fhir(text, NULL, &task) : stepkit_task_compile(text, &task);
    CALLGRIND_STOP_INSTRUMENTATION;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (status != STEPKIT_OK) {
        fprintf(stderr, "compile failed (%d): %s\n", status, stepkit_last_error() ? stepkit_last_error() : "");
        return 1;
    }
    printf("{\"kind\":\"%s\",\"choices\":%ld,\"bytes\":%zu,\"seconds\":%.3f}\n", argv[1], n, strlen(text),
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    stepkit_task_free(task);
    free(text);
    return 0;
}
