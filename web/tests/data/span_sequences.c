/*
 * span_sequences.c — the spatial span sequences a C host is shown, for the browser's
 * same-seed test (web/tests/test_game_browser.py): opens TASK.json (one spatialSpanMemory step,
 * playSpeed 1) with the seed, and plays it on a manual clock, one game per letter of PLAN
 * (S: every tile right; F: a wrong first tap), printing each game's sequence as the state
 * gives it: "game K: T T T". Exit status 0, or 1 with a message on stderr.
 *
 * Usage: span_sequences TASK.json SEED PLAN
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stepkit.h"

static int64_t now_ms = 1767225600000LL; /* 2026-01-01T00:00:00.000Z */

static int64_t manual_clock(void *user_data)
{
    (void)user_data;
    return now_ms;
}

static char *read_all(const char *path)
{
    FILE *file = fopen(path, "rb");
    char *text;
    long size;
    if (!file || fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0 || fseek(file, 0, SEEK_SET) != 0)
        return NULL;
    text = malloc((size_t)size + 1);
    if (text && fread(text, 1, (size_t)size, file) != (size_t)size) {
        free(text);
        text = NULL;
    }
    if (text)
        text[size] = '\0';
    fclose(file);
    return text;
}

/* The integers of the array member `key` of the state's game (the first such member). */
static int int_array(const char *state, const char *key, int *out, int max)
{
    char quoted[64];
    const char *p;
    int n = 0;
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    p = strstr(state, quoted);
    if (!p || !(p = strchr(p, '[')))
        return -1;
    p++;
    while (n < max) {
        char *end;
        long value = strtol(p, &end, 10);
        if (end == p)
            break;
        out[n++] = (int)value;
        p = end;
        while (*p == ' ' || *p == ',')
            p++;
    }
    return n;
}

static int fail(const char *what)
{
    const char *error = stepkit_last_error();
    fprintf(stderr, "span_sequences: %s: %s\n", what, error ? error : "");
    return 1;
}

int main(int argc, char **argv)
{
    stepkit_task *task = NULL;
    stepkit_session *session = NULL;
    char options[64], input[64], *text, *state = NULL;
    size_t k;
    if (argc != 4) {
        fprintf(stderr, "usage: span_sequences TASK.json SEED PLAN\n");
        return 1;
    }
    if (!(text = read_all(argv[1])))
        return fprintf(stderr, "span_sequences: cannot read %s\n", argv[1]), 1;
    if (stepkit_task_compile(text, &task) != STEPKIT_OK)
        return fail("compile");
    free(text);
    snprintf(options, sizeof options, "{\"seed\": %s}", argv[2]);
    if (stepkit_session_open(task, options, &session) != STEPKIT_OK)
        return fail("open");
    if (stepkit_session_set_clock(session, manual_clock, NULL) != STEPKIT_OK)
        return fail("clock");
    for (k = 0; k < strlen(argv[3]); k++) {
        int sequence[64], n, i;
        if (stepkit_session_state(session, &state) != STEPKIT_OK)
            return fail("state");
        n = int_array(state, "sequence", sequence, 64);
        stepkit_string_free(state);
        if (n <= 0)
            return fprintf(stderr, "span_sequences: no game %zu\n", k + 1), 1;
        printf("game %zu:", k + 1);
        for (i = 0; i < n; i++)
            printf(" %d", sequence[i]);
        printf("\n");
        now_ms += 1000 * (n + 1); /* past tapsFrom: the game's start + span x playSpeed 1 s */
        for (i = 0; i < (argv[3][k] == 'S' ? n : 1); i++) {
            int target = argv[3][k] == 'S' ? sequence[i] : (sequence[0] == 0 ? 1 : 0);
            snprintf(input, sizeof input, "{\"type\": \"tap\", \"target\": %d}", target);
            now_ms += 100;
            if (stepkit_session_input(session, input, NULL) != STEPKIT_OK)
                return fail("input");
        }
    }
    stepkit_session_free(session);
    stepkit_task_free(task);
    return 0;
}
