/*
 * test_libcrypto.c — libstepkit.so loads OpenSSL's libcrypto only when a call first needs a
 * digest, and a process where it cannot be loaded gets STEPKIT_EIO "libcryptoUnavailable" from
 * exactly those calls, which change nothing.
 *
 *   test_libcrypto                 libcrypto is not in the process after loading StepKit,
 *                                  compiling, opening and walking; it is after the first save;
 *                                  save and restore round-trip.
 *   test_libcrypto FAKE AUTOSAVE   FAKE, a library without libcrypto's functions whose soname is
 *                                  libcrypto's, is loaded first (RTLD_GLOBAL), so the dynamic
 *                                  loader hands it to StepKit for the soname: save, restore,
 *                                  task info (its fingerprint) and an autosave at AUTOSAVE (a
 *                                  path that must not exist) fail with "libcryptoUnavailable";
 *                                  the session and the file system are as before, and
 *                                  everything else works.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include "check.h"

/* Counts the loaded objects whose file name contains "libcrypto". */
static int count_libcrypto(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libcrypto"))
        ++*(int *)data;
    return 0;
}

static int libcrypto_loaded(void)
{
    int count = 0;
    dl_iterate_phdr(count_libcrypto, &count);
    return count;
}

static stepkit_session *walked_session(stepkit_task *task)
{
    stepkit_session *session = open_ok(task, NULL);
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_OK_OUT(stepkit_session_set_answer(session, "true", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_STEP(session, "mood");
    return session;
}

static void loaded_on_the_first_digest(void)
{
    stepkit_task *task;
    stepkit_session *session, *restored = NULL;
    char *saved = NULL, *before, *after;

    CHECK(libcrypto_loaded() == 0);
    task = compile_ok(SURVEY_TASK);
    session = walked_session(task);
    before = state_text(session);
    CHECK(libcrypto_loaded() == 0);

    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_OK);
    CHECK(libcrypto_loaded() == 1);
    CHECK(saved && strstr(saved, "\"algorithm\":\"SHA-256\"") != NULL);
    CHECK_RC(stepkit_session_restore(task, saved, NULL, &restored), STEPKIT_OK);
    drain_events(restored);
    after = state_text(restored);
    CHECK_STR(after, before);
    CHECK(libcrypto_loaded() == 1);

    stepkit_string_free(before);
    stepkit_string_free(after);
    stepkit_string_free(saved);
    stepkit_session_free(restored);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

/* Checks that the last error is STEPKIT_EIO "libcryptoUnavailable", saying why. */
static void check_unavailable(void)
{
    json_t *error = check_last_error(STEPKIT_EIO, "EIO", NULL);
    json_t *problem = json_array_get(json_object_get(error, "errors"), 0);
    const char *message = json_str(error, "message");
    CHECK_STR(json_str(problem, "code"), "libcryptoUnavailable");
    CHECK(message && strstr(message, "could not be loaded") && strstr(message, "lacks SHA256"));
    json_decref(error);
}

static const char *fake_path;
static const char *autosave_path;

static void unavailable_fails_only_the_calls_that_need_it(void)
{
    stepkit_task *task;
    stepkit_session *session, *other = SENTINEL;
    char *saved = SENTINEL, *before, *after, *options;
    struct stat st;
    static const char damaged_but_formed[] =
        "{\"format\":\"stepkit-restoration\",\"version\":1,\"task\":{},"
        "\"integrity\":{\"algorithm\":\"SHA-256\",\"digest\":\"00\"}}";

    CHECK(dlopen(fake_path, RTLD_NOW | RTLD_GLOBAL) != NULL);
    task = compile_ok(SURVEY_TASK);
    session = walked_session(task);
    before = state_text(session);

    CHECK_RC(stepkit_session_save(session, &saved), STEPKIT_EIO);
    CHECK(saved == NULL);
    check_unavailable();
    after = state_text(session);
    CHECK_STR(after, before);
    stepkit_string_free(after);

    CHECK_RC(stepkit_session_restore(task, damaged_but_formed, NULL, &other), STEPKIT_EIO);
    CHECK(other == NULL);
    check_unavailable();

    saved = SENTINEL;
    CHECK_RC(stepkit_task_info(task, &saved), STEPKIT_EIO);
    CHECK(saved == NULL);
    check_unavailable();

    options = malloc(strlen(autosave_path) + 32);
    sprintf(options, "{\"autosave\": \"%s\"}", autosave_path);
    other = SENTINEL;
    CHECK_RC(stepkit_session_open(task, options, &other), STEPKIT_EIO);
    CHECK(other == NULL);
    check_unavailable();
    CHECK(stat(autosave_path, &st) != 0);
    free(options);

    /* Everything that needs no digest goes on. */
    CHECK_OK_OUT(stepkit_session_set_answer(session, "3", &out));
    CHECK_OK_OUT(stepkit_session_go_forward(session, &out));
    CHECK_STEP(session, "about");

    stepkit_string_free(before);
    stepkit_session_free(session);
    stepkit_task_free(task);
}

int main(int argc, char **argv)
{
    if (argc == 3) {
        fake_path = argv[1];
        autosave_path = argv[2];
        RUN(unavailable_fails_only_the_calls_that_need_it);
    } else {
        RUN(loaded_on_the_first_digest);
    }
    return check_report();
}
