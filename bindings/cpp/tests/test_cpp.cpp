// test_cpp.cpp — include/stepkit.hpp against the real library: ownership (move-only handles,
// RAII), errors as stepkit::Error, clocks and event callbacks as any callable with their
// lifetimes across moves, and every C function of include/stepkit.h reached through the C++ API
// (check_cpp_coverage.sh runs this program and checks the dynamic loader bound each of them).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <stepkit.hpp>

static int failures = 0;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
            ++failures;                                                                        \
        }                                                                                      \
    } while (0)

// Runs `body`, which must throw stepkit::Error with `status`; returns the error (status 0 and
// a failure if it did not throw).
template <typename F> static stepkit::Error expect_error(int status, F body, int line) {
    try {
        body();
    } catch (const stepkit::Error &e) {
        if (e.status() != status) {
            std::fprintf(stderr, "%s:%d: expected status %d, got %d: %s\n", __FILE__, line, status,
                         e.status(), e.json().c_str());
            ++failures;
        }
        return e;
    }
    std::fprintf(stderr, "%s:%d: expected stepkit::Error %d, nothing thrown\n", __FILE__, line,
                 status);
    ++failures;
    return stepkit::Error(0, "{}");
}
#define EXPECT_ERROR(status, ...) expect_error(status, [&] { __VA_ARGS__; }, __LINE__)

static bool has(const std::string &text, const std::string &needle) {
    return text.find(needle) != std::string::npos;
}

static std::string field(const std::string &json, const char *key) {
    return stepkit::detail::top_level_string(json, key);
}

static const std::int64_t T0 = 1767225600000; // 2026-01-01T00:00:00.000Z

static const char *const SURVEY = R"({"identifier": "survey", "steps": [
    {"type": "instruction", "identifier": "intro", "title": "Hello"},
    {"type": "question", "identifier": "age", "title": "Age",
     "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90}},
    {"type": "question", "identifier": "pet", "title": "A pet?", "optional": true,
     "answerFormat": {"type": "boolean"}},
    {"type": "completion", "identifier": "done", "title": "Thanks"}]})";

static const char *const WALK = R"({"identifier": "walk", "steps": [
    {"type": "countdown", "identifier": "countdown", "stepDuration": 3},
    {"type": "active", "identifier": "walking", "title": "Walk", "stepDuration": 10,
     "recorderConfigurations": [{"type": "accelerometer", "identifier": "acc"}]},
    {"type": "completion", "identifier": "done", "title": "Thank you"}]})";

static const char *const RUN = R"({"taskRunUUID": "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10"})";

static void test_types() {
    static_assert(!std::is_copy_constructible_v<stepkit::Task>, "Task is move-only");
    static_assert(!std::is_copy_assignable_v<stepkit::Task>, "Task is move-only");
    static_assert(std::is_nothrow_move_constructible_v<stepkit::Task>, "Task moves");
    static_assert(!std::is_copy_constructible_v<stepkit::Session>, "Session is move-only");
    static_assert(!std::is_copy_assignable_v<stepkit::Session>, "Session is move-only");
    static_assert(std::is_nothrow_move_constructible_v<stepkit::Session>, "Session moves");
    static_assert(std::is_nothrow_move_assignable_v<stepkit::Session>, "Session moves");
    static_assert(std::is_base_of_v<std::runtime_error, stepkit::Error>, "Error is an exception");
}

static void test_version() {
    CHECK(stepkit::version() == STEPKIT_VERSION);
    CHECK(stepkit::version_number() == STEPKIT_VERSION_NUMBER);
}

// Error names come from the library (stepkit_status_name), for library errors and for the
// ones the header raises itself before calling C.
static void test_status_names() {
    CHECK(std::string(stepkit::detail::status_name(STEPKIT_EANSWER)) == "EANSWER");
    CHECK(stepkit::detail::status_name(STEPKIT_EANSWER) == stepkit_status_name(STEPKIT_EANSWER));
    CHECK(std::string(stepkit::detail::status_name(12345)) == "EINTERNAL");
    // Refused by the header itself (a NUL in the options), named by the library's table.
    stepkit::Error e = EXPECT_ERROR(STEPKIT_EPARSE, stepkit::Task::compile(SURVEY, std::string("{}\0", 3)));
    CHECK(e.code() == "EPARSE");
    CHECK(has(e.json(), "\"code\": \"EPARSE\""));
}

// Session::control (stepkit_session_control), and active(), its deprecated name.
static void test_control() {
    stepkit::Task task = stepkit::Task::compile(
        R"({"identifier": "t", "steps": [{"type": "active", "identifier": "walk", "stepDuration": 30}]})");
    stepkit::Session session = task.open();
    CHECK(has(session.control("start"), "\"status\":\"running\""));
    CHECK(has(session.active("suspend"), "\"status\":\"suspended\""));
    stepkit::Error e = EXPECT_ERROR(STEPKIT_EINVAL, session.control("bogus"));
    CHECK(has(e.json(), "invalidOperation"));
}

static void test_compile_and_errors() {
    stepkit::Task task = stepkit::Task::compile(SURVEY);
    CHECK(task);
    CHECK(task.handle() != nullptr);
    const std::string info = task.info();
    CHECK(field(info, "identifier") == "survey");
    CHECK(has(info, "\"stepCount\":4"));
    const std::string graph = task.graph();
    CHECK(has(graph, "\"edges\":["));
    CHECK(has(graph, "\"kind\":\"start\""));
    const std::string report = task.check();
    CHECK(has(report, "\"problems\":"));
    CHECK(has(report, "\"errors\":0"));

    // Every problem of a definition, the first one's path and message on the Error.
    stepkit::Error e = EXPECT_ERROR(STEPKIT_EDEFINITION, stepkit::Task::compile(
        R"({"identifier": "bad", "steps": [{"type": "question", "identifier": "q",
            "answerFormat": {"type": "scale", "minimum": 5, "maximum": 1}}]})"));
    CHECK(e.code() == "EDEFINITION");
    CHECK(!e.message().empty());
    CHECK(std::string(e.what()) == e.message());
    CHECK(has(e.path(), "steps[0].answerFormat"));
    CHECK(has(e.json(), "\"errors\""));

    e = EXPECT_ERROR(STEPKIT_EPARSE, stepkit::Task::compile("{\"identifier\": "));
    CHECK(e.code() == "EPARSE");

    // A NUL inside the text: refused before C would see half of it.
    e = EXPECT_ERROR(STEPKIT_EPARSE, stepkit::Task::compile(std::string("{}\0{}", 5)));
    CHECK(e.code() == "EPARSE");
    CHECK(has(e.json(), "\"nulCharacter\""));

    // stepkit_task_compile_with_options: a limit.
    e = EXPECT_ERROR(STEPKIT_EINVAL,
                     stepkit::Task::compile(SURVEY, R"({"limits": {"maxDefinitionBytes": 16}})"));
    CHECK(has(e.json(), "tooLarge"));
    stepkit::Task limited = stepkit::Task::compile(SURVEY, R"({"limits": {"maxSteps": 10}})");
    CHECK(field(limited.info(), "identifier") == "survey");

    // Moving: the moved-from task holds nothing, and calling it is the C ABI's EINVAL.
    stepkit::Task moved = std::move(task);
    CHECK(!task); // NOLINT(bugprone-use-after-move): checking the moved-from state
    CHECK(moved);
    EXPECT_ERROR(STEPKIT_EINVAL, task.info());
    EXPECT_ERROR(STEPKIT_EINVAL, task.graph());
    task = std::move(moved);
    CHECK(field(task.info(), "identifier") == "survey");
}

static void test_walk_save_restore() {
    stepkit::Task task = stepkit::Task::compile(SURVEY);
    EXPECT_ERROR(STEPKIT_EINVAL, task.open(R"({"noSuchOption": 1})"));
    stepkit::Session session = task.open(RUN);
    std::int64_t now = T0;
    session.set_clock([&now] { return now; });

    std::string state = session.state();
    CHECK(field(state, "status") == "inProgress");
    CHECK(field(state, "taskRunUUID") == "9F1C7A52-3B8E-4D2A-A1F0-6C2D4E8B9A10");
    EXPECT_ERROR(STEPKIT_ESTATE, session.go_backward()); // the first step
    now += 1000;
    state = session.go_forward();
    CHECK(has(state, "\"identifier\":\"age\""));

    stepkit::Error e = EXPECT_ERROR(STEPKIT_EANSWER, session.set_answer("12"));
    CHECK(e.code() == "EANSWER");
    CHECK(has(e.message(), "18"));
    EXPECT_ERROR(STEPKIT_EPARSE, session.set_answer("[1,"));
    EXPECT_ERROR(STEPKIT_ESTATE, session.go_forward()); // required, unanswered
    EXPECT_ERROR(STEPKIT_ESTATE, session.skip());       // not optional
    state = session.set_answer("42");
    CHECK(has(state, "\"answer\":42"));
    now += 1000;
    session.go_forward();
    state = session.go_backward();
    CHECK(has(state, "\"answer\":42")); // the answer prefills the step again
    session.go_forward();
    state = session.skip(); // the optional question
    CHECK(has(state, "\"identifier\":\"done\""));

    // Saved here; restored into a second session in the same place.
    const std::string saved = session.save();
    CHECK(has(saved, "survey"));
    // The task info's fingerprint is the one the restoration data names the task by.
    const std::string fingerprint = field(task.info(), "fingerprint");
    CHECK(fingerprint.size() == 64);
    CHECK(has(saved, "\"fingerprint\":\"" + fingerprint + "\""));
    stepkit::Session restored = task.restore(saved);
    CHECK(restored.state() == session.state());
    e = EXPECT_ERROR(STEPKIT_ERESTORE, task.restore("{\"format\": 1}"));
    CHECK(e.code() == "ERESTORE");
    EXPECT_ERROR(STEPKIT_EINVAL, task.restore(saved, R"({"taskRunUUID": "x"})"));

    EXPECT_ERROR(STEPKIT_EINVAL, session.finish("maybe"));
    EXPECT_ERROR(STEPKIT_EINVAL, session.finish(std::string("saved\0x", 7)));
    state = session.finish("saved");
    CHECK(field(state, "finishReason") == "saved");
    EXPECT_ERROR(STEPKIT_ESTATE, session.go_forward());
    const std::string result = session.result();
    CHECK(field(result, "identifier") == "survey");
    CHECK(field(result, "startDate") == "2026-01-01T00:00:00.000Z");
    CHECK(field(result, "endDate") == "2026-01-01T00:00:02.000Z");

    restored.go_forward();
    CHECK(field(restored.state(), "finishReason") == "completed");

    // The task may go first: the library keeps it alive for its sessions.
    stepkit::Session third = task.open();
    task = stepkit::Task();
    CHECK(field(third.state(), "status") == "inProgress");
}

/* The audit trail: each accepted change with its old and new value, the actor the host names,
 * streamed from an index; a refused call adds nothing. */
static void test_audit() {
    stepkit::Task task = stepkit::Task::compile(SURVEY);
    stepkit::Session session = task.open(R"({"audit": {"actor": "kiosk"}})");
    std::int64_t now = T0;
    session.set_clock([&now] { return now; });
    now += 1000;
    session.go_forward();
    session.set_answer("42");
    EXPECT_ERROR(STEPKIT_EANSWER, session.set_answer("12"));
    session.set_audit_context("dr-3", "corrected");
    session.set_answer("43");
    const std::string all = session.audit();
    CHECK(has(all, "\"count\":3"));
    CHECK(has(all, "\"type\":\"answerSet\""));
    CHECK(has(all, "\"old\":42"));
    CHECK(has(all, "\"new\":43"));
    CHECK(has(all, "\"actor\":\"kiosk\""));
    CHECK(has(all, "\"reason\":\"corrected\""));
    CHECK(has(all, "\"date\":\"2026-01-01T00:00:01.000Z\""));
    const std::string tail = session.audit(2);
    CHECK(has(tail, "\"index\":2") && !has(tail, "\"index\":1"));
    EXPECT_ERROR(STEPKIT_EINVAL, session.audit(-1));
    EXPECT_ERROR(STEPKIT_EINVAL, session.set_audit_context(std::string(5000, 'a')));
    stepkit::Session off = task.open(R"({"audit": false})");
    off.go_forward();
    CHECK(has(off.audit(), "\"count\":0"));
}

/* Consent: the review's record, a typed-name signature reported into the output directory, the
 * signed document; a report about another step is refused. */
static void test_consent() {
    char directory[] = "/tmp/test_cpp_consent.XXXXXX";
    CHECK(mkdtemp(directory) != nullptr);
    stepkit::Task task = stepkit::Task::compile(R"({"identifier": "c",
        "consentDocument": {"title": "Consent", "version": "7", "sections": [{"type": "overview", "summary": "Hello."}]},
        "steps": [{"type": "consentReview", "identifier": "review"}, {"type": "signature", "identifier": "sig"}]})");
    stepkit::Session session = task.open(std::string(R"({"outputDirectory": ")") + directory + "\"}");
    session.set_answer(R"({"consented": true, "givenName": "Ada", "familyName": "Lovelace"})");
    session.go_forward();
    EXPECT_ERROR(STEPKIT_ESTATE, session.report(R"({"step": "review", "typedName": "Ada"})"));
    EXPECT_ERROR(STEPKIT_EANSWER, session.report(R"({"step": "sig", "typedName": ""})"));
    CHECK(has(session.report(R"({"step": "sig", "typedName": "Ada Lovelace"})"), "\"identifier\":\"sig\""));
    const std::string signed_document = session.consent_document();
    CHECK(has(signed_document, "Participant: Ada Lovelace"));
    CHECK(has(signed_document, "\"documentVersion\":\"7\""));
    CHECK(has(session.result(), "\"consented\":true"));
    stepkit::Session other = stepkit::Task::compile(SURVEY).open();
    EXPECT_ERROR(STEPKIT_ESTATE, other.consent_document());
}

static void test_clock_across_moves() {
    stepkit::Task task = stepkit::Task::compile(SURVEY);
    auto now = std::make_shared<std::int64_t>(T0);
    std::weak_ptr<std::int64_t> watch = now;
    stepkit::Session session = task.open(RUN);
    session.set_clock([now] { return *now; }); // the clock owns a copy of `now`

    // Moved twice (construction, assignment): the clock set before still answers.
    stepkit::Session moved(std::move(session));
    stepkit::Session target = task.open();
    target = std::move(moved);
    *now = T0 + 5000;
    target.go_forward();
    EXPECT_ERROR(STEPKIT_EINVAL, session.state()); // moved-from
    EXPECT_ERROR(STEPKIT_EINVAL, moved.state());
    CHECK(has(target.result(), "\"endDate\":\"2026-01-01T00:00:05.000Z\""));

    // Replacing the clock releases the old one.
    now.reset();
    CHECK(!watch.expired());
    target.set_clock([] { return T0 + 7000; });
    CHECK(watch.expired());

    // A clock that throws: the call takes effect (the last good time is used), then the
    // exception comes out of the method that consulted the clock.
    int calls = 0;
    target.set_clock([&calls]() -> std::int64_t {
        if (++calls == 2)
            throw std::runtime_error("clock broke"); // once, at the answer's call
        return T0 + 8000;
    });
    bool thrown = false;
    try {
        target.set_answer("30");
    } catch (const std::runtime_error &e) {
        thrown = std::string(e.what()) == "clock broke";
    }
    CHECK(thrown);
    CHECK(has(target.state(), "\"answer\":30"));

    // Back to the system clock: the run's end is now, no longer the manual clock's time.
    CHECK(field(target.result(), "endDate") == "2026-01-01T00:00:08.000Z");
    target.set_clock(nullptr);
    target.go_forward();
    const std::string end = field(target.result(), "endDate");
    CHECK(!end.empty() && end != "2026-01-01T00:00:08.000Z");
}

static void test_active_and_events() {
    stepkit::Task task = stepkit::Task::compile(WALK);
    // The one recorder WALK lists, with the step that runs it.
    CHECK(has(task.info(), R"("recorders":[{"identifier":"acc","type":"accelerometer",)"
                           R"("permission":"motion","step":"walking"}])"));
    char directory[] = "/tmp/stepkit-cpp-test.XXXXXX";
    CHECK(mkdtemp(directory) != nullptr);
    stepkit::Session session =
        task.open(std::string(R"({"outputDirectory": ")") + directory + "\"}");
    std::int64_t now = T0;
    session.set_clock([&now] { return now; });

    // Events reach the callback in order, also after the session object moved.
    auto events = std::make_shared<std::vector<std::string>>();
    std::weak_ptr<std::vector<std::string>> watch = events;
    std::vector<std::string> *seen = events.get();
    session.set_event_callback([events](std::string_view event) {
        events->push_back(stepkit::detail::top_level_string(event, "type"));
    });
    events.reset(); // the callback holds the only reference now
    stepkit::Session moved = std::move(session);

    std::string state = moved.tick(); // the countdown started at open
    CHECK(has(state, "\"identifier\":\"countdown\""));
    now = T0 + 3000;
    state = moved.tick();
    CHECK(has(state, "\"identifier\":\"walking\""));
    CHECK(has(state, "\"status\":\"prepared\""));
    CHECK(!seen->empty());
    const std::size_t before = seen->size();
    state = moved.active("start");
    CHECK(has(state, "\"status\":\"running\""));
    CHECK(field(state, "nextDeadline") == "2026-01-01T00:00:13.000Z");
    bool recorder_started = false;
    for (std::size_t i = before; i < seen->size(); ++i)
        recorder_started |= (*seen)[i] == "recorderStarted";
    CHECK(recorder_started);

    state = moved.record("acc", R"([{"x": 0.1, "y": 0.2, "z": 9.8}])");
    CHECK(has(state, "\"status\":\"running\""));
    EXPECT_ERROR(STEPKIT_ESTATE, moved.record("gyro", R"({"x": 1})"));
    EXPECT_ERROR(STEPKIT_EPARSE, moved.record("acc", R"([{"x": )"));
    EXPECT_ERROR(STEPKIT_EINVAL, moved.active("jump"));
    state = moved.active("suspend");
    CHECK(has(state, "\"status\":\"suspended\""));
    state = moved.active("resume");
    CHECK(has(state, "\"status\":\"running\""));

    // A callback that throws: every event is still delivered, then the exception surfaces.
    int delivered = 0;
    moved.set_event_callback([&delivered](std::string_view) {
        ++delivered;
        throw std::logic_error("callback broke");
    });
    CHECK(watch.expired()); // replacing the callback released the first one
    now = T0 + 13000;
    bool thrown = false;
    try {
        moved.tick(); // the step finishes: several events
    } catch (const std::logic_error &e) {
        thrown = std::string(e.what()) == "callback broke";
    }
    CHECK(thrown);
    CHECK(delivered >= 2);
    state = moved.state();
    CHECK(has(state, "\"status\":\"finished\""));

    // A callback may call back into its own session.
    std::string nested;
    moved.set_event_callback([&moved, &nested](std::string_view event) {
        if (stepkit::detail::top_level_string(event, "type") == "taskFinished")
            nested = stepkit::detail::top_level_string(moved.state(), "finishReason");
    });
    moved.go_forward();
    moved.go_forward();
    CHECK(nested == "completed");
    CHECK(has(moved.result(), "\"type\":\"file\""));

    // Removing it; and the session's end releases a callback still set.
    moved.set_event_callback(nullptr);
    auto token = std::make_shared<int>(1);
    std::weak_ptr<int> token_watch = token;
    moved.set_event_callback([token](std::string_view) {});
    token.reset();
    CHECK(!token_watch.expired());
    moved = stepkit::Session();
    CHECK(token_watch.expired());

    std::string cleanup = std::string("rm -rf '") + directory + "'";
    CHECK(std::system(cleanup.c_str()) == 0);
}

static void test_error_json_reader() {
    using stepkit::detail::top_level_string;
    const std::string json = R"({"status": -4, "errors": [{"code": "x", "path": "inner"}],
        "code": "EANSWER", "message": "caf\u00e9 \ud83d\ude00 \"q\"\n", "path": "a.b[2]"})";
    CHECK(top_level_string(json, "code") == "EANSWER");
    CHECK(top_level_string(json, "path") == "a.b[2]"); // not the nested one
    CHECK(top_level_string(json, "message") == "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\"\n");
    CHECK(top_level_string(json, "status").empty()); // not a string
    CHECK(top_level_string(json, "missing").empty());
    CHECK(top_level_string("not json", "code").empty());
    CHECK(top_level_string(R"({"code": "unterminated)", "code").empty());
    stepkit::Error e(STEPKIT_EANSWER, json);
    CHECK(e.status() == STEPKIT_EANSWER && e.code() == "EANSWER" && e.path() == "a.b[2]");
}

// A FHIR Questionnaire in, a QuestionnaireResponse out: the import (with its report and the
// strict option), a walk that takes a branch, and the export's typed answers.
static void test_fhir() {
    const std::string questionnaire =
        R"({"resourceType": "Questionnaire", "url": "http://example.org/q", "item": [)"
        R"({"linkId": "smoke", "type": "boolean", "text": "Do you smoke?"},)"
        R"({"linkId": "packs", "type": "integer", "text": "Packs a day", "required": true,)"
        R"( "enableWhen": [{"question": "smoke", "operator": "=", "answerBoolean": true}]},)"
        R"({"linkId": "photo", "type": "attachment"}]})";
    const std::string translated = stepkit::Task::translate_fhir(questionnaire);
    CHECK(translated.find(R"("code":"unsupportedItemType")") != std::string::npos);
    CHECK(translated.find(R"("path":"item[2].type")") != std::string::npos);
    const stepkit::Error strict = expect_error(STEPKIT_EDEFINITION, [&] {
        stepkit::Task::compile_fhir(questionnaire, R"({"strict": true})"); }, __LINE__);
    CHECK(strict.json().find("item[2].type") != std::string::npos);
    const stepkit::Error missing = expect_error(STEPKIT_EDEFINITION, [] {
        stepkit::Task::compile_fhir(R"({"resourceType": "Questionnaire", "item": [)"
                                    R"({"linkId": "a", "type": "string", "enableWhen": [)"
                                    R"({"question": "nope", "operator": "exists", "answerBoolean": true}]}]})"); }, __LINE__);
    CHECK(missing.json().find("item[0].enableWhen[0].question") != std::string::npos);

    stepkit::Task task = stepkit::Task::compile_fhir(questionnaire);
    stepkit::Session session = task.open();
    session.set_answer("true");
    session.go_forward();
    session.set_answer("2");
    const std::string done = session.go_forward();
    CHECK(done.find(R"("finishReason":"completed")") != std::string::npos);
    const std::string response = session.result_fhir();
    CHECK(response.find(R"("status":"completed")") != std::string::npos);
    CHECK(response.find(R"("questionnaire":"http://example.org/q")") != std::string::npos);
    CHECK(response.find(R"({"linkId":"packs","text":"Packs a day","answer":[{"valueInteger":2}]})") != std::string::npos);

    // FHIR's required: checked when the task completes, by default. "packs" is required: the
    // run may leave it, the state lists it, and completing is refused until it is given.
    stepkit::Task free_moving = stepkit::Task::compile_fhir(questionnaire);
    stepkit::Session walk = free_moving.open();
    walk.set_answer("true");
    const std::string on_packs = walk.go_forward();
    CHECK(on_packs.find(R"("missingAnswers":[{"code":"answerRequired")") != std::string::npos);
    const stepkit::Error refused = expect_error(STEPKIT_ESTATE, [&] { walk.go_forward(); }, __LINE__);
    CHECK(refused.json().find(R"("step":"packs")") != std::string::npos);
    CHECK(walk.result_fhir().find(R"("status":"in-progress")") != std::string::npos);
    stepkit::Task per_step = stepkit::Task::compile_fhir(questionnaire, R"({"requiredAnswersChecked": "perStep"})");
    stepkit::Session strict_walk = per_step.open();
    strict_walk.set_answer("true");
    const std::string strict_packs = strict_walk.go_forward();
    CHECK(strict_packs.find(R"("code":"answerRequired","message":"Answer this question to continue.")") != std::string::npos);

    stepkit::Task plain = stepkit::Task::compile(
        R"({"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}]})");
    stepkit::Session other = plain.open();
    expect_error(STEPKIT_EINVAL, [&] { other.result_fhir(); }, __LINE__);
}

// A result the engine wrote verifies clean; edited, it does not, and the report says where.
static void test_verify() {
    stepkit::Task task = stepkit::Task::compile(SURVEY);
    stepkit::Session session = task.open(RUN);
    session.go_forward();
    session.set_answer("42");
    session.go_forward();
    session.skip();
    session.go_forward();
    const std::string result = session.result();
    const std::string clean = task.verify(result);
    CHECK(has(clean, "\"verified\":true"));
    CHECK(has(clean, "\"divergences\":[]"));
    std::string lying = result;
    const std::size_t at = lying.find("\"answer\":42");
    CHECK(at != std::string::npos);
    lying.replace(at, 11, "\"answer\":91");
    const std::string report = task.verify(lying, R"({"ignore": ["dates"]})");
    CHECK(has(report, "\"verified\":false"));
    CHECK(has(report, "\"code\":\"answerRefused\""));
    CHECK(has(report, "\"path\":\"results[1].results[0].answer\""));
    EXPECT_ERROR(STEPKIT_EPARSE, task.verify("{not json"));
    EXPECT_ERROR(STEPKIT_EINVAL, task.verify("[]"));
    EXPECT_ERROR(STEPKIT_EINVAL, task.verify(result, R"({"ignore": ["everything"]})"));
}

// A review step: the edit that changes a branch (by the rule, a non-smoker skips "cigarettes")
// drops that answer and comes back; the read-only review of the saved run lists the new path.
static void test_review() {
    stepkit::Task task = stepkit::Task::compile(R"({"identifier": "habits", "steps": [
        {"type": "question", "identifier": "smoker", "answerFormat": {"type": "boolean"}},
        {"type": "question", "identifier": "cigarettes", "answerFormat": {"type": "numeric", "style": "integer"}},
        {"type": "review", "identifier": "review"}],
      "navigationRules": {"smoker": {"type": "predicate", "branches": [
        {"when": {"result": "smoker", "equals": false}, "destination": "review"}]}}})");
    stepkit::Session session = task.open();
    session.set_answer("true");
    session.go_forward();
    session.set_answer("12");
    const std::string review = session.go_forward();
    CHECK(has(review, "\"step\":\"cigarettes\""));
    EXPECT_ERROR(STEPKIT_ESTATE, session.review_edit("nope"));
    CHECK(has(session.review_edit("smoker"), "\"returnsToReview\":\"review\""));
    session.set_answer("false");
    const std::string back = session.go_forward();
    CHECK(has(back, "\"type\":\"answerDropped\""));
    CHECK(!has(back, "\"step\":\"cigarettes\",\"type\":\"question\""));
    const std::string listed = task.review(session.save());
    CHECK(has(listed, "\"source\":\"restorationData\""));
    CHECK(has(listed, "\"displayText\":\"No\""));
    CHECK(!has(listed, "cigarettes"));
    EXPECT_ERROR(STEPKIT_EINVAL, task.review("[]"));
}

// Languages: the texts and a refused answer's message in the session's language, from the
// shipped German and Spanish catalogues and from a host's; a tag that is not BCP-47 refused.
static void test_languages() {
    stepkit::Task task = stepkit::Task::compile(
        R"({"identifier": "lang", "languages": ["en", "de", "es"], "steps": [
            {"type": "question", "identifier": "fruit", "title": {"en": "Fruit", "de": "Obst", "es": "Fruta"},
             "answerFormat": {"type": "textChoice", "style": "multipleChoice", "textChoices": [
               {"text": {"en": "Apple", "de": "Apfel", "es": "Manzana"}, "value": "apple"}]}}]})");
    stepkit::Session session = task.open(R"({"language": "de"})");
    CHECK(has(session.state(), "\"title\":\"Obst\""));
    stepkit::Error e = EXPECT_ERROR(STEPKIT_EANSWER, session.set_answer(R"(["apple", "apple"])"));
    CHECK(e.message() == "\"Apfel\" ist zweimal gewählt.");
    CHECK(has(session.set_language("es"), "\"title\":\"Fruta\""));
    e = EXPECT_ERROR(STEPKIT_EANSWER, session.set_answer(R"(["apple", "apple"])"));
    CHECK(e.message() == "\"Manzana\" está elegida dos veces.");
    const std::string before = session.state();
    e = EXPECT_ERROR(STEPKIT_EINVAL, session.set_language("es_ES"));
    CHECK(has(e.json(), "invalidLanguage"));
    CHECK(session.state() == before);

    std::string catalogue = stepkit::message_catalogue("en");
    const std::string key = "\"choice.chosenTwice\":\"";
    const std::size_t at = catalogue.find(key);
    CHECK(at != std::string::npos);
    if (at != std::string::npos) {
        std::size_t end = at + key.size();
        while (end < catalogue.size() && (catalogue[end] != '"' || catalogue[end - 1] == '\\')) ++end;
        catalogue.replace(at + key.size(), end - at - key.size(), "{choice} est choisi deux fois.");
    }
    stepkit::Session french = task.open(R"({"language": "fr", "messages": {"fr": )" + catalogue + "}}");
    e = EXPECT_ERROR(STEPKIT_EANSWER, french.set_answer(R"(["apple", "apple"])"));
    CHECK(e.message() == "Apple est choisi deux fois.");
    EXPECT_ERROR(STEPKIT_EINVAL, stepkit::message_catalogue("xx"));
}

// Issue 32 from C++: the seed an option gives is the state's, the shuffled list keeps its pinned
// choice last, a time limit runs out at tick() on a clock the test moves, and a bad seed or
// time limit is a stepkit::Error.
static void test_order_and_time_limits() {
    stepkit::Task task = stepkit::Task::compile(R"({"identifier": "o", "timeLimit": 60, "steps": [
        {"type": "question", "identifier": "q", "timeLimit": 10, "answerFormat": {"type": "textChoice",
         "style": "singleChoice", "shuffle": true, "textChoices": [{"text": "A", "value": "a"},
         {"text": "B", "value": "b"}, {"text": "C", "value": "c"}, {"text": "None", "value": "n", "pinned": true}]}},
        {"type": "question", "identifier": "r", "answerFormat": {"type": "boolean"}}]})");
    stepkit::Session session = task.open(R"({"seed": 12345})");
    std::int64_t now = T0;
    session.set_clock([&now] { return now; });
    std::string state = session.state();
    CHECK(has(state, "\"seed\":12345"));
    // PCG32 order of docs/randomization.md for seed 12345, list "q" (checked independently in
    // test_randomization.py): the pinned "n" stays last.
    CHECK(has(state, "\"order\":{\"choices\":["));
    CHECK(has(state, "\"n\"]}"));
    now = T0 + 11000;
    state = session.tick();
    CHECK(field(state, "status") == "inProgress");
    CHECK(has(state, "\"identifier\":\"r\""));
    CHECK(has(state, "timeLimitReached"));
    EXPECT_ERROR(STEPKIT_EINVAL, task.open(R"({"seed": "12345"})"));
    EXPECT_ERROR(STEPKIT_EDEFINITION, stepkit::Task::compile(R"({"identifier": "t", "timeLimit": 0, "steps": [
        {"type": "instruction", "identifier": "i"}]})"));
}

// A game step fed with inputs (docs/active-tasks.md): spatial span's seeded first sequence
// (seed 7, stream "span#game1": tiles 4 3 5, worked out by test_games.py's own generator), then
// a tower of Hanoi of two disks solved in the three legal moves, an illegal one refused.
static void test_games() {
    stepkit::Task span = stepkit::Task::compile(R"({"identifier": "g", "steps": [
        {"type": "spatialSpanMemory", "identifier": "span", "maximumTests": 1},
        {"type": "completion", "identifier": "done"}]})");
    stepkit::Session s = span.open(R"({"seed": 7})");
    std::int64_t now = T0;
    s.set_clock([&now] { return now; });
    CHECK(has(s.state(), "\"sequence\":[4,3,5]"));
    EXPECT_ERROR(STEPKIT_EANSWER, s.input(R"({"type": "tap", "target": 4})"));  // still shown
    now = T0 + 3000;
    s.input(R"({"type": "tap", "target": 4})");
    s.input(R"({"type": "tap", "target": 3})");
    std::string state = s.input(R"({"type": "tap", "target": 5})");
    CHECK(has(state, "\"identifier\":\"done\""));
    CHECK(has(s.result(), "\"score\":45"));  // 5 + 10 + 15 for the taps, 15 for the whole

    stepkit::Task hanoi = stepkit::Task::compile(R"({"identifier": "h", "steps": [
        {"type": "towerOfHanoi", "identifier": "hanoi", "numberOfDisks": 2},
        {"type": "completion", "identifier": "done"}]})");
    stepkit::Session h = hanoi.open();
    h.set_clock([&now] { return now; });
    h.input(R"({"type": "drag", "from": 0, "to": 1})");
    stepkit::Error illegal = EXPECT_ERROR(STEPKIT_EANSWER, h.input(R"({"type": "drag", "from": 0, "to": 1})"));
    CHECK(has(illegal.json(), "illegalMove"));
    EXPECT_ERROR(STEPKIT_EINVAL, h.input(R"({"type": "drag", "from": 0})"));
    h.input(R"({"type": "drag", "from": 0, "to": 2})");
    h.input(R"({"type": "drag", "from": 1, "to": 2})");
    CHECK(has(h.result(), "\"puzzleWasSolved\":true"));
}

// Issue 31 from C++: a repeating group walked with several instances, its count adding them,
// and adding past maxCount / removing below minCount / an index out of range refused, changing
// nothing; the result nests one object per instance.
static void test_instances() {
    stepkit::Task task = stepkit::Task::compile(R"({"identifier": "m", "steps": [
        {"type": "question", "identifier": "n", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 9}},
        {"type": "form", "identifier": "list", "formItems": [{"identifier": "med", "repeat": {"minCount": 1, "maxCount": 3,
          "count": {"answer": "n"}, "title": "Medication {{index}}: {{name}}"},
          "items": [{"identifier": "name", "answerFormat": {"type": "text"}}]}]}]})");
    stepkit::Session session = task.open(RUN);
    session.set_answer("2");
    std::string state = session.go_forward();
    CHECK(has(state, "\"count\":2"));
    session.set_answer(R"({"med": [{"name": "A"}, {"name": "B"}]})");
    state = session.add_instance();
    CHECK(has(state, "\"count\":3") && has(state, "\"current\":2") && has(state, "\"canAdd\":false"));
    const std::string before = session.state();
    stepkit::Error e = EXPECT_ERROR(STEPKIT_ESTATE, session.add_instance("med"));
    CHECK(has(e.json(), "tooManyInstances"));
    e = EXPECT_ERROR(STEPKIT_EINVAL, session.enter_instance("med", 3));
    CHECK(has(e.json(), "instanceOutOfRange"));
    CHECK(session.state() == before);
    state = session.remove_instance("med", 2);
    CHECK(has(state, "\"count\":2"));
    const std::string two = session.state();
    e = EXPECT_ERROR(STEPKIT_ESTATE, session.remove_instance("", 0));
    CHECK(has(e.json(), "belowCount"));
    CHECK(session.state() == two);
    session.add_instance();
    state = session.enter_instance("med", 1);
    CHECK(has(state, "\"current\":1") && has(state, "Medication 2: B"));
    session.set_answer(R"({"med": [{}, {}, {"name": "C"}]})");
    session.go_forward();
    const std::string result = session.result();
    CHECK(has(result, "\"type\":\"group\",\"instances\":[{\"identifier\":\"med\",\"index\":0"));
    CHECK(has(result, "\"index\":2,\"results\":[{\"identifier\":\"name\",\"type\":\"text\",\"answer\":\"C\""));
}

// Issue 31 from C++: a repeating group inside a repeating group (a medication's doses), the
// inner block named by its path and acting in the medication the participant is in; a path
// naming another medication and adding past the inner maxCount refused, changing nothing; the
// result nests each dose inside its medication.
static void test_nested_instances() {
    stepkit::Task task = stepkit::Task::compile(R"({"identifier": "m", "steps": [
        {"type": "form", "identifier": "list", "formItems": [{"identifier": "med", "repeat": {"minCount": 1, "maxCount": 3},
          "items": [{"identifier": "name", "answerFormat": {"type": "text"}},
                    {"identifier": "doses", "repeat": {"minCount": 1, "maxCount": 2},
                     "items": [{"identifier": "amount", "answerFormat": {"type": "numeric", "style": "decimal"}}]}]}]}]})");
    stepkit::Session session = task.open(RUN);
    session.add_instance("med");
    std::string state = session.add_instance("med.doses");
    CHECK(has(state, "\"med.doses\":{\"count\":2,\"current\":1") && has(state, "\"outerIndex\":1"));
    const std::string before = session.state();
    stepkit::Error e = EXPECT_ERROR(STEPKIT_ESTATE, session.add_instance("med.doses"));
    CHECK(has(e.json(), "tooManyInstances"));
    e = EXPECT_ERROR(STEPKIT_ESTATE, session.enter_instance("med[0].doses", 0));
    CHECK(has(e.json(), "outsideOuterInstance"));
    CHECK(session.state() == before);
    session.set_answer(R"({"med": [{"name": "A", "doses": [{"amount": 1}]}, {"name": "B", "doses": [{"amount": 2}, {"amount": 3}]}]})");
    session.go_forward();
    const std::string result = session.result();
    CHECK(has(result, "{\"identifier\":\"doses\",\"type\":\"group\",\"instances\":[{\"identifier\":\"doses\",\"index\":0"));
    CHECK(has(result, "\"answer\":3") && has(result, "\"answer\":\"B\""));
}

// Issue 31 from C++: a repeating section (a block of steps) walked once per instance, back into
// the first with its answer kept, adding past maxCount and entering an instance not reached
// refused, changing nothing; the result nests one object per instance.
static void test_step_instances() {
    stepkit::Task task = stepkit::Task::compile(R"({"identifier": "h", "steps": [
        {"type": "question", "identifier": "n", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 9}},
        {"type": "section", "identifier": "child", "repeat": {"maxCount": 3, "count": {"answer": "n"}, "title": "Child {{index}}: {{name}}"},
         "steps": [{"type": "question", "identifier": "name", "answerFormat": {"type": "text"}}]},
        {"type": "completion", "identifier": "done"}]})");
    stepkit::Session session = task.open(RUN);
    session.set_answer("2");
    std::string state = session.go_forward();
    CHECK(has(state, "\"child\":{\"count\":2,\"current\":0"));
    session.set_answer("\"Ann\"");
    state = session.go_forward();
    CHECK(has(state, "\"current\":1") && has(state, "\"answer\":null"));
    session.set_answer("\"Ben\"");
    state = session.go_backward();
    CHECK(has(state, "\"answer\":\"Ann\"") && has(state, "\"current\":0"));
    session.add_instance("child");
    const std::string before = session.state();
    stepkit::Error e = EXPECT_ERROR(STEPKIT_ESTATE, session.add_instance());
    CHECK(has(e.json(), "tooManyInstances"));
    e = EXPECT_ERROR(STEPKIT_ESTATE, session.enter_instance("child", 2));
    CHECK(has(e.json(), "instanceNotReached"));
    CHECK(session.state() == before);
    session.go_forward();
    session.go_forward();
    session.set_answer("\"Cy\"");
    session.go_forward();
    session.go_forward();
    const std::string result = session.result();
    CHECK(has(result, "\"identifier\":\"child\",\"index\":2"));
    CHECK(has(result, "\"answer\":\"Cy\""));
}

// Issue 31 from C++: a review lists each instance of a repeating section with its title, and
// review_edit_instance() goes back to a chosen instance's visit and returns to the review; an
// instance out of range and a step in no repeating block are refused, changing nothing.
static void test_review_instances() {
    stepkit::Task task = stepkit::Task::compile(R"({"identifier": "h", "steps": [
        {"type": "question", "identifier": "n", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "maximum": 3}},
        {"type": "section", "identifier": "child", "repeat": {"maxCount": 3, "count": {"answer": "n"}, "title": "Child {{index}}: {{name}}"},
         "steps": [{"type": "question", "identifier": "name", "answerFormat": {"type": "text"}}]},
        {"type": "review", "identifier": "check"},
        {"type": "completion", "identifier": "done"}]})");
    stepkit::Session session = task.open(RUN);
    session.set_answer("2");
    session.go_forward();
    session.set_answer("\"Ann\"");
    session.go_forward();
    session.set_answer("\"Ben\"");
    std::string state = session.go_forward();
    CHECK(has(state, R"("step":"name","type":"question","displayTitle":"name","skipped":false,"answers":[{"identifier":"name","label":"name","answer":"Ann","displayText":"Ann"}],"section":"child","instance":0,"instanceTitle":"Child 1: Ann")"));
    CHECK(has(state, R"("section":"child","instance":1,"instanceTitle":"Child 2: Ben")"));
    const std::string before = session.state();
    stepkit::Error e = EXPECT_ERROR(STEPKIT_EINVAL, session.review_edit_instance("name", "", 2));
    CHECK(has(e.json(), "instanceOutOfRange"));
    e = EXPECT_ERROR(STEPKIT_ESTATE, session.review_edit_instance("n", "", 0));
    CHECK(has(e.json(), "noRepeatingBlock"));
    CHECK(session.state() == before);
    state = session.review_edit_instance("name", "child", 0);
    CHECK(has(state, R"("answer":"Ann")") && has(state, R"("returnsToReview":"check")"));
    session.set_answer("\"Anna\"");
    state = session.go_forward();
    CHECK(has(state, R"("instanceTitle":"Child 1: Anna")") && has(state, R"("instanceTitle":"Child 2: Ben")"));
}

int main() {
    test_games();
    test_review_instances();
    test_instances();
    test_nested_instances();
    test_step_instances();
    test_order_and_time_limits();
    test_languages();
    test_fhir();
    test_types();
    test_version();
    test_status_names();
    test_control();
    test_compile_and_errors();
    test_walk_save_restore();
    test_audit();
    test_consent();
    test_clock_across_moves();
    test_active_and_events();
    test_error_json_reader();
    test_verify();
    test_review();
    if (failures != 0) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("stepkit.hpp: all checks passed\n");
    return 0;
}
