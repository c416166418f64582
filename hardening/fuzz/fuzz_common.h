/* Shared helpers of the StepKit fuzz targets (hardening/fuzz/). Not part of the library. */
#ifndef STEPKIT_FUZZ_COMMON_H
#define STEPKIT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "stepkit.h"

#ifndef STEPKIT_EXAMPLES_DIR
#define STEPKIT_EXAMPLES_DIR "examples/tasks"
#endif

static const char *const fuzz_task_names[] = {"headache", "daily-checkin", "health-survey",
                                              "intake", "medications", "short-walk"};
#define FUZZ_TASK_COUNT 6

/* An oracle failure: print and abort so libFuzzer keeps the input. */
#define FUZZ_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "FUZZ ORACLE FAILED (%s:%d): %s\n", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\nlast_error: %s\n", stepkit_last_error() ? stepkit_last_error() : "(null)"); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

static char *fuzz_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

static char *fuzz_example_text(const char *name) {
    const char *dir = getenv("STEPKIT_EXAMPLES");
    if (!dir) dir = STEPKIT_EXAMPLES_DIR;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    char *text = fuzz_read_file(path);
    if (!text) { fprintf(stderr, "cannot read %s\n", path); abort(); }
    return text;
}

static stepkit_task *fuzz_compile_example(const char *name) {
    char *text = fuzz_example_text(name);
    stepkit_task *task = NULL;
    int rc = stepkit_task_compile(text, &task);
    if (rc != STEPKIT_OK) { fprintf(stderr, "example %s does not compile: %s\n", name, stepkit_last_error()); abort(); }
    free(text);
    return task;
}

/* Copies fuzz bytes into a NUL-terminated string (an embedded NUL just ends it early). */
static char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* A documented status code. */
static int fuzz_known_status(int rc) { return rc <= 0 && rc >= STEPKIT_EINTERNAL; }

/* After a failing call: the error JSON is an object whose "status" is rc and whose code is named. */
static void fuzz_check_error(int rc) {
    const char *e = stepkit_last_error();
    FUZZ_CHECK(e != NULL, "no last_error after rc %d", rc);
    json_error_t err;
    json_t *j = json_loads(e, 0, &err);
    FUZZ_CHECK(j && json_is_object(j), "last_error is not a JSON object: %s", e);
    json_t *st = json_object_get(j, "status");
    FUZZ_CHECK(json_is_integer(st) && json_integer_value(st) == rc, "status %d != rc %d", (int)json_integer_value(st), rc);
    FUZZ_CHECK(json_is_string(json_object_get(j, "code")) && json_is_string(json_object_get(j, "message")),
               "error JSON lacks code/message: %s", e);
    FUZZ_CHECK(rc != STEPKIT_EINTERNAL, "EINTERNAL (a bug): %s", e);
    json_decref(j);
}

/* The output of a successful call must be JSON. */
static void fuzz_check_json(const char *out) {
    FUZZ_CHECK(out != NULL, "NULL output on success");
    json_error_t err;
    json_t *j = json_loads(out, JSON_DECODE_ANY, &err);
    FUZZ_CHECK(j != NULL, "output is not JSON (%s): %.200s", err.text, out);
    json_decref(j);
}

#endif
