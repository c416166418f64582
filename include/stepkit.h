/*
 * stepkit.h — the C ABI of StepKit, a headless engine for ResearchKit-style research tasks.
 *
 * A host compiles a task definition (JSON) once into an immutable stepkit_task, opens any number
 * of sessions on it, and walks each session step by step: it reads the session's state (the
 * step to present, its answer, what the buttons may do), sets answers, goes forward, back,
 * skips, finishes, and reads the task result. Every input and output is UTF-8 JSON text.
 *
 * CONVENTIONS
 *
 * Status codes. A fallible function returns STEPKIT_OK (0) or one of the negative STEPKIT_E*
 * codes below. On failure, stepkit_last_error() describes what went wrong, and the call has
 * changed nothing: a rejected call leaves a session exactly as it was.
 *
 * Autosave. A session opened with the "autosave" option writes its restoration data after every
 * call that changes it; such a call can also fail with STEPKIT_EIO, and then changes nothing
 * (recorder files included).
 *
 * Error JSON. stepkit_last_error() returns an object
 *     {"status": -4, "code": "EANSWER", "message": "Enter a whole number between 18 and 90.",
 *      "path": "age", "errors": [{"code": "outOfRange", "message": "...", "path": "age"}, ...]}
 * "status" is the returned code, "code" its name without the STEPKIT_ prefix, "message" a
 * sentence a host may show as it is (when a definition has several problems: "The task definition
 * has N problems; the first: ..."), "path" the place in the JSON argument that is at fault
 * ("steps[3].answerFormat.minimum"; "" for the document as a whole or when no JSON argument is at
 * fault). "errors" lists every problem found (a task definition reports all its problems at
 * once); "path" repeats the first one's. A problem about a form item (an item's answer refused,
 * a required item unanswered, an unknown item) also has "item": the item's identifier exactly as
 * the definition spells it ("path" quotes identifiers that are not plain names: ["/44250-9"]);
 * the top-level "item" repeats the first problem's when it has one.
 *
 * Ownership. Input strings are borrowed for the duration of the call and must be NUL-terminated
 * UTF-8. Output JSON is returned through a `char **out` argument: on success *out receives a
 * string allocated by the library that the caller frees with stepkit_string_free(); on failure
 * *out is set to NULL (when `out` itself is not NULL). The calls that change a session and
 * answer with its new state (set_answer, go_forward, go_backward, skip, finish, control, tick,
 * record) accept `out` == NULL when the caller does not want the state: it is then not built,
 * and the call's events still reach the event callback; with no callback set either, the call's
 * events are not built at all (nobody could see them). Handles are created by the library and
 * released with their *_free function; freeing NULL is a no-op.
 *
 * Threads. A stepkit_task is immutable and may be used from any number of threads at once.
 * Calls on one stepkit_session are serialized by the session's own lock, so a session may be
 * used from several threads, one call at a time. stepkit_last_error() is per thread.
 *
 * Lifetimes. A session keeps its task alive: stepkit_task_free() may be called while sessions
 * opened on the task are still in use; the task is released with its last session.
 *
 * Handles. The library keeps a registry of the handles it has given out. A call with a handle
 * that was already freed, or with a pointer that never was a handle of that kind, returns
 * STEPKIT_EINVAL instead of touching memory; freeing such a handle (a double free) is a no-op.
 * (A freed handle's address can be reused by a later handle; do not rely on this check to find
 * use-after-free bugs in a host, only to survive them.)
 *
 * Time. Dates in the output are ISO 8601 UTC with milliseconds ("2026-11-22T13:27:27.123Z").
 * The engine reads time from the session's clock: the system clock by default, or a host
 * function set with stepkit_session_set_clock().
 */
#ifndef STEPKIT_H
#define STEPKIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Versions
 */

/* The library version, as text and as a number (major * 1000000 + minor * 1000 + patch). The
 * repository's VERSION file is the source: CMake refuses to configure when these disagree with
 * it, and the engine returns these macros from stepkit_version() / stepkit_version_number(). */
#define STEPKIT_VERSION "0.1.0"
#define STEPKIT_VERSION_NUMBER 1000
/* The ABI version: the number in the soname (libstepkit.so.0). It changes only when a function's
 * signature or meaning changes incompatibly. */
#define STEPKIT_ABI_VERSION 0

/* The version of the library actually loaded: a static string such as "0.1.0". Never NULL.
 * Thread-safe. */
const char *stepkit_version(void);

/* STEPKIT_VERSION_NUMBER of the library actually loaded. Thread-safe. */
int stepkit_version_number(void);

/* ---------------------------------------------------------------------------------------------
 * Status codes and errors
 */

#define STEPKIT_OK 0
/* An argument is invalid: a NULL pointer, an unknown finish reason, bad session options. */
#define STEPKIT_EINVAL (-1)
/* A JSON argument is not valid JSON: malformed text, invalid UTF-8, duplicate object keys,
 * a \u0000 escape in a string, numbers out of range (1e400, or 1e-400: not zero, yet too
 * small for a double, so it would read as 0), NaN or Infinity, or trailing text after the
 * document. (Nesting deeper than a "maxDepth" limit, and strings longer than
 * "maxStringBytes", are refused before parsing with STEPKIT_EINVAL "tooDeep", "stringTooLong".) */
#define STEPKIT_EPARSE (-2)
/* A task definition is valid JSON but not a valid task; "errors" lists every problem. */
#define STEPKIT_EDEFINITION (-3)
/* An answer does not fit the current step's answer format; the message says why. */
#define STEPKIT_EANSWER (-4)
/* The call is not allowed in the session's current state (forward while a required answer is
 * missing, back on the first step, any navigation after the task finished). */
#define STEPKIT_ESTATE (-5)
/* Restoration data is damaged, of an unknown version or from another task. */
#define STEPKIT_ERESTORE (-6)
/* Reading or writing a file failed. Also "libcryptoUnavailable": OpenSSL's libcrypto could not
 * be loaded. StepKit does not link it; it loads it (dlopen, once per process, from the library's
 * own directory first, then by its soname libcrypto.so.3) the first time a call needs a SHA-256:
 * stepkit_session_save(), stepkit_session_restore(), a session with "autosave", a task's first
 * stepkit_task_info() (its fingerprint), and an autosave path or a recorder file whose name is
 * too long to spell out. Such a call then fails and
 * changes nothing (a recorder fails instead, as when its file cannot be written). The outcome
 * of the one attempt is kept: once it failed, later calls fail the same way. */
#define STEPKIT_EIO (-7)
/* A bug in StepKit. Please report it with the error JSON. */
#define STEPKIT_EINTERNAL (-8)

/* The name of a status code, without the STEPKIT_ prefix: "OK" for STEPKIT_OK, "EANSWER" for
 * STEPKIT_EANSWER, and so on: the same text as the error JSON's "code". Returns NULL for a
 * number that is not one of the status codes above. The string is static: never freed, valid
 * for the life of the process, the same pointer on every call. Thread-safe. Hosts (the C++
 * header, the Python binding) name statuses with it rather than keeping their own table. */
const char *stepkit_status_name(int status);

/* The error JSON of the last call that failed on the calling thread, or NULL if no call has failed
 * on this thread. The string is owned by the library and stays valid until the next failing call
 * on the same thread; successful calls do not change it. Do not free it. */
const char *stepkit_last_error(void);

/* Frees a string returned through a `char **out` argument. NULL is a no-op. Thread-safe. */
void stepkit_string_free(char *str);

/* ---------------------------------------------------------------------------------------------
 * Tasks
 */

typedef struct stepkit_task stepkit_task;

/* Parses and validates a task definition (the task format, v1: see docs/task-format.md) and
 * compiles it into an immutable task.
 *
 * On success returns STEPKIT_OK and stores a new handle in *out_task, to be released with
 * stepkit_task_free(). On failure stores NULL in *out_task and returns STEPKIT_EINVAL (a NULL
 * argument, or past a default limit: see stepkit_task_compile_with_options()), STEPKIT_EPARSE
 * (not JSON) or STEPKIT_EDEFINITION (every problem of the definition,
 * each with its path, in the error JSON's "errors"). Thread-safe. */
int stepkit_task_compile(const char *task_json, stepkit_task **out_task);

/* Like stepkit_task_compile(), with options (NULL: the defaults):
 *     {"limits": {"maxDefinitionBytes": 33554432, "maxDepth": 64, "maxStringBytes": 1048576,
 *                 "maxSteps": 200000}}
 * Past a limit, STEPKIT_EINVAL (codes "tooLarge", "tooDeep", "stringTooLong") or
 * STEPKIT_EDEFINITION ("tooManySteps"): a hostile definition cannot exhaust memory or the stack.
 * Compiling takes about 13 to 25 times the definition's size at its peak (about 450 MiB at the
 * default size limit): raise the limits only as far as the host's memory allows.
 * Size, depth and string lengths are checked in one pass over the text before anything is
 * parsed; the options text itself is read within the defaults above. "maxDepth" may be set up to 256: every recursive walk of the engine then still fits a
 * 256 KiB thread stack. A regular expression ("validationRegularExpression", "matches") that
 * PCRE2 cannot compile, longer than 4096 bytes or nesting parentheses past 64 levels is a
 * definition error ("invalidRegularExpression"). Thread-safe. */
int stepkit_task_compile_with_options(const char *task_json, const char *options_json,
                                      stepkit_task **out_task);

/* Imports a FHIR R4 Questionnaire (JSON) as a task (docs/fhir.md has the mapping, item by item
 * and extension by extension). The Questionnaire is translated into a task definition in the
 * task format, which is then compiled as stepkit_task_compile_with_options() compiles one; the
 * task remembers the Questionnaire's shape, so its sessions can export their answers as a
 * QuestionnaireResponse (stepkit_session_result_fhir()). What the translation leaves out (an
 * attachment item, an external value set, a FHIRPath expression, an unknown extension, a
 * condition that cannot hold) is listed in the import report (stepkit_task_translate_fhir()).
 * An item whose condition cannot be evaluated is declined: left out with the items under it and
 * reported, never shown as if it had no condition.
 *
 * `options_json` may be NULL or {"strict": false, "requiredAnswersChecked": "atCompletion",
 * "valueSets": {...}, "limits": {...}}. "valueSets" maps a value set's canonical URL to its
 * concepts, [{"system": S, "code": C, "display": D}, ...] (code required), for answerValueSet
 * questions whose value set is not contained (without it such a question is declined); a
 * malformed one is STEPKIT_EINVAL with every problem and its path. "requiredAnswersChecked"
 * is the translated task's (FHIR's rule by default: a participant moves freely and only
 * completing needs every required answer; "perStep" keeps them on a step until its required
 * answers are given); the limits are those of
 * stepkit_task_compile_with_options(), applied to the Questionnaire's text, except that
 * "maxDepth" is 128 unless given: 32 levels of items take 65 levels of JSON, and their content
 * more, so every Questionnaire within the 32-level limit below reads. With "strict": true
 * any report entry is an error: STEPKIT_EDEFINITION with one problem per entry.
 *
 * On success returns STEPKIT_OK and stores a new handle in *out_task (release it with
 * stepkit_task_free()). On failure stores NULL in *out_task and returns STEPKIT_EINVAL (a NULL
 * argument, bad options, past a limit), STEPKIT_EPARSE (not JSON) or STEPKIT_EDEFINITION: not a
 * Questionnaire ("notAQuestionnaire"), an item without linkId ("missingLinkId"), a linkId used
 * twice ("duplicateLinkId"), an enableWhen naming no item ("unknownQuestion"), an unknown
 * operator ("invalidOperator"), an answerOption or initial value whose type contradicts the
 * item's ("answerTypeMismatch"), an unknown item type, items nested past 32 levels ("tooDeep"),
 * nothing to present ("nothingToAsk"): every problem at once, each with its FHIR path
 * ("item[2].item[0].enableWhen[1].question"). Thread-safe. */
int stepkit_task_compile_fhir(const char *questionnaire_json, const char *options_json,
                              stepkit_task **out_task);

/* Translates a FHIR R4 Questionnaire as stepkit_task_compile_fhir() does (same options, same
 * errors) and stores in *out {"task": {...the task definition...}, "report": [{"linkId": "...",
 * "path": "item[1].extension[0]", "code": "unsupportedExtension", "reason": "..."}]}: the
 * definition compiles with stepkit_task_compile() to the same task (without the export's
 * layout), and the report lists in document order, pass by pass, what was not translated as
 * written ("linkId" is "" for the Questionnaire itself). Output owned by the caller
 * (stepkit_string_free); *out is NULL on failure. Thread-safe. */
int stepkit_task_translate_fhir(const char *questionnaire_json, const char *options_json, char **out);

/* Describes a compiled task: {"identifier": "...", "fingerprint": "...", "stepCount": N,
 * "steps": [{"identifier": "...", "type": "question", "displayTitle": "...", "isActive": false},
 * ...] ("displayTitle" and "isActive" as in the state's "step"; an active, countdown or wait
 * step also has its effective "stepDuration" in seconds, defaults included), "sections":
 * [{"identifier", "steps": [...]}], "branching": bool (whether the task has any rules),
 * "requestedPermissions": ["location", "microphone", "motion", "health"]: what the task's
 * recorders need (ResearchKit's requestedPermissions), so a host can ask before starting,
 * "recorders": [...], "calculations": [{"name", "type" (number | string | boolean | date |
 * dateTime | time | choice | any), "dependsOn": {"steps": [step identifiers read],
 * "calculations": [names read]}}] (docs/expressions.md)}; a task that declares languages also
 * has "defaultLanguage" and "languages" (the default first; see "Languages" below).
 *
 * "fingerprint" is the lower-case hexadecimal SHA-256 of the definition's canonical form (keys
 * sorted by their UTF-8 bytes, whole numbers written as integers, no whitespace): the value
 * restoration data names the task by ("task": {"fingerprint"} in stepkit_session_save()'s
 * output), so a host can tell which stored version of a task a saved run belongs to, or that
 * two texts define the same task, without opening a session. A FHIR import's is that of its
 * translated definition (stepkit_task_translate_fhir()).
 *
 * "recorders" lists every recorder the task can run, empty when it records nothing (a host
 * without sensors refuses a task whose list is not empty): first each active step's, in step
 * order and in the order of its "recorderConfigurations", as {"identifier", "type",
 * "permission", "step": the step that runs it}; then each async action's, in the order of
 * "asyncActions", as {"identifier", "type", "permission", "startStep": the step it starts at,
 * "stopStep": the step after which it stops, or null (it records until the task ends)}.
 * "permission" is the entry of "requestedPermissions" the recorder needs, null for "touch" and
 * "custom".
 *
 * Taking the fingerprint is the only part of this call that needs OpenSSL's libcrypto, which
 * is loaded on first use as for stepkit_session_save(); the fingerprint is worked out on a
 * task's first call and kept. Where libcrypto cannot be loaded, the call fails as a save does:
 * STEPKIT_EIO with the problem "libcryptoUnavailable", *out NULL.
 *
 * Output owned by the caller (stepkit_string_free). Returns STEPKIT_EINVAL if `task` or `out`
 * is NULL or `task` is not a live task. Thread-safe. */
int stepkit_task_info(const stepkit_task *task, char **out);

/* The task's rule graph: every move navigation can make, as the engine makes it, so that a
 * drawing made from it (`python -m stepkit graph`) shows nothing the engine would not do. Stores
 * in *out {"edges": [...]}: first {"from": null, "to": FIRST, "kind": "start"} (absent for a task
 * without steps), then for each step in order the moves leaving it, in the order its rule lists
 * them: {"from": STEP, "to": STEP or null (the end of the task), "kind": K, "rule": R, "branch":
 * B, "when": W, "section": S}, where K is "next" (no rule applies: the next step in order),
 * "direct", "branch" (with B, its index, and W, its condition as the definition wrote it),
 * "default" (a predicate rule's defaultDestination) or "otherwise" (a predicate rule without
 * one: the next step in order when no branch holds); R is the step or section whose rule gives
 * the move (absent for "next": a step's own rule, else that of the innermost section whose last
 * step it is), S the section a destination names (the move enters its first step; absent
 * otherwise). Skip rules add no edge of their own: a step passed over is left by its own
 * moves. A section passed over is left by its own rule (else that of an enclosing section ending
 * with it, else to the step after it), whatever rule its last step has: those moves are listed
 * as leaving the section's first step (where navigation enters it), with "passedOver": SECTION,
 * after that step's own moves. A repeating section that may have no instance ("minCount" 0: its
 * "count" 0 or unanswered) is passed over the same way, its moves listed with "passedOver": S,
 * "by": "noInstances", "minCount": 0, "maxCount": M and "count": C (the count as the definition
 * wrote it), after those of its skip rule if it has one. A repeating section's loop is an edge from its last step back to
 * its first, after that step's own moves: {"from": LAST, "to": FIRST, "kind": "nextInstance",
 * "section": S, "minCount": N, "maxCount": M} (going forward from an instance that is not the
 * last; M the most instances there may be). The output grows with the
 * task (one to a few edges a step), which is why stepkit_task_info does not carry it.
 *
 * Output owned by the caller (stepkit_string_free). Returns STEPKIT_EINVAL if `task` or `out`
 * is NULL or `task` is not a live task (*out is then NULL). Thread-safe: a task is immutable. */
int stepkit_task_graph(const stepkit_task *task, char **out);

/* Checks a compiled task for what compiles but is probably wrong (docs/checker.md): steps no path
 * can reach, loops with no way out, branches that can never be taken (a predicate that
 * contradicts itself, a branch shadowed by an earlier one that always matches), predicates that
 * read a step that cannot have been answered yet when the rule runs, paths that end before a
 * completion step, required questions hidden on every path, duplicate texts that look like
 * copy-paste mistakes. Stores in *out {"problems": [{"severity": "error" | "warning" | "info",
 * "code": "...", "message": "...", "path": "navigationRules.symptom.branches[1]"}],
 * "errors": N, "warnings": N}. Output owned by the caller. Returns STEPKIT_EINVAL if `task` or
 * `out` is NULL or not live. Thread-safe. */
int stepkit_task_check(const stepkit_task *task, char **out);

/* Releases the caller's reference to a task. Sessions opened on it keep it alive until they are
 * freed. NULL, and a handle that is not live, are no-ops. Thread-safe. */
void stepkit_task_free(stepkit_task *task);

/* ---------------------------------------------------------------------------------------------
 * Sessions
 */

typedef struct stepkit_session stepkit_session;

/* Opens a session: one run of the task, positioned on its first step (or, when skip rules pass
 * over every step, already finished with reason "completed").
 *
 * `options_json` may be NULL (all defaults) or an object with these keys, all optional:
 *     "taskRunUUID": "…"   the run's UUID (8-4-4-4-12 hex digits, written back in upper case
 *                          as NSUUID writes it); default: a random v4 UUID.
 *     "additionalTaskResults": [task results]   results of other runs that predicates may read
 *                          through {"task": T, "step": S, "item": I} selectors.
 *     "integrityKey": "…"  a secret: restoration data is then signed with HMAC-SHA256 under it
 *                          (and can be restored only with the same key); default: SHA-256.
 *     "autosave": "path"   after every call that changes the session (and at open), the
 *                          change is saved to this file, fsynced before the call returns. The
 *                          file is a journal: first the restoration data as
 *                          stepkit_session_save() writes it (the snapshot, on one line), then one
 *                          line per call since, {"journal": ALGORITHM, "digest": D, "change":
 *                          {...}}, the call's change to the document, its digest chained to the
 *                          snapshot's and the previous record's (HMAC-SHA256 under
 *                          "integrityKey"). Hosts restore it as it is: stepkit_session_restore()
 *                          accepts the file's whole content, replays the records onto the
 *                          snapshot and checks the result as any restoration data; a last line
 *                          without its newline (an append a crash cut short) is ignored, a whole
 *                          line that breaks the chain (changed, removed, moved) refuses the data
 *                          (STEPKIT_ERESTORE "integrityCheckFailed"). Right after open, restore
 *                          and each compaction the file is exactly stepkit_session_save()'s
 *                          text; once the records outgrow the snapshot (and 64 KiB) the whole
 *                          file is written again as a new snapshot, atomically: a new temporary
 *                          file beside it, ".<name>.stepkit-tmp-<12 random characters>", created
 *                          exclusively (O_EXCL | O_NOFOLLOW: a link planted there is never
 *                          followed), fsync, rename over the file, fsync of the directory. So a
 *                          call costs about its own change, not the history (benchmarks/README.md,
 *                          "Autosave"). Killing the host at any moment loses no answer a call had
 *                          accepted: the file restores to the state after the last call whose
 *                          record is whole. A file that is no longer the one the session wrote
 *                          (removed, replaced) is written whole again, or the call fails.
 *                          A call whose autosave fails returns STEPKIT_EIO ("autosaveFailed")
 *                          and changes nothing, recorder files included (a record it could not
 *                          finish is cut off again). The session holds an
 *                          exclusive flock(2) on the file until it is freed: a second session
 *                          on the same file, in this process or another, is refused with
 *                          STEPKIT_EIO "autosaveInUse"; the lock dies with the process. The
 *                          path must not be a symbolic link, a directory or another non-regular
 *                          file (STEPKIT_EIO "autosaveNotAFile": the rename would replace a
 *                          link, not write where it points). Claiming the path removes the
 *                          temporary files of that name a crash left (those no live session
 *                          holds).
 *     "defaultResult": {task result}   ResearchKit's defaultResultSource: answers from this
 *                          result (e.g. last week's run) prefill steps with no answer yet, as
 *                          each step appears; answers that do not fit are ignored.
 *     "alwaysCheckForDefaultResult": bool   the default replaces an existing answer too.
 *     "outputDirectory": "dir"   where recorders write their files (active steps, async actions);
 *                          without it a recorder fails when it starts. See
 *                          stepkit_session_record() for the names and how files are written.
 *     "recorderFileSizeLimit": bytes   a recorder's file rolls over past this size (1 MiB).
 *     "continueOnRecorderFailure": bool   keep going when a recorder fails (default: the task
 *                          finishes with reason "failed", as in ResearchKit).
 *     "seed": 0 … 9007199254740991   the seed of the run's randomized order (docs/randomization.md;
 *                          open only: a restore takes it from the data). Without it a run of a
 *                          task that shuffles draws one and keeps it. Another type, or a number
 *                          out of range: STEPKIT_EINVAL, path "seed", no session.
 *     "limits": {"maxAnswerBytes": 1048576, "maxAnswerDepth": 32, "maxStringBytes": 1048576,
 *                "maxSampleBytes": 16777216, "maxSampleDepth": 32}   bounds on answers and
 *                          recorder samples: past them a call fails with STEPKIT_EINVAL
 *                          ("tooLarge", "tooDeep", "stringTooLong") before anything is parsed
 *                          or changed ("maxAnswerDepth", "maxSampleDepth": at most 256).
 *                          Options and restoration data are bounded at 256 MiB, 128 levels and
 *                          16 MiB strings, checked the same way before parsing.
 *     "personalData": {"dateOfBirth": "1980-05-01", "height": 172, ...}   values for answer
 *                          formats that name a "personalData" field (ResearchKit's HealthKit
 *                          formats: biologicalSex, bloodType, dateOfBirth, fitzpatrickSkinType,
 *                          wheelchairUse, height, bodyMass); they prefill like defaultResult.
 *     "language": "fr-CA"   the participant's language, a BCP-47 tag: the task's texts in it
 *                          and the engine's messages for the participant (see "Languages"
 *                          below; changed later with stepkit_session_set_language()). A tag
 *                          that is not BCP-47 is STEPKIT_EINVAL "invalidLanguage".
 *     "messages": {"fr": {message key: text, ...}}   the host's message catalogues, by
 *                          language tag, used before the shipped ones (see "Languages").
 *                          Each must be complete: STEPKIT_EINVAL "missingMessage",
 *                          "unknownMessage", "missingArgument", "unknownArgument" otherwise.
 *     "audit": false | {"enabled": bool, "actor": "...", "reason": "...", "recordRestore": bool}
 *                          the audit trail (see "The audit trail" below): false (or "enabled":
 *                          false) records nothing; "actor" and "reason" go into every event
 *                          until stepkit_session_set_audit_context() says otherwise; on
 *                          stepkit_session_restore(), "recordRestore": false records no
 *                          "restored" event (a server that restores for every request).
 * Unknown keys are refused (STEPKIT_EINVAL, with their path).
 *
 * On success returns STEPKIT_OK and stores a new handle in *out_session, released with
 * stepkit_session_free(). On failure stores NULL there and returns STEPKIT_EINVAL,
 * STEPKIT_EPARSE or STEPKIT_EIO (the autosave path is held by another session,
 * "autosaveInUse"; is not a regular file, "autosaveNotAFile"; or the first autosave failed,
 * "autosaveFailed"). The session holds a reference to `task`. Thread-safe. */
int stepkit_session_open(stepkit_task *task, const char *options_json,
                         stepkit_session **out_session);

/* Rebuilds a session from restoration data written by stepkit_session_save(), or from the whole
 * content of an autosave file (a snapshot and its journal of changes: see "autosave"): the
 * same step, state, back history, answers (on and off the path, drafts included), dates and
 * finish state. The clock is the system clock: set another with stepkit_session_set_clock().
 *
 * Restore is exact. A running active step goes on from exactly the elapsed time it was saved
 * with, counted from the restore (time the saved session spent not running, e.g. while the host
 * was down, does not count). A host that sets its own clock right after the restore, before any
 * call that changes the session, hands that clock to the restore: the step's time is then counted
 * from the new clock's time, as if the session had been restored on that clock, and whatever the
 * system clock read in between is forgotten. So restore + set_clock gives a state, and
 * restoration data, equal to the saved ones. (One exception: a clock set back behind the moment a
 * running step last started; the saved elapsed time is kept, but the restored step runs on from
 * the restore, so its nextDeadline can differ.)
 *
 * `options_json` takes the options of stepkit_session_open() except taskRunUUID and
 * additionalTaskResults (both come from the saved data), plus:
 *     "migrate": true      accept data saved on another version of the task (same identifier,
 *                          other fingerprint): answers whose step or item still exists and
 *                          still fit its answer format (and the bound of every "matches"
 *                          condition of the new version that reads them: what restore replays
 *                          of set_answer's decision) are kept, the others are listed in the
 *                          state's "restoreReport"; the run resumes at the first step that still
 *                          needs an answer. Every other option given here (outputDirectory,
 *                          recorder settings, limits, autosave, integrityKey, prefill) applies
 *                          to the migrated run; only the run's identity comes from the data.
 *
 * Refused with STEPKIT_ERESTORE, and no session, when the data is damaged or truncated
 * ("damaged"), not restoration data ("notRestorationData"), of an unknown format version
 * ("unsupportedVersion"), fails its integrity check or was signed with another key
 * ("integrityCheckFailed", "keyRequired", "integrityMissing"), is for another task
 * ("differentTask") or for another version of this task without "migrate" ("taskChanged"),
 * or names a recorder file outside the output directory ("damaged": a file name must be one
 * path component not starting with "."), or holds a randomized order its seed does not give
 * ("orderMismatch": each shuffled list's saved order is computed again from the saved seed,
 * docs/randomization.md). The seed comes from the data only; the time a run counted (its time
 * limits, "timeSpent") goes on from exactly what was saved, not counting the time in between.
 *
 * Well-formed, correctly signed data is also refused ("notAllowed", the message naming the first
 * problem and the path its "path" member points to) unless it describes a run the task allows:
 * the saved path is replayed through the task's navigation with each visit's answer as it was
 * when the visit was left, so every visit must be where navigation led from the one before
 * (navigation rules, skip rules, step modifiers, sections, the saved additionalTaskResults),
 * every visit left going forward must have had what stepkit_session_go_forward() requires (or
 * have been skipped where stepkit_session_skip() allows it), a run finished "completed" must end
 * where navigation ends, and the dates must follow each other (the run starts before its first
 * visit, each visit ends after it starts and before the next starts, the run ends after its
 * last visit; only the current visit is open, and only a finished run has an end date). Every
 * saved answer is checked again by the parts of stepkit_session_set_answer()'s decision that
 * depend only on the task and the answer: its answer format and the bound of every "matches"
 * condition that reads it ("damaged" when it fails, with the part's message). The other two
 * parts depended on the moment the answer was set, so they are not replayed on it: a form's
 * confirmations are checked where a visit was left going forward (as go_forward checks them;
 * a draft may hold one its original has since moved away from), and bounds given as expressions
 * were evaluated on the answers and the clock of that moment (a later change of an answer they
 * read, or "today" moving on, would refuse an answer rightly accepted). This holds keyed or not, and it does not make unkeyed data authentic: see
 * stepkit_session_save(). With "migrate" the saved answers are validated and the run is walked
 * again on the new version, so its path is the engine's own; its visits keep their saved dates
 * while they follow each other (a step asked again is a new visit, dated now).
 * STEPKIT_EINVAL for NULL arguments or bad options; STEPKIT_EIO for the autosave as in
 * stepkit_session_open(), checked after the data, and "libcryptoUnavailable" when libcrypto
 * cannot be loaded (see STEPKIT_EIO). Thread-safe. */
int stepkit_session_restore(stepkit_task *task, const char *saved_json, const char *options_json,
                            stepkit_session **out_session);

/* Restoration data for the session as it is now: versioned JSON (schema/restoration.schema.json)
 * naming the task's identifier and fingerprint (SHA-256 of the definition's canonical form: keys
 * sorted, whole numbers as integers, so a definition stored with its keys reordered or 10 written
 * 10.0 keeps its fingerprint), with the run's path, answers, dates and finish
 * state, and an integrity check (SHA-256, or HMAC-SHA256 with the session's integrityKey) over
 * the rest of the document. Allowed in any state, finished included. Output owned by the caller.
 * Returns STEPKIT_EINVAL on a NULL argument, STEPKIT_EIO "libcryptoUnavailable" when libcrypto
 * cannot be loaded (see STEPKIT_EIO).
 *
 * What the check gives: without an integrityKey, the SHA-256 detects damage (a truncated file,
 * a flipped byte), not authenticity: anyone who edits the data can compute it again, and
 * stepkit_session_restore() then accepts any run the task allows (another answer, another
 * date) - it refuses only runs the task does not allow ("notAllowed"). Data kept where others
 * can change it (by a client, on a participant's device, in a shared store) should be saved and
 * restored with an integrityKey that only the trusted side knows: HMAC-SHA256 then also shows
 * who wrote it. */
int stepkit_session_save(stepkit_session *session, char **out);

/* Releases a session. NULL, and a handle that is not live, are no-ops. A call already running on
 * the session on another thread finishes safely; calls made after this one get STEPKIT_EINVAL.
 * The autosave file is let go (another session may claim it) once no call uses the session. */
void stepkit_session_free(stepkit_session *session);

/* The session's state: what the host should present now, as JSON:
 *   {"status": "inProgress" | "finished",
 *    "finishReason": null | "completed" | "saved" | "discarded" | "failed" | "earlyTermination"
 *                    | "timedOut" (a time limit ran out),
 *    "taskIdentifier": "...", "taskRunUUID": "...",
 *    "step": {the current step's definition, with defaults filled in and step modifiers applied;
 *             answer-format bounds written as expressions replaced by their values now (left
 *             out when null), a step's "calculations" list as {"name": value}, and
 *             {{placeholders}} in its texts resolved (see docs/expressions.md, "Piping")}
 *            | null when finished. It also carries what a presenter needs, decided once in
 *            the engine so no host decides it: "displayTitle", what to call the step (its
 *            "title", else its "question", else its "text": the first that is not blank,
 *            without surrounding white space; else its identifier) and "isActive" (true for an
 *            active, countdown or wait step: see "Active steps"). "Defaults filled in":
 *            "optional"; an active step's effective
 *            "stepDuration" (a countdown's 5 s included), "shouldStartTimerAutomatically" and
 *            "shouldContinueOnFinish"; and in every "answerFormat" (a question's, each form
 *            item's) every setting the engine applies when the definition leaves it out:
 *            "showDontKnowButton" (and, when it is true, the "don't know" answer's label
 *            "customDontKnowButtonText", "I don't know"); boolean's "yesString" and
 *            "noString" ("Yes", "No"); a choice format's "style" ("singleChoice" for text scales and
 *            value pickers); a scale's "step"; a continuous scale's "maximumFractionDigits";
 *            height's and weight's "minimumValue", "maximumValue" and "unit" ("cm", "kg");
 *            age's "minimumAge", "maximumAge" and "unit" ("years"); ses's "minimum" (0) and
 *            "maximum" (9); timeInterval's "maximumInterval", "step" (minutes) and "unit" ("s");
 *            text's "maximumLength" (0: no limit) and "multipleLines"; confirmText's
 *            "maximumLength" and "errorMessage"; date's "style" and "minuteInterval";
 *            timeOfDay's "minuteInterval". A host needs no engine default of its own,
 *    "answer": the current answer: the draft the host set, or the one kept from an earlier visit;
 *              for a form an object {"item": answer} of the answered items ({} when none);
 *              null when none (or the step takes no answer),
 *    "visibleItems": for a form, the identifiers of the items to show now (an item's visibleWhen and
 *                    its section header's), else null,
 *    "problems": [{"code", "message", "path"}] why going forward is refused now ([] if it is not;
 *                a form item's problem also has "item", its identifier; a form's or the task's
 *                "validations" rule that holds gives code "validationFailed" and its message;
 *                with the task's "requiredAnswersChecked": "atCompletion", a missing required
 *                answer refuses only the move that would complete the task, which lists them all),
 *    "missingAnswers": [{"code": "answerRequired", "message", "path", "step", "item"}] every
 *                required answer missing on the steps presented so far, the current one
 *                included, in the order they were presented ("item" for a form item; "path"
 *                "<step>" or "<step>.<item>"); with "perStep" only the current step can have any,
 *    "navigation": {"canGoBack": bool, "canGoForward": bool,
 *                   "canSkip": bool (stepkit_session_skip() is allowed now: an optional step
 *                   that takes an answer; hosts read it rather than work it out),
 *                   "hasNextStep": bool (false: label the forward button "Done"),
 *                   "arrival": [how navigation reached this step: rules, branches, skip rules,
 *                               step modifiers; see docs/task-format.md]},
 *    "progress": {"current", "total" (along the path the current answers lead to),
 *                 "presented" (steps shown so far), "fewestRemaining",
 *                 "mostRemaining" (null when a loop makes it unbounded)},
 *    "active": the current active step's timer and recorders, or null (see "Active steps"),
 *    "taskSuspended": bool, "nextDeadline": ISO 8601 date when something next comes due, or null,
 *    "events": [events this call produced] (see "Active steps, time, recorders and events"),
 *    "restoreReport": null, or after a restore with "migrate": {"migrated": true,
 *                     "fromFingerprint": the saved task version's fingerprint,
 *                     "kept": [{"step", "item"}], "dropped": [{"step", "item", "reason"}]}
 *                     (kept while the session lives; not part of restoration data),
 *    "order": the current step's seeded order, or null when it shuffles nothing:
 *             {"choices": [values]} | {"items": [ids, null for a header], "itemChoices": {...}};
 *             the step's choices and items are presented in this order, and only the choices
 *             offered now (a choice's visibleWhen, a list's choicesFrom) are listed,
 *    "seed": the run's seed, or null,
 *    "timeLimits": null, or {"task": null | {"limit", "spent", "remaining" (seconds),
 *             "deadline" (ISO 8601)}, "step": null | {... , "onTimeLimit": "next" | "endTask"}}
 *             (docs/task-format.md, "Time limits"; nextDeadline includes the deadlines)}
 * Reading the state changes nothing: its "events" is always [] (events are handed out by the
 * calls that change the session, including those queued by stepkit_session_open()), and it
 * writes no autosave. Output owned by the caller. Returns STEPKIT_EINVAL on a NULL argument or a
 * handle that is not live. */
int stepkit_session_state(stepkit_session *session, char **out);

/* Validates an answer for the current step and keeps it as the step's draft answer.
 *
 * For a question step `answer_json` is the answer itself (see docs/task-format.md: true,
 * ["headache"], 42, "08:30", "2026-11-22", {"latitude": …}, {"dontKnow": true}); null clears it.
 * For a form step it is an object {"item": answer, ...}: the named items are set (null clears
 * one), the others keep their answers. An exclusive choice that is newly selected clears the
 * other choices; a choice newly selected next to an exclusive one clears the exclusive one.
 *
 * Whether the answer is accepted is one decision in four parts, each run once the ones before
 * it pass: the answer format (a form's items each by theirs); a form's "confirmText" item set by
 * this answer equals its original's answer, once the original has one ("confirmationMismatch");
 * every "matches" condition that reads the answer can match it within its bound; the bounds
 * given as expressions hold. Restore replays the first and the third (see
 * stepkit_session_restore()).
 *
 * On success stores the new state (as stepkit_session_state) in *out. On failure changes nothing
 * and returns STEPKIT_EINVAL (NULL argument), STEPKIT_EPARSE, STEPKIT_EANSWER (the message says
 * why, the path names the form item; "outOfRange" also for a bound given as an expression,
 * evaluated on the answers as they would be with this one; "patternTooComplex" when matching the text against a
 * "validationRegularExpression", or a "matches" condition that reads this answer, would pass the
 * bound on a match: see docs/task-format.md) or STEPKIT_ESTATE (the step takes no answer, or the
 * task has finished). */
int stepkit_session_set_answer(stepkit_session *session, const char *answer_json, char **out);

/* Leaves the current step for the one navigation leads to (navigation rules, skip rules); where
 * it leads to the end, finishes the task with reason "completed". Refused with STEPKIT_ESTATE
 * (and the reasons in the error JSON) while a required answer is missing, a form's answers do
 * not agree (a confirmation that differs), a form's "validations" rule holds (or, where going
 * forward would complete the task, a task "validations" rule: code "validationFailed") or an
 * active step has not finished. On success stores
 * the new state in *out. */
int stepkit_session_go_forward(stepkit_session *session, char **out);

/* Returns to the step visited before the current one. The current step's answers are kept to
 * prefill it if it is visited again, but leave the result. Refused with STEPKIT_ESTATE on the
 * first step or after the task finished. On success stores the new state in *out. */
int stepkit_session_go_backward(stepkit_session *session, char **out);

/* Skips an optional question or form step: the step's result records a null answer (its draft
 * is kept to prefill the step if it is visited again) and the session goes forward. Refused with
 * STEPKIT_ESTATE when the step is not optional or takes no answer. On success stores the new
 * state in *out. */
int stepkit_session_skip(stepkit_session *session, char **out);

/* Finishes the task with `reason`: "completed" (allowed only where going forward would complete
 * it: where navigation leads to the end, with the step's answers valid), "saved", "discarded",
 * "failed" or "earlyTermination". Every recorder stops, and an active step still running stops
 * with the run, whatever the reason: its time is what it ran until the finish, and restoration
 * data saved later says the same. STEPKIT_EINVAL for another reason,
 * STEPKIT_ESTATE when already finished or when "completed" is not allowed. On success stores the
 * new state in *out. */
int stepkit_session_finish(stepkit_session *session, const char *reason, char **out);

/* The task result so far (or final, once finished):
 *   {"identifier", "taskRunUUID", "startDate", "endDate", "results": [step results]}
 * with one step result {"identifier", "startDate", "endDate", "results": [question results]} per
 * visit on the path, the current step included (visits inside a section nest under a section
 * result of the same shape), and question results
 *   {"identifier", "type", "answer", "startDate", "endDate"} (+ "unit" for numeric answers)
 * where "type" is boolean | choice | scale | numeric | text | date | timeOfDay | timeInterval |
 * location | multipleComponent | ses and "answer" is null for an unanswered or skipped question.
 * A choice question whose selected choices carry a "coding" (choices imported from FHIR) also has
 * "codings": [{"system", "code", "display"}, ...], the selected ones' codings in answer order.
 * A task with "calculations" adds "calculations": {"name": value} (null when null), computed on
 * the path's answers (docs/expressions.md).
 * Output owned by the caller. Returns STEPKIT_EINVAL on a NULL argument. */
int stepkit_session_result(stepkit_session *session, char **out);

/* The session's answers as a FHIR R4 QuestionnaireResponse, for a session whose task was
 * imported with stepkit_task_compile_fhir(): {"resourceType": "QuestionnaireResponse",
 * "questionnaire": the Questionnaire's url (|version), else "Questionnaire/<id>", absent without
 * either; "status": "completed" (finished, reason "completed", which needs every required
 * answer), "in-progress" (not finished, or finished "saved" to resume) or "stopped" (finished
 * "discarded", "failed" or "earlyTermination"); "authored": the result's end date; "item": [...]} with items nested as the
 * Questionnaire's groups and answers typed as the items are (valueBoolean, valueDecimal,
 * valueInteger, valueDate, valueDateTime, valueTime, valueString, valueUri, valueQuantity,
 * valueCoding with the option's system, code and display; an open choice's typed text as
 * valueString). Items that are disabled (their conditions do not hold, their step is off the
 * path) or unanswered are absent, as are groups left empty; hidden and read-only items give
 * their initial answers where their conditions hold, calculated items (calculatedExpression in
 * the FHIRPath subset of docs/fhir.md, imported as calculations) their calculation's value. Output owned by the caller
 * (stepkit_string_free). Returns STEPKIT_EINVAL if an argument is NULL, the session is not live
 * or its task was not imported from FHIR ("notFHIR"). Thread-safe (reads under the session's
 * lock). */
int stepkit_session_result_fhir(stepkit_session *session, char **out);

/* A clock: returns the current time in milliseconds since 1970-01-01T00:00:00Z. */
typedef int64_t (*stepkit_clock_fn)(void *user_data);

/* Replaces the session's clock with `fn` (called with `user_data`, under the session's lock, on
 * the thread that called into the session: it must not call into the same session). NULL
 * restores the system clock. What the new clock re-dates depends on what has happened so far
 * ("happened": an answer, a navigation, an active-step operation, a sample, or a tick that
 * fired something; reads and a tick with nothing due are not):
 *   - a session opened with stepkit_session_open() on which nothing has happened starts over at
 *     the new clock's time: its start date, first step, an active step's timer and the queued
 *     events are dated anew, so a test or a replay can start the run at a time of its choosing;
 *   - the first clock set on a restored session on which nothing has happened since the restore
 *     takes the restore over (see stepkit_session_restore()): every saved date stays, and a
 *     running active step goes on from its saved elapsed time at the new clock's time;
 *   - otherwise a running active step keeps the time it has run and goes on on the new clock.
 * In every case the session's time never goes back before the run's latest date (its start, or
 * the current visit's start or end): a clock earlier than that reads as that date until it
 * catches up, so no visit is dated before the one it follows (restore would refuse such data,
 * "notAllowed").
 * Any int64 time is accepted (INT64_MIN, INT64_MAX, jumps back): arithmetic on times saturates,
 * a running step counts no time while the clock is behind the moment it last started or
 * resumed, and dates beyond years 0000-9999 are written as the nearest of those.
 * `user_data` is borrowed: it must stay valid while the clock is set. Returns STEPKIT_EINVAL if
 * `session` is NULL or not live, STEPKIT_EIO if the session autosaves and the write failed (the
 * clock is then unchanged). */
int stepkit_session_set_clock(stepkit_session *session, stepkit_clock_fn fn, void *user_data);

/* ---------------------------------------------------------------------------------------------
 * Active steps, time, recorders and events
 *
 * Active steps ("active", "countdown", "wait") run on the session's clock without threads: the
 * engine never sleeps. The state's "active" member says where the current active step is
 * ({"kind", "status": "prepared" | "running" | "suspended" | "finished", "duration", "elapsed",
 * "remaining", "recorders": [...]}) and "nextDeadline" when something next comes due (ISO 8601,
 * or null): a host sets one timer for it and calls stepkit_session_tick() then.
 *
 * Every call that changes the session and returns the state also lists, in its "events" member,
 * the events the call produced (and any queued since the last such call, e.g. by
 * stepkit_session_open()), in order, each
 * {"type": ..., "date": ..., ...}: stepWillAppear, stepDidChange, resultDidChange,
 * activeStepStarted, activeStepSuspended, activeStepResumed, activeStepFinished, speak
 * ({"kind": "spokenInstruction" | "countDown" | "halfway" | "finishedSpokenInstruction",
 * "text"}), playSound and vibrate ({"kind": "start" | "finish"}), recorderStarted
 * ({"recorder", "recorderType", "configuration"}: start the sensor), recorderStopped,
 * recorderFailed ({"recorder", "message", "samplesLost"}), taskSuspended, taskResumed,
 * choicesRemoved ({"step", "item"?, "values"}: selections no longer offered, removed from that
 * answer), timeLimitReached ({"scope": "task" | "step", "step", "action"}),
 * taskFinished ({"reason"}). The same events go to the event callback, if one is set.
 *
 * The result also has "timeSpent" (seconds counted: time saved away does not count) on the task
 * and on each step result, and, for a run with a seed, "randomization": {"seed", "orders":
 * {step: order as in the state}} for the shuffled steps on the path.
 */

/* Controls the current active step or the task: `op` is "start", "suspend", "resume" or "finish"
 * (the current active step; time while suspended does not count; finishing stops its recorders
 * and, when the step continues on finish, moves on), or "suspendTask" / "resumeTask"
 * (ResearchKit's task-level suspend: the active step is suspended with it, and nothing starts
 * until the task resumes). STEPKIT_EINVAL for an unknown op; STEPKIT_ESTATE when the op does not
 * apply now (the step is not active, already finished, the task is suspended or finished). On
 * success stores the new state in *out. */
int stepkit_session_control(stepkit_session *session, const char *op, char **out);

/* Deprecated: the name stepkit_session_control() had before the ABI settled on verbs. The same
 * function (same arguments, results and errors); kept, and exported, for one release. */
int stepkit_session_active(stepkit_session *session, const char *op, char **out);

/* Processes everything due at the clock's current time: spoken countdowns, the halfway prompt,
 * the end of the step, moving on when the step continues on finish, and the next step's
 * automatic start, and time limits that ran out (the step moves on, or the task ends "timedOut",
 * as the task says), each dated when it came due. With a manual clock, a 6-minute walk runs in
 * microseconds. Stores the new state (with its events and nextDeadline) in *out. Calling it
 * when nothing is due is harmless and changes nothing (a clock set afterwards still starts an
 * untouched run over). What came due before the step last started or resumed on this clock (after
 * a restore, or a clock jump) is dated at that moment; nothing is dated after the clock's time.
 * It is the only call that acts on time limits (and active-step marks): the others do not, so a
 * host calls it at "nextDeadline" and before passing on a participant's action
 * (docs/task-format.md, "Time limits"). */
int stepkit_session_tick(stepkit_session *session, char **out);

/* Hands samples to a running recorder: `samples_json` is a JSON object or an array of objects.
 * They are written under the session's "outputDirectory" as one JSON file per recorder and run,
 * {"items": [...]}, valid JSON after every call, rolling over to a new file past
 * "recorderFileSizeLimit" bytes (default 1 MiB); the files appear as file results
 * {"identifier", "type": "file", "contentType", "fileName", "startDate", "endDate"} in the step
 * result (async actions: in the task result's "asyncResults"). When writing fails, the call
 * still succeeds: the recorder fails (event recorderFailed with "samplesLost"), the samples of
 * earlier calls stay in their file, and the task finishes with reason "failed" unless the session
 * option "continueOnRecorderFailure" is true. STEPKIT_ESTATE when that recorder is not running;
 * STEPKIT_EINVAL / STEPKIT_EPARSE for bad arguments; STEPKIT_EIO when the session autosaves and
 * the autosave failed: then the files are as they were before the call too.
 *
 * File names: "<taskRunUUID>-<step>-<visit>-<recorder>-<n>.json" (visit: the visit's position in
 * the path, from 1; n: the file's number, from 0) and "<taskRunUUID>-async-<recorder>-<n>.json"
 * for async actions. Identifiers are never used as they are: every byte outside [A-Za-z0-9._] is
 * percent-encoded ("part1/walk" is written "part1%2Fwalk", "-" is "%2D"), so a name is always
 * one file in the output directory and different recorders never share one; an identifier whose
 * encoding passes 90 bytes is cut and followed by "~" and 16 hex digits of its SHA-256. A new
 * file is created exclusively (O_EXCL | O_NOFOLLOW; an entry already at the name, which carries
 * the run's UUID, is removed first: a file of a call that was never saved, or a planted link);
 * an existing one is opened with O_NOFOLLOW and written only while it is a regular file with no
 * other link, else the recorder fails. The length the session records is the file's length:
 * samples written by a call whose autosave never happened (the host died) are cut off by the
 * next write or when the recorder stops. With autosave, samples are fsynced before the
 * restoration data that counts them. */
int stepkit_session_record(stepkit_session *session, const char *recorder_id,
                           const char *samples_json, char **out);

/* An event callback: `event_json` is one event (see above), borrowed for the call. */
typedef void (*stepkit_event_fn)(const char *event_json, void *user_data);
/* Releases a callback's user data. */
typedef void (*stepkit_free_fn)(void *user_data);

/* Sets (or, with fn NULL, removes) the session's event callback. Events are delivered in order on
 * the thread that made the call that produced them, after the session's lock is released, so the
 * callback may call back into the library (even into this session). `free_user_data`, if not
 * NULL, is called with `user_data` once the callback is replaced or removed, or the session is
 * freed, and no delivery is using it any more; a callback that removes or replaces itself hears
 * no further events of the call under way. A call with `out` == NULL started before the
 * callback was set (on another thread) builds no events, so the new callback hears none of it.
 * Returns STEPKIT_EINVAL if `session` is NULL or not live. */
int stepkit_session_set_event_callback(stepkit_session *session, stepkit_event_fn fn,
                                       void *user_data, stepkit_free_fn free_user_data);

/* ---------------------------------------------------------------------------------------------
 * Verifying a submission (docs/verify.md)
 *
 * A server that receives a result from a client runs the task's own logic on it instead of
 * trusting it: the submission is replayed from the start through the task's navigation and the
 * one decision whether an answer is accepted, as stepkit_session_restore() replays a saved run,
 * and every way it differs is reported at once.
 */

/* Verifies `submitted_json` against `task`: a task result as stepkit_session_result() writes it,
 * or, for a task imported from FHIR (stepkit_task_compile_fhir()), a QuestionnaireResponse
 * (recognised by its "resourceType"). A result may name the task version it was made with in an
 * extra member "taskFingerprint" (stepkit_task_info()'s "fingerprint"); a response names it in
 * "questionnaire" (url|version).
 *
 * `options_json` (NULL: the defaults): {"ignore": ["dates", "calculations"], "unknownFields":
 * "error" | "ignore", "allowIncomplete": false}. "ignore" leaves out the dates' form and order,
 * or the comparison of submitted calculations; "unknownFields": "error" (the default) reports a
 * member the result's or response's shape does not have; "allowIncomplete" accepts a run that
 * stops before navigation ends (and a response without its required answers, as a response
 * whose "status" is "in-progress" always is).
 *
 * On STEPKIT_OK stores in *out_report
 *   {"verified": true | false, "divergences": [{"code", "message", "path", "step"?, "item"?,
 *    "reason"?}], "truncated"?: true, "result": {...}, "questionnaireResponse"?: {...}}
 * whether or not the submission verifies: "verified" is true exactly when "divergences" is
 * empty. Each divergence has a code (otherTask, otherVersion, unexpectedStep, missingStep,
 * repeatedStep, reorderedStep, answerRefused, wrongType, requiredAnswerMissing, disabledItem,
 * duplicateItem, calculationMismatch, datesOutOfOrder, invalidDate, unknownIdentifier,
 * unknownField, orderMismatch, gameMismatch; docs/verify.md says what each means), a sentence, and
 * its place in the submission ("results[2].results[0].answer"); "reason" is the engine's own code
 * for a refused answer ("outOfRange", "validationFailed"). A game's result is recomputed from the
 * inputs it records ("recorded") and the submitted seed, and each field that differs is a
 * gameMismatch naming the field (docs/active-tasks.md). At most 1000 are listed ("truncated" then). "result"
 * is the engine's own task result of the replay (the task's answers as it accepts them, its
 * calculations, the submission's dates where they are in order; replayed with the submitted
 * randomization seed, so in the order the participant saw), null for a submission of
 * another task; "questionnaireResponse", for a task imported from FHIR, is the engine's own.
 * A server stores these, not what the client sent.
 *
 * Errors (*out_report NULL): STEPKIT_EINVAL if `task`, `submitted_json` or `out_report` is NULL,
 * `task` is not live, the options are not as above, the submission is neither a result object
 * nor a QuestionnaireResponse ("notASubmission"), a QuestionnaireResponse is given for a task not
 * imported from FHIR ("notFHIR"), or the submission is past the input limits (32 MiB,
 * 128 levels, 1 MiB strings: "tooLarge", "tooDeep", "stringTooLong", checked before it is
 * parsed); STEPKIT_EPARSE if it is not JSON. Output owned by the caller (stepkit_string_free).
 * Thread-safe: the replay is a session of its own, and the task is shared read-only. */
int stepkit_task_verify_result(const stepkit_task *task, const char *submitted_json,
                               const char *options_json, char **out_report);

/* ---------------------------------------------------------------------------------------------
 * Review steps (docs/task-format.md, "Review steps")
 *
 * While a "review" step is current the state has "review": {"steps": [{"step", "type",
 * "displayTitle", "skipped", "answers": [{"identifier", "label", "answer", "displayText"}]}]}:
 * the steps before it on the current path that take answers, each once, with the answers as the
 * participant reads them. During an edit begun there the state has "returnsToReview".
 * Repeating blocks are listed per instance, in order: a repeating section's step once per
 * instance, its entry with "section", "instance" (from 0) and "instanceTitle" (the state's
 * title, null without one); a repeating group's items and a repeating question's answers once
 * per instance, each answer with "block", "instance" and "instanceTitle" ("identifier"
 * "block[k].item", or "block[k]").
 */

/* "Edit" on the current review step: goes back to `step_identifier` (NUL-terminated), one of the
 * steps the review lists. Leaving that step goes forward where the task's rules lead on its new
 * answer, passes over the steps the path already held that are still answered and may be left,
 * and comes back to the review, or stops at a step that needs the participant (a branch the edit
 * opened, an active step) and goes on toward the review once that is left. On reaching the
 * review, the answers of steps the edit took off the path that the new path leaves out are
 * dropped, each with an "answerDropped" event {"step", "reason": "offPath"} (and an audit
 * "answerCleared" event with "detail": "offPath"); the edit itself is an audit "backward" event
 * with "detail": "reviewEdit". An edit going on is saved in restoration data and goes on after a
 * restore.
 *
 * On success stores the new state (as stepkit_session_state) in *out (`out` may be NULL). On
 * failure changes nothing: STEPKIT_EINVAL for a NULL `session` or `step_identifier` or a handle
 * that is not live; STEPKIT_ESTATE "notReview" when the current step is not a review step,
 * "notReviewed" when the review does not list `step_identifier`, "finished" when the run has
 * ended; STEPKIT_EIO when autosave fails. Thread-safe (the session's lock). */
int stepkit_session_review_edit(stepkit_session *session, const char *step_identifier, char **out);

/* "Edit" on the current review step into one instance of a repeating block: as
 * stepkit_session_review_edit(), for the entry of instance `index` (from 0) that the review
 * lists. `block` (NUL-terminated, read up to 256 bytes; NULL: the step's only block) names the
 * block as the review's entry does: for a step of a repeating section, the section (its entry's
 * "section"), and the edit goes back to the step's latest visit in that instance (its entry's
 * "instance"); leaving it goes on toward the review over the steps still answered, the later
 * instances' too. For a step with a repeating group or question (an answer's "block"), the
 * edit goes back to the step with the block in that instance (the state's "instances" "current",
 * as stepkit_session_enter_instance() would; every instance is still on the step).
 *
 * On success stores the new state (as stepkit_session_state) in *out (`out` may be NULL). On
 * failure changes nothing: STEPKIT_EINVAL for a NULL `session` or `step_identifier`, a handle
 * that is not live, a block the step does not have ("unknownBlock"), NULL for a step with
 * several ("blockRequired"), or an `index` outside the block's instances ("instanceOutOfRange");
 * STEPKIT_ESTATE "notReview" when the current step is not a review step, "notReviewed" when the
 * review does not list `step_identifier` (or, for a repeating section's step, lists no entry of
 * it in that instance: navigation passed over it there), "noRepeatingBlock" when the step is in
 * no repeating block and has none (edit it with stepkit_session_review_edit()), "finished" when
 * the run has ended; STEPKIT_EIO when autosave fails. Thread-safe (the session's lock). */
int stepkit_session_review_edit_instance(stepkit_session *session, const char *step_identifier,
                                         const char *block, int64_t index, char **out);

/* The read-only review of a saved or finished run, for a host that shows "your answers" without
 * opening a session. `run_json` is restoration data (stepkit_session_save(), or the text of an
 * autosave file), restored and checked exactly as stepkit_session_restore() does with
 * `options_json` (the same options, NULL for none: "integrityKey", "migrate", ...), or a task
 * result (stepkit_session_result()), read as stepkit_task_verify_result() reads one but not
 * replayed (verify a result before trusting it).
 *
 * On STEPKIT_OK stores in *out {"taskIdentifier", "taskRunUUID", "source": "restorationData" |
 * "result", "steps": [...]} (each step as in the state's "review", every step of the path that
 * takes answers), and, for restoration data, "status" and "finishReason". Output owned by the
 * caller (stepkit_string_free).
 *
 * Errors (*out NULL): STEPKIT_EINVAL if `task`, `run_json` or `out` is NULL, `task` is not live,
 * the options are not session options, `run_json` is neither restoration data nor a result
 * ("notARun") or is a result of another task ("otherTask"), or it is past the input limits
 * (256 MiB, 128 levels); STEPKIT_EPARSE if it is not JSON; STEPKIT_ERESTORE (and the codes of
 * stepkit_session_restore()) for restoration data that does not restore; STEPKIT_EIO if
 * libcrypto is needed and cannot be loaded. Thread-safe: nothing is shared but the task,
 * read-only. */
int stepkit_task_review(const stepkit_task *task, const char *run_json, const char *options_json, char **out);

/* ---------------------------------------------------------------------------------------------
 * Languages
 *
 * A task's texts (titles, texts, questions, choice texts, placeholders, invalid messages,
 * section titles, spoken prompts, ...) may each be a string or an object of BCP-47 language
 * tags, {"en": "Mood", "fr": "Humeur"}, with the task's "defaultLanguage" and "languages"
 * (docs/task-format.md, "Languages"). A session shows every text in its language: the tag asked
 * for ("language" option, stepkit_session_set_language()), else the tag without its last
 * subtag ("fr-CA" → "fr"), else the task's default language. The state's "language" member
 * ({"requested", "text", "messages", "used", "available"}) and the result's "language" and
 * "languages" (every text language the run was shown in, first the one it started in) say
 * which; they are present when the task declares languages or the host asked for one.
 *
 * The messages the engine writes for the participant (a refused answer's "message", a missing
 * required answer) come from a message catalogue: the host's for the language ("messages"
 * option) if given, else the shipped one (English "en", German "de", Spanish "es"), each tried
 * for the tag asked for and then as above, else for the text language, else English. English
 * messages are the engine's messages as they always read. The error JSON's "code" and "path"
 * are the same in every language. Messages for the author or the host (a definition's
 * problems, a refused call) stay English.
 * ------------------------------------------------------------------------------------------- */

/* Shows the session in `language` (a BCP-47 tag, NUL-terminated, read up to 256 bytes) from
 * now on: the task's texts, piping, events, the state and the result, and the engine's messages
 * for the participant. Every answer, visit, draft, timer and date stays as it was; only texts
 * change. Works on a finished session too. Queues a "languageDidChange" event {"language": the
 * text language, "messages": the message language}. The language is part of restoration data;
 * a "language" option given to stepkit_session_restore() replaces the saved one.
 *
 * On success stores the new state (as stepkit_session_state) in *out (`out` may be NULL). On
 * failure changes nothing and returns STEPKIT_EINVAL: a NULL argument, a handle that is not
 * live, or a tag that is not BCP-47 ("invalidLanguage"); STEPKIT_EIO when autosave fails.
 * Thread-safe (the session's lock). */
int stepkit_session_set_language(stepkit_session *session, const char *language, char **out);

/* Stores in *out a shipped message catalogue as JSON, {message key: text or {"one", "other"}}:
 * the reference a host translates for its own catalogue ("messages" option). Arguments are
 * written in braces ({choice}); an entry keyed by a "count" argument has plural forms ("one"
 * for a count of 1). Output owned by the caller. Returns STEPKIT_EINVAL for a NULL argument, a
 * tag that is not BCP-47 ("invalidLanguage") or a language StepKit ships no catalogue for
 * ("unknownLanguage"). Thread-safe. */
int stepkit_message_catalogue(const char *language, char **out);

/* ---------------------------------------------------------------------------------------------
 * Repeating blocks
 *
 * A repeating group of form items, or a repeating question, asks its questions once per
 * instance (one medication, one child); docs/task-format.md, "Repeating blocks". Its answer is
 * an array, one entry per instance. When the current step has repeating blocks, the state has
 * "instances": per block (named by its form item's identifier, or a repeating question step's
 * own), {"count", "current", "minCount", "maxCount", "expectedCount", "overCount", "canAdd",
 * "canRemove", "titles"}: how many instances it has, the one the participant is in (from 0),
 * the bounds, what its "count" expression says (null: none), how many instances are past it
 * (ask the participant which to remove: lowering the count never removes one), whether one may
 * be added or removed now, and each instance's title (null when the block has none); a group
 * whose items have visibleWhen also has "hidden": per instance, the items hidden there
 * (docs/expressions.md, "Per-instance visibility").
 *
 * `block` (NUL-terminated, read up to 256 bytes) names a block of the current step; NULL is
 * the step's only block. `index` counts from 0. On success each stores the new state (as
 * stepkit_session_state) in *out (`out` may be NULL) and, through the event callback, queues
 * "instanceAdded", "instanceRemoved" or "instanceEntered" {"step", "block", "index"}. Adding and
 * removing change the block's answer (an "answerSet" / "answerCleared" audit event) and are
 * saved; which instance each block is in is part of restoration data. On failure each changes
 * nothing and returns STEPKIT_EINVAL: a NULL session, a handle that is not live, a block the
 * step does not have ("unknownBlock"), NULL on a step with several ("blockRequired"), an
 * index outside the block's instances ("instanceOutOfRange"); STEPKIT_ESTATE: a finished run
 * ("finished"), a current step without repeating blocks ("noRepeatingBlock"), adding at
 * "maxCount" ("tooManyInstances"), removing below "minCount" ("tooFewInstances") or below what
 * the block's "count" says ("belowCount": change the answer it counts first); STEPKIT_EIO when
 * autosave fails. Thread-safe (the session's lock).
 *
 * A repeating section (a "section" with "repeat") is a block of steps walked once per
 * instance; docs/task-format.md, "Repeating sections". While the current step is one of its
 * steps, the state's "instances" has one entry, named by the section's identifier, with the
 * same members and "steps" (its steps' identifiers), and the same three calls act on it
 * (`block` NULL or the section's identifier; another name is "unknownBlock"). Going forward
 * from an instance's last step goes to the next instance's first step, and from the last
 * instance out of the section; going back follows the path through the instances. For a
 * repeating section: adding makes an instance after the last without moving (going forward
 * reaches it); removing takes the instance's answers and visits away ("answerCleared" audit
 * events), and removing the instance the participant is in goes back to the visit before it
 * (removing the only one left is "tooFewInstances"); entering goes back to the first step of
 * the current instance or of one before it (a later one is STEPKIT_ESTATE
 * "instanceNotReached": go forward to reach it), every answer kept.
 *
 * A repeating group inside a repeating group (a medication's doses; docs/task-format.md,
 * "Groups inside groups") is named by its path, `block` "medication.doses": the three calls
 * act on the doses of the medication the participant is in, and `index` counts from 0 within
 * them. "medication[1].doses" names that medication too and is refused with STEPKIT_ESTATE
 * ("outsideOuterInstance") unless the participant is in medication 1 (enter it first), or with
 * STEPKIT_EINVAL ("instanceOutOfRange") when there is no medication 1. The state's "instances"
 * has an entry "medication.doses" for the medication the participant is in, with the members
 * above and "outer" (the outer block's name) and "outerIndex" (the medication); the events
 * add "outerIndex". Moving to another medication (adding, entering or removing the one the
 * participant is in) starts its doses at the first. A path the step has no inner group for
 * is "unknownBlock"; adding past the inner "maxCount" is "tooManyInstances", removing below
 * its "minCount" "tooFewInstances", each in that medication.
 * ------------------------------------------------------------------------------------------- */

/* Adds an instance after the block's last (empty) and moves into it (a repeating section's:
 * without moving). */
int stepkit_session_add_instance(stepkit_session *session, const char *block, char **out);

/* Removes instance `index` of the block with its answers; the instances after it move up. */
int stepkit_session_remove_instance(stepkit_session *session, const char *block, int64_t index, char **out);

/* Moves into instance `index` of the block (the state's "current"); for a repeating section,
 * back to that instance's first step. */
int stepkit_session_enter_instance(stepkit_session *session, const char *block, int64_t index, char **out);

/* ---------------------------------------------------------------------------------------------
 * The audit trail
 *
 * Every call that changes a session and is accepted records one event in the session's audit
 * trail; a refused call records nothing. Each event is {"index", "type", "date", ...}: "date" is
 * the session's time (its clock, never earlier than the event before), as ISO 8601; "type" is
 *   "answerSet" / "answerCleared"  stepkit_session_set_answer(): "step", "old" and "new" (the
 *                                  answer before and after; null when there was none / it was
 *                                  cleared);
 *   "forward", "backward", "skip"  the moves: "step" (the step left) and "to" (the step shown;
 *                                  null when the move completed the task);
 *   "finish"                       stepkit_session_finish() with any reason but "completed"
 *                                  ("detail": the reason; completing is a "forward" to null);
 *   "suspended", "resumed",        stepkit_session_control() ("detail": the operation, "step":
 *   "control"                      the current step), "control" for "start" and "finish";
 *   "restored"                     the session was restored (listed from the restore; saved
 *                                  with the first change after it; not recorded when the
 *                                  restore's options say "audit": {"recordRestore": false});
 *   "migrated"                     restored across task versions ("detail": the old fingerprint).
 * Each event carries "actor" and "reason" when the host gave them (the session option "audit":
 * {"actor", "reason"}, or stepkit_session_set_audit_context()), and "digest": the chain. Event
 * i's digest signs event i-1's (the taskRunUUID for the first), a newline and the event's saved
 * text, with the restoration data's algorithm (HMAC-SHA256 under "integrityKey", else SHA-256).
 * The trail is saved in the restoration data's "audit" member and in autosave journal records;
 * restoration data whose trail was edited, cut off, or had an event removed or moved is refused
 * (STEPKIT_ERESTORE "auditTampered", its path naming the first bad event). Ticks, samples and
 * clocks record no event. The session option "audit": false switches recording off (a restored
 * trail is kept as it was). See docs/audit.md.
 */

/* Stores in *out (free it with stepkit_string_free()) the trail from event `start_index` on:
 * {"count": n, "enabled": bool, "events": [...]}; "count" is the whole trail's length, so a host
 * streaming the trail asks next from "count". A `start_index` at or past the end gives no events.
 * Computes the chain's digests not yet computed (the first call may load libcrypto: STEPKIT_EIO
 * "libcryptoUnavailable" if it cannot). Returns STEPKIT_EINVAL if `session` or `out` is NULL, the
 * session is not live, or `start_index` is negative or above 2147483647. Safe from any thread;
 * calls on one session run one at a time. */
int stepkit_session_audit(stepkit_session *session, int64_t start_index, char **out);

/* Names who makes the calls that follow and why: `actor` and `reason` (borrowed, copied; NULL
 * for none, at most 4096 bytes each) go into every event recorded until the next call to this
 * function. They are not saved with the session (a restored session starts with the options').
 * Returns STEPKIT_EINVAL if `session` is NULL or not live, or a text is longer than 4096 bytes
 * ("tooLong"; nothing changes). Safe from any thread; calls on one session run one at a time. */
int stepkit_session_set_audit_context(stepkit_session *session, const char *actor, const char *reason);

/* ---------------------------------------------------------------------------------------------
 * Consent and the steps the host reports
 *
 * A task may carry a "consentDocument" (title, version, sections of ResearchKit's section types).
 * A "visualConsent" step shows its sections ("consentSections" in the state's step); a
 * "consentReview" step is a form StepKit writes ("consented", "givenName", "familyName", answered
 * with stepkit_session_set_answer()) with the document's text in "document"; its step result
 * carries "consent": {"consented", "documentVersion", "documentSHA256", "givenName",
 * "familyName", "signatureDate"}. The steps "signature", "imageCapture", "table", "webView",
 * "videoInstruction", "pdfViewer" and "requestPermissions" show what the host shows and are
 * answered only by stepkit_session_report(): stepkit_session_set_answer() refuses them
 * (STEPKIT_ESTATE "reportedByHost"). See docs/task-format.md, "Consent" and "Steps the host
 * reports".
 */

/* Reports what the host observed on the current step: `report_json` (borrowed) is
 * {"step": "<the current step's identifier>", ...} with, per step type,
 *   signature           exactly one of {"image": {"contentType": "image/png" | "image/jpeg" |
 *                       "image/svg+xml", "base64": "..."}}, {"path": "<SVG path data>"},
 *                       {"typedName": "<the name typed>"};
 *   imageCapture        {"image": {...}} as above;
 *   table, pdfViewer    {"viewed": true};
 *   webView             {"message": "<what the page posted>"} (at most 64 KiB);
 *   videoInstruction    {"playbackCompleted": bool, "position": seconds (optional)};
 *   requestPermissions  {"granted": [...], "denied": [...]}: every permission the step asks for
 *                       in exactly one of them, no other.
 * The report is kept as the step's answer (in the result, saved and restored like one, recorded in
 * the audit trail as "answerSet"); a later report replaces it. A signature or image is written
 * into the session's "outputDirectory" as "<taskRunUUID>-<step>-<visit>-<16 hex digits of its
 * SHA-256>.<png|jpg|svg|txt>" (created exclusively, O_NOFOLLOW; synced first when the session
 * autosaves) and kept as {"kind": "image" | "path" | "typedName", "fileName", "contentType",
 * "bytes", "sha256"} (the SHA-256 of the file's bytes; a vector path is written as an SVG file,
 * a typed name as a text file). The report's text is held to the session's answer limits
 * (1 MiB by default), which bound an image's size.
 * Stores the new state in *out like stepkit_session_set_answer() (`out` may be NULL). Errors,
 * each changing nothing, no file left behind: STEPKIT_EINVAL (NULL or dead `session`, NULL
 * `report_json`, not an object, no "step"), STEPKIT_EPARSE (not JSON), STEPKIT_ESTATE ("step" is
 * not the current step: "notCurrentStep"; the step is not one the host reports: "notReported";
 * a file report without "outputDirectory": "noOutputDirectory"; the task has finished),
 * STEPKIT_EANSWER ("invalidReport", the path naming the bad field), STEPKIT_EIO (the file could
 * not be written: "captureWriteFailed"; libcrypto could not be loaded; the autosave failed).
 * Safe from any thread; calls on one session run one at a time. */
int stepkit_session_report(stepkit_session *session, const char *report_json, char **out);

/* Stores in *out (free it with stepkit_string_free()) the run's consent document, signed as far
 * as it is: {"consented", "documentVersion", "documentSHA256", "givenName", "familyName",
 * "signatureDate", "signature": the latest signature report on the path or null, "markdown",
 * "html"}. "markdown" and "html" (a whole HTML document, every text escaped) hold the document's
 * sections, then the signature page: the participant's names, whether they consented, the date
 * (the end of the consent review's visit), the signature file's name and SHA-256 and the
 * document's SHA-256. StepKit writes no PDF: a host that wants one prints the HTML. Returns
 * STEPKIT_EINVAL if `session` or `out` is NULL or the session is not live, STEPKIT_ESTATE
 * ("noConsentReview") if the task has no consent review step. Changes nothing. Safe from any
 * thread. */
int stepkit_session_consent_document(stepkit_session *session, char **out);

/* ---------------------------------------------------------------------------------------------
 * Games: the predefined active tasks (docs/active-tasks.md)
 *
 * A step of type "spatialSpanMemory", "psat", "stroop", "towerOfHanoi", "trailmaking",
 * "reactionTime", "tappingInterval", "holePegTestPlace", "holePegTestRemove", "rangeOfMotion",
 * "amslerGrid" or "toneAudiometry" is an active step whose game the engine runs: it starts with the step (by default), the state's "active"."game"
 * says what the host draws or plays now, the host hands each input back with
 * stepkit_session_input(), timed windows close through stepkit_session_tick() (the state's
 * nextDeadline includes them), and when the game is over the step finishes (event "gameOver",
 * then "activeStepFinished") and, by default, the task moves on. The step's result holds the
 * game's result, ResearchKit's fields. A game is a function of the run's seed (the session
 * option "seed", or drawn) and its inputs with their times, so it saves and restores exactly
 * (its inputs are replayed on restore and must give the saved result: STEPKIT_ERESTORE
 * "gameMismatch" otherwise).
 */

/* Hands the running game of the current step one input, `input_json` (borrowed; at most the
 * session's answer size limit):
 *   {"type": "tap", "target": n}           a tile, button or number (n from 0)
 *   {"type": "key", "key": "red"}          a key or a typed answer ("12"), at most 64 bytes
 *   {"type": "drag", "from": a, "to": b}    a move from one place to another (a tower's disk)
 *   {"type": "sample", "x": , "y": , "z": } a motion sample (acceleration in g; with "w", an
 *                                           attitude quaternion)
 *   {"type": "touch", "x": , "y": }         a touch at a place in the game's view, with an optional
 *                                           "duration" (ms held) and "rotation" (degrees turned)
 * each with an optional "time": milliseconds since the epoch on the session's clock (the moment
 * of the touch; the clock's time when left out), from when the step last started running up to
 * the clock's time, and not before the game's latest time. The game reads it as the step's own
 * running time, which is what it records. The input is taken and recorded (event "gameInput";
 * the audit trail's "control" event with detail "input") and the new state stored in *out (NULL
 * `out`: no state built). Errors, each changing nothing: STEPKIT_EINVAL for a NULL or dead
 * session, a NULL `input_json`, an input of the wrong shape (unknown key, missing field, out of
 * range) or a time outside those bounds ("inputTime"); STEPKIT_EPARSE for text that is not JSON;
 * STEPKIT_ESTATE when the task has finished, the current step is not a game ("notAGame") or its
 * step is not running ("activeState"); STEPKIT_EANSWER when the game does not take this input now
 * ("wrongInput", "noSuchTarget", "sequencePlaying", "notYet", "illegalMove", "gameOver",
 * "tooManyInputs"); STEPKIT_EIO when the autosave failed. Safe from any thread; calls on one
 * session run one at a time. */
int stepkit_session_input(stepkit_session *session, const char *input_json, char **out);

#ifdef __cplusplus
}
#endif

#endif /* STEPKIT_H */
