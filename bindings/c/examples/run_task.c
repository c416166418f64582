/*
 * run_task — walks a StepKit task with prepared answers, through the C ABI.
 *
 *     run_task [-o OUTPUT_DIR] TASK.json ANSWERS.json
 *
 * ANSWERS.json is an object {"stepIdentifier": answer, "formStep": {"item": answer}, ...}; a
 * repeating section's steps are answered per instance, under the section's identifier:
 * {"section": [{"stepIdentifier": answer, ...}, ...]}, one object per instance in order (the
 * state's "instances" says which instance the participant is in). When the list holds more
 * instances than the section has, one is added (stepkit_session_add_instance) in its last
 * instance, so going forward walks it too.
 * The program compiles the task, opens a session and walks it: a step whose identifier is in the
 * answers gets that answer and goes forward; a step that is not in the answers is skipped when
 * the state says it may be (navigation.canSkip: an optional question or form); an active step (active, countdown, wait) is started and finished at once;
 * a step the host reports (the state's step says "reportedByHost": true: a signature, a table, ...)
 * gets its entry as the report, {"step": identifier, ...entry}, through stepkit_session_report;
 * any other step (instruction, completion, ...) goes forward. It prints each step's identifier as
 * it is presented, then the task result JSON, and exits 0 when the task finished "completed". On
 * any failure it prints the error JSON on stderr and exits 1.
 *
 * Recorders of active steps write their files under OUTPUT_DIR (the session option
 * "outputDirectory"); without -o, under a temporary directory that is removed at the end.
 *
 * Build: cc -std=c99 run_task.c $(pkg-config --cflags --libs stepkit jansson)
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, opendir */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stepkit.h"

/* More steps than any sane walk takes: a guard against a task that loops forever. */
#define MAX_STEPS 10000

static void print_error(const char *what)
{
    const char *error = stepkit_last_error();
    fprintf(stderr, "run_task: %s failed\n%s\n", what, error ? error : "{}");
}

/* Reads a whole file into a NUL-terminated buffer (free it), or NULL with a message. */
static char *read_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    char *text = NULL;
    size_t size = 0;
    size_t capacity = 0;
    size_t n;

    if (!file) {
        perror(path);
        return NULL;
    }
    do {
        if (capacity - size < 4096) {
            char *bigger;
            capacity = capacity ? capacity * 2 : 16384;
            bigger = realloc(text, capacity + 1);
            if (!bigger) {
                fprintf(stderr, "run_task: out of memory reading %s\n", path);
                free(text);
                fclose(file);
                return NULL;
            }
            text = bigger;
        }
        n = fread(text + size, 1, capacity - size, file);
        size += n;
    } while (n > 0);
    if (ferror(file)) {
        perror(path);
        free(text);
        fclose(file);
        return NULL;
    }
    fclose(file);
    text[size] = '\0';
    return text;
}

/* The state a call returned: `rc` is the call's status and `*out` its output (read only after
 * the call, as an argument to this function). The state parsed and the text freed; NULL after
 * printing the error (for a failed call, its error JSON). */
static json_t *take_state(int rc, char **out, const char *what)
{
    char *text = *out;
    json_t *state = NULL;
    json_error_t error;

    if (rc != STEPKIT_OK) {
        print_error(what);
        return NULL;
    }
    state = json_loads(text, 0, &error);
    if (!state || !json_is_object(state))
        fprintf(stderr, "run_task: the state %s returned is not a JSON object (%s): %s\n", what,
                error.text, text);
    stepkit_string_free(text);
    if (state && !json_is_object(state)) {
        json_decref(state);
        return NULL;
    }
    return state;
}

/* The repeating section the current step is in, from the state's "instances" (the entry that
 * lists its "steps"): its identifier in *name, or NULL. */
static const json_t *section_of(const json_t *state, const char *identifier, const char **name)
{
    const json_t *instances = json_object_get(state, "instances");
    const char *key;
    const json_t *entry;

    json_object_foreach((json_t *)instances, key, entry) {
        const json_t *steps = json_object_get(entry, "steps");
        size_t i;
        for (i = 0; i < json_array_size(steps); i++) {
            const char *step = json_string_value(json_array_get(steps, i));
            if (step && strcmp(step, identifier) == 0) {
                *name = key;
                return entry;
            }
        }
    }
    return NULL;
}

/* The answer for the current step: its entry, or in a repeating section the entry of the
 * instance the participant is in. */
static const json_t *answer_for(const json_t *state, const json_t *answers, const char *identifier)
{
    const char *name = NULL;
    const json_t *section = section_of(state, identifier, &name);
    const json_t *list = section ? json_object_get(answers, name) : NULL;

    if (json_is_array(list)) {
        json_int_t current = json_integer_value(json_object_get(section, "current"));
        return json_object_get(json_array_get(list, (size_t)current), identifier);
    }
    return json_object_get(answers, identifier);
}

/* In a repeating section's last instance while the answers list more instances: adds one
 * (without moving), so going forward from the last instance reaches it. Whatever step of the
 * instance comes first (a skip rule may pass over any). Returns 0, or -1 on failure. */
static int add_listed_instance(stepkit_session *session, const json_t *state, const json_t *answers, const char *identifier)
{
    const char *name = NULL;
    const json_t *section = section_of(state, identifier, &name);
    const json_t *list = section ? json_object_get(answers, name) : NULL;
    json_int_t count = json_integer_value(json_object_get(section, "count"));
    json_int_t current = json_integer_value(json_object_get(section, "current"));

    if (!json_is_array(list) || current != count - 1 || (json_int_t)json_array_size(list) <= count)
        return 0;
    if (stepkit_session_add_instance(session, name, NULL) != STEPKIT_OK) {
        print_error("stepkit_session_add_instance");
        return -1;
    }
    return 0;
}

/* Moves the session on from the current step: answer + forward, skip (when the state's
 * navigation.canSkip says it may), or forward. Returns the new state, or NULL on failure. */
static json_t *advance(stepkit_session *session, const json_t *state, const json_t *answers)
{
    const json_t *step = json_object_get(state, "step");
    const char *identifier = json_string_value(json_object_get(step, "identifier"));
    const json_t *answer = identifier ? answer_for(state, answers, identifier) : NULL;
    char *out = NULL;

    if (identifier && add_listed_instance(session, state, answers, identifier) != 0)
        return NULL;

    if (answer) {
        int reported = json_is_true(json_object_get(step, "reportedByHost"));
        json_t *report = reported && json_is_object(answer) ? json_deep_copy(answer) : NULL;
        char *answer_json;
        int rc;
        if (report)
            json_object_set_new(report, "step", json_string(identifier));
        answer_json = json_dumps(report ? report : answer, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(report);
        if (!answer_json) {
            fprintf(stderr, "run_task: cannot encode the answer for %s\n", identifier);
            return NULL;
        }
        /* Only the state after going forward is needed: no output for the answer. */
        rc = reported ? stepkit_session_report(session, answer_json, NULL) : stepkit_session_set_answer(session, answer_json, NULL);
        free(answer_json);
        if (rc != STEPKIT_OK) {
            print_error(reported ? "stepkit_session_report" : "stepkit_session_set_answer");
            return NULL;
        }
    } else if (json_is_true(json_object_get(json_object_get(state, "navigation"), "canSkip"))) {
        return take_state(stepkit_session_skip(session, &out), &out, "stepkit_session_skip");
    }
    return take_state(stepkit_session_go_forward(session, &out), &out, "stepkit_session_go_forward");
}

/* An active step (active, countdown, wait) that has not finished: the host's part is to start
 * it and say when it is done ("start", "resume", "finish"). Returns the new state, `state`
 * itself (with one more reference) when the step is not such a step, or NULL on failure. */
static json_t *drive_active_step(stepkit_session *session, json_t *state)
{
    const char *status = json_string_value(json_object_get(json_object_get(state, "active"), "status"));
    const char *op = NULL;
    char *out = NULL;

    if (!status || strcmp(status, "finished") == 0)
        return json_incref(state);
    if (strcmp(status, "prepared") == 0)
        op = "start";
    else if (strcmp(status, "suspended") == 0)
        op = "resume";
    else
        op = "finish";
    return take_state(stepkit_session_control(session, op, &out), &out, "stepkit_session_control");
}

/* Walks the session to its end, each move on the state the previous call returned; returns 0
 * when it finished "completed". */
static int walk(stepkit_session *session, const json_t *answers)
{
    int steps;
    char *printed = NULL; /* the identifier printed last, until the walk navigates */
    char *text = NULL;
    json_t *state = take_state(stepkit_session_state(session, &text), &text, "stepkit_session_state");

    for (steps = 0; state && steps < MAX_STEPS; steps++) {
        const json_t *step;
        const char *status;
        json_t *next;

        status = json_string_value(json_object_get(state, "status"));
        if (status && strcmp(status, "finished") == 0) {
            const char *reason = json_string_value(json_object_get(state, "finishReason"));
            int rc = reason && strcmp(reason, "completed") == 0 ? 0 : -1;
            if (rc != 0)
                fprintf(stderr, "run_task: the task finished \"%s\", not \"completed\"\n",
                        reason ? reason : "?");
            json_decref(state);
            free(printed);
            return rc;
        }
        step = json_object_get(state, "step");
        if (!json_is_object(step) || !json_is_string(json_object_get(step, "identifier"))) {
            fprintf(stderr, "run_task: the state has no current step\n");
            json_decref(state);
            free(printed);
            return -1;
        }
        /* Print each step as it is presented: once, even when an active step takes a few calls
         * (an active step that moves on by itself presents the next one). */
        {
            const char *identifier = json_string_value(json_object_get(step, "identifier"));
            if (!printed || strcmp(printed, identifier) != 0) {
                printf("%s\n", identifier);
                fflush(stdout);
                free(printed);
                printed = malloc(strlen(identifier) + 1);
                if (printed)
                    strcpy(printed, identifier);
            }
        }
        next = drive_active_step(session, state);
        if (next == state) {
            json_decref(next);
            next = advance(session, state, answers);
            free(printed);
            printed = NULL;
        }
        json_decref(state);
        state = next;
    }
    free(printed);
    if (state) {
        json_decref(state);
        fprintf(stderr, "run_task: still not finished after %d steps\n", MAX_STEPS);
    }
    return -1;
}

/* Removes a temporary output directory and the files in it. */
static void remove_directory(const char *path)
{
    DIR *directory = opendir(path);
    struct dirent *entry;
    if (directory) {
        while ((entry = readdir(directory)) != NULL) {
            char *file;
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            file = malloc(strlen(path) + strlen(entry->d_name) + 2);
            if (!file)
                break;
            sprintf(file, "%s/%s", path, entry->d_name);
            unlink(file);
            free(file);
        }
        closedir(directory);
    }
    rmdir(path);
}

int main(int argc, char **argv)
{
    const char *output_directory = NULL;
    char temporary_directory[] = "/tmp/run_task.XXXXXX";
    int temporary = 0;
    const char *task_path;
    const char *answers_path;
    char *task_json = NULL;
    char *options_json = NULL;
    json_t *answers = NULL;
    json_t *options = NULL;
    json_error_t error;
    stepkit_task *task = NULL;
    stepkit_session *session = NULL;
    char *result = NULL;
    int status = EXIT_FAILURE;

    if (argc == 5 && strcmp(argv[1], "-o") == 0) {
        output_directory = argv[2];
        task_path = argv[3];
        answers_path = argv[4];
    } else if (argc == 3) {
        task_path = argv[1];
        answers_path = argv[2];
    } else {
        fprintf(stderr, "usage: %s [-o OUTPUT_DIR] TASK.json ANSWERS.json\n",
                argc > 0 ? argv[0] : "run_task");
        return 2;
    }

    answers = json_load_file(answers_path, JSON_REJECT_DUPLICATES, &error);
    if (!answers) {
        fprintf(stderr, "%s:%d: %s\n", answers_path, error.line, error.text);
        goto done;
    }
    if (!json_is_object(answers)) {
        fprintf(stderr, "%s: the answers must be a JSON object\n", answers_path);
        goto done;
    }
    task_json = read_file(task_path);
    if (!task_json)
        goto done;

    if (!output_directory) {
        if (!mkdtemp(temporary_directory)) {
            perror("mkdtemp");
            goto done;
        }
        output_directory = temporary_directory;
        temporary = 1;
    }
    options = json_object();
    if (!options || json_object_set_new(options, "outputDirectory", json_string(output_directory)) != 0 ||
        !(options_json = json_dumps(options, JSON_COMPACT))) {
        fprintf(stderr, "run_task: cannot build the session options\n");
        goto done;
    }

    if (stepkit_task_compile(task_json, &task) != STEPKIT_OK) {
        print_error("stepkit_task_compile");
        goto done;
    }
    if (stepkit_session_open(task, options_json, &session) != STEPKIT_OK) {
        print_error("stepkit_session_open");
        goto done;
    }
    /* The session keeps the task alive. */
    stepkit_task_free(task);
    task = NULL;

    if (walk(session, answers) != 0)
        goto done;

    if (stepkit_session_result(session, &result) != STEPKIT_OK) {
        print_error("stepkit_session_result");
        goto done;
    }
    printf("%s\n", result);
    status = EXIT_SUCCESS;

done:
    stepkit_string_free(result);
    stepkit_session_free(session);
    stepkit_task_free(task);
    if (temporary)
        remove_directory(temporary_directory);
    free(options_json);
    json_decref(options);
    free(task_json);
    json_decref(answers);
    return status;
}
