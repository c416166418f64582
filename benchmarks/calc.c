/*
 * calc.c — what calculations cost per step: a nine-item screener scored like the PHQ-9 (a total
 * of nine scores and a severity band by nested "if"s, shown by every step's state), walked with
 * set_answer + go_forward + state, against the same screener without calculations. Samples of the
 * two alternate in one process so machine noise falls on both alike.
 *
 * Usage: calc SECONDS   — prints one JSON line: {"figure": "calc", "task": "screener9",
 * "engine": [seconds per step with calculations], "floor": [seconds per step without], "steps"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stepkit.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The screener's JSON; with `calcs`, the calculations and every step listing them. */
static char *screener(int calcs)
{
    size_t cap = 16384, len = 0;
    char *s = malloc(cap);
    int n;
    const char *shown = calcs ? ", \"calculations\": [\"total\", \"severity\"]" : "";
    if (!s)
        exit(1);
    len += snprintf(s + len, cap - len, "{\"identifier\": \"screener9\", \"steps\": [");
    for (n = 1; n <= 9; n++)
        len += snprintf(s + len, cap - len,
                        "{\"type\": \"question\", \"identifier\": \"q%d\"%s, \"answerFormat\": {\"type\": \"textScale\","
                        " \"textChoices\": [{\"text\": \"0\", \"value\": 0, \"score\": 0}, {\"text\": \"1\", \"value\": 1, \"score\": 1},"
                        " {\"text\": \"2\", \"value\": 2, \"score\": 2}, {\"text\": \"3\", \"value\": 3, \"score\": 3}]}},",
                        n, shown);
    len += snprintf(s + len, cap - len, "{\"type\": \"completion\", \"identifier\": \"end\"%s}]", shown);
    if (calcs) {
        len += snprintf(s + len, cap - len, ", \"calculations\": {\"total\": {\"sum\": [");
        for (n = 1; n <= 9; n++)
            len += snprintf(s + len, cap - len, "%s{\"score\": \"q%d\"}", n > 1 ? ", " : "", n);
        len += snprintf(s + len, cap - len,
                        "]}, \"severity\": {\"if\": [{\"<=\": [{\"calc\": \"total\"}, 4]}, \"minimal\","
                        " {\"if\": [{\"<=\": [{\"calc\": \"total\"}, 9]}, \"mild\","
                        " {\"if\": [{\"<=\": [{\"calc\": \"total\"}, 14]}, \"moderate\","
                        " {\"if\": [{\"<=\": [{\"calc\": \"total\"}, 19]}, \"moderately severe\", \"severe\"]}]}]}]}}");
    }
    snprintf(s + len, cap - len, "}");
    return s;
}

/* One walk: open, then per question set_answer + go_forward + state. Returns the steps taken. */
static int walk(stepkit_task *task, int seed)
{
    stepkit_session *session = NULL;
    char *out = NULL;
    int n, steps = 0;
    if (stepkit_session_open(task, NULL, &session) != STEPKIT_OK)
        exit(1);
    for (n = 0; n < 9; n++) {
        char answer[8];
        snprintf(answer, sizeof answer, "[%d]", (n + seed) % 4);
        if (stepkit_session_set_answer(session, answer, &out) != STEPKIT_OK)
            exit(1);
        stepkit_string_free(out);
        if (stepkit_session_go_forward(session, &out) != STEPKIT_OK)
            exit(1);
        stepkit_string_free(out);
        if (stepkit_session_state(session, &out) != STEPKIT_OK)
            exit(1);
        stepkit_string_free(out);
        steps++;
    }
    stepkit_session_free(session);
    return steps;
}

int main(int argc, char **argv)
{
    double budget = argc > 1 ? atof(argv[1]) : 2.0;
    stepkit_task *tasks[2] = {NULL, NULL};
    char *text;
    double samples[2][200];
    int count = 0, which, steps = 9, i;
    double start = now_s();
    for (which = 0; which < 2; which++) {
        text = screener(which == 0);
        if (stepkit_task_compile(text, &tasks[which]) != STEPKIT_OK) {
            fprintf(stderr, "calc: %s\n", stepkit_last_error());
            return 1;
        }
        free(text);
    }
    while (count < 200 && (count < 9 || now_s() - start < budget)) {
        for (which = 0; which < 2; which++) {
            int walks = 0, taken = 0;
            double t0 = now_s();
            while (walks < 200) {
                taken += walk(tasks[which], walks);
                walks++;
            }
            samples[which][count] = (now_s() - t0) / taken;
        }
        count++;
    }
    printf("{\"figure\": \"calc\", \"task\": \"screener9\", \"steps\": %d, \"engine\": [", steps);
    for (i = 0; i < count; i++)
        printf("%s%.9g", i ? ", " : "", samples[0][i]);
    printf("], \"floor\": [");
    for (i = 0; i < count; i++)
        printf("%s%.9g", i ? ", " : "", samples[1][i]);
    printf("]}\n");
    stepkit_task_free(tasks[0]);
    stepkit_task_free(tasks[1]);
    return 0;
}
