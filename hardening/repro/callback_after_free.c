/* Reproducer (finding 1 in docs/reliability.md): an event callback that removes itself during a
 * delivery is called again, for the next event of the same call, after its free_user_data has
 * released the user data: a heap-use-after-free in the host. Build with -fsanitize=address:
 *   clang -g -fsanitize=address -I include hardening/repro/callback_after_free.c -o /tmp/cb \
 *     -L.build/debug -lstepkit -ljansson -Wl,-rpath,$PWD/.build/debug && /tmp/cb
 * Expected: "ok" (one call). Today: ASan heap-use-after-free in on_event. */
#include <stdio.h>
#include <stdlib.h>
#include "stepkit.h"

typedef struct { stepkit_session *s; int calls; } ctx;

static void on_event(const char *event, void *user) {
    ctx *c = user;              /* after free_user_data: freed memory */
    c->calls++;
    printf("event %d: %s\n", c->calls, event);
    stepkit_session_set_event_callback(c->s, NULL, NULL, NULL); /* removes itself: frees c */
}

int main(void) {
    stepkit_task *t = NULL;
    stepkit_session *s = NULL;
    if (stepkit_task_compile("{\"identifier\": \"t\", \"steps\": [{\"type\": \"instruction\", \"identifier\": \"a\"},"
                             "{\"type\": \"instruction\", \"identifier\": \"b\"}]}", &t) ||
        stepkit_session_open(t, NULL, &s)) { printf("setup failed: %s\n", stepkit_last_error()); return 2; }
    ctx *c = calloc(1, sizeof *c);
    c->s = s;
    stepkit_session_set_event_callback(s, on_event, c, free);
    stepkit_session_go_forward(s, NULL); /* produces several events */
    printf("ok\n");
    stepkit_session_free(s);
    stepkit_task_free(t);
    return 0;
}
