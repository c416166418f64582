/*
 * stepkit.hpp — a header-only C++17 API over the C ABI of include/stepkit.h.
 *
 * It adds ownership and exceptions, nothing else: every call is one C call, every input and
 * output is the same UTF-8 JSON text as in C (as std::string, so the host picks its own JSON
 * library), and the names follow the C functions (stepkit_session_go_forward() is
 * Session::go_forward()). Read include/stepkit.h for what each call does, accepts and returns.
 *
 *     stepkit::Task task = stepkit::Task::compile(definition_json);
 *     stepkit::Session session = task.open(R"({"taskRunUUID": "..."})");
 *     std::string state = session.set_answer("4");      // the new state, JSON
 *     session.go_forward();
 *     std::string result = session.result();
 *
 * Ownership. stepkit::Task and stepkit::Session own their handle: they are move-only, and the
 * destructor frees the handle (a moved-from object holds none; calling it throws stepkit::Error
 * with STEPKIT_EINVAL, as the C function does for a NULL handle). A session keeps its task alive
 * inside the library, so a Task may be destroyed while its sessions are in use. handle() gives
 * the C handle for calls this header does not wrap; it stays owned by the object.
 *
 * Errors. A failing call throws stepkit::Error: status() is the STEPKIT_E* code, json() the
 * error JSON of stepkit_last_error(), and code(), message(), path() its members (what() is the
 * message). A text argument holding a NUL character is refused before the library is called,
 * because C would see only its first part: STEPKIT_EPARSE for JSON, STEPKIT_EINVAL otherwise.
 * Options given as an empty string mean "no options" (NULL in C).
 *
 * Clocks and event callbacks take any callable. The header keeps the callable on the heap,
 * owned by the Session (clock) or by the library (event callback, released through
 * stepkit_session_set_event_callback()'s free_user_data), so it stays valid when the Session
 * object is moved, and is destroyed when it is replaced, removed or the session is freed. An
 * exception thrown by a clock or a callback never crosses into C: a clock that throws counts as
 * returning its last good time (the system time before it had one), a callback that throws
 * does not stop the other events; the first such exception is rethrown by the Session method
 * that called the library, after that call has completed (it has taken effect: read state()).
 * When the call itself failed, its stepkit::Error is thrown instead.
 *
 * Threads: as in C. A Task may be used from any thread; calls on one Session are serialized by
 * the library. A clock runs on the thread that called into the session, under the session's lock
 * (it must not call into the same session); event callbacks run on the calling thread after the
 * lock is released (they may call into the session).
 */
#ifndef STEPKIT_HPP
#define STEPKIT_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "stepkit.h"

namespace stepkit {

/* The version of the library actually loaded ("0.1.0"), and its STEPKIT_VERSION_NUMBER. */
inline std::string version() { return stepkit_version(); }
inline int version_number() { return stepkit_version_number(); }

/* A failed call: the status code and the error JSON (see "Error JSON" in stepkit.h). */
class Error : public std::runtime_error {
public:
    Error(int status, std::string json);

    int status() const noexcept { return status_; }
    /* "EANSWER", "ESTATE"...: the status code's name without the STEPKIT_ prefix. */
    const std::string &code() const noexcept { return code_; }
    /* A sentence a host may show as it is (also what()). */
    const std::string &message() const noexcept { return message_; }
    /* The place in the JSON argument at fault ("steps[3].answerFormat"), or "". */
    const std::string &path() const noexcept { return path_; }
    /* The whole error JSON, "errors" included. */
    const std::string &json() const noexcept { return json_; }

private:
    int status_;
    std::string json_;
    std::string code_;
    std::string message_;
    std::string path_;
};

class Session;

namespace detail {

/* Reads the string member `key` of the top-level object of `json` ("" when absent or not a
 * string): enough of JSON to read the library's own error objects without imposing a JSON
 * library. Bounded: one pass, nesting tracked by a counter. */
inline std::string top_level_string(std::string_view json, std::string_view key) {
    std::size_t i = 0;
    const std::size_t n = json.size();
    auto skip_space = [&] {
        while (i < n && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t'))
            ++i;
    };
    auto hex4 = [&](std::size_t at, unsigned &value) {
        if (at + 4 > n)
            return false;
        value = 0;
        for (std::size_t k = at; k < at + 4; ++k) {
            const char c = json[k];
            value <<= 4;
            if (c >= '0' && c <= '9') value |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f') value |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') value |= unsigned(c - 'A' + 10);
            else return false;
        }
        return true;
    };
    auto append_utf8 = [](std::string &out, unsigned cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    };
    /* A string starting at json[i] == '"': decoded into *out (when not null); false if broken. */
    auto read_string = [&](std::string *out) {
        ++i;
        while (i < n) {
            const char c = json[i++];
            if (c == '"')
                return true;
            if (c != '\\') {
                if (out) *out += c;
                continue;
            }
            if (i >= n)
                return false;
            const char e = json[i++];
            char plain = 0;
            switch (e) {
            case '"': plain = '"'; break;
            case '\\': plain = '\\'; break;
            case '/': plain = '/'; break;
            case 'b': plain = '\b'; break;
            case 'f': plain = '\f'; break;
            case 'n': plain = '\n'; break;
            case 'r': plain = '\r'; break;
            case 't': plain = '\t'; break;
            case 'u': {
                unsigned cp = 0;
                if (!hex4(i, cp))
                    return false;
                i += 4;
                if (cp >= 0xD800 && cp < 0xDC00) {
                    unsigned low = 0;
                    if (i + 1 < n && json[i] == '\\' && json[i + 1] == 'u' && hex4(i + 2, low) &&
                        low >= 0xDC00 && low < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        i += 6;
                    } else {
                        cp = 0xFFFD;
                    }
                } else if (cp >= 0xDC00 && cp < 0xE000) {
                    cp = 0xFFFD;
                }
                if (out) append_utf8(*out, cp);
                continue;
            }
            default: return false;
            }
            if (out) *out += plain;
        }
        return false;
    };
    /* The value starting at json[i]: skipped up to the ',' or '}' that ends it. */
    auto skip_value = [&] {
        std::size_t depth = 0;
        while (i < n) {
            const char c = json[i];
            if (c == '"') {
                if (!read_string(nullptr))
                    return false;
            } else if (c == '{' || c == '[') {
                ++depth;
                ++i;
            } else if (c == '}' || c == ']') {
                if (depth == 0)
                    return true;
                --depth;
                ++i;
            } else if (c == ',' && depth == 0) {
                return true;
            } else {
                ++i;
            }
        }
        return false;
    };

    skip_space();
    if (i >= n || json[i] != '{')
        return {};
    ++i;
    while (true) {
        skip_space();
        if (i >= n || json[i] != '"')
            return {};
        std::string name;
        if (!read_string(&name))
            return {};
        skip_space();
        if (i >= n || json[i] != ':')
            return {};
        ++i;
        skip_space();
        if (i >= n)
            return {};
        if (name == key) {
            std::string value;
            if (json[i] != '"' || !read_string(&value))
                return {};
            return value;
        }
        if (!skip_value())
            return {};
        skip_space();
        if (i >= n || json[i] != ',')
            return {};
        ++i;
    }
}

/* A JSON string literal of `text`, for error JSON made on the C++ side. */
inline std::string json_quote(std::string_view text) {
    static const char digits[] = "0123456789abcdef";
    std::string out = "\"";
    for (const char ch : text) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20) {
            out += "\\u00";
            out += digits[c >> 4];
            out += digits[c & 0xF];
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

/* The status's name from the library (stepkit_status_name): the header keeps no table of its
 * own. A number the library does not know names the bug it is. */
inline const char *status_name(int status) {
    const char *name = stepkit_status_name(status);
    return name != nullptr ? name : "EINTERNAL";
}

/* An error found before the library is called, in the library's error JSON shape. */
[[noreturn]] inline void fail_here(int status, std::string_view error_code,
                                   std::string_view message) {
    const std::string problem = "{\"code\": " + json_quote(error_code) +
                                ", \"message\": " + json_quote(message) + ", \"path\": \"\"}";
    throw Error(status, "{\"status\": " + std::to_string(status) +
                            ", \"code\": " + json_quote(status_name(status)) +
                            ", \"message\": " + json_quote(message) +
                            ", \"path\": \"\", \"errors\": [" + problem + "]}");
}

/* The failing call's error, read on this thread right after it. */
[[noreturn]] inline void fail(int status) {
    const char *json = stepkit_last_error();
    if (json == nullptr)
        fail_here(status, "noErrorReported", "The call failed without an error description.");
    throw Error(status, json);
}

inline void check(int status) {
    if (status != STEPKIT_OK)
        fail(status);
}

/* The text for a `const char *` argument: refused if C would see only part of it. */
inline const char *c_text(const std::string &text, bool is_json, const char *what) {
    if (text.find('\0') != std::string::npos)
        fail_here(is_json ? STEPKIT_EPARSE : STEPKIT_EINVAL, "nulCharacter",
                  std::string(what) + " contains a NUL character.");
    return text.c_str();
}

/* Options: "" means none (NULL). */
inline const char *c_options(const std::string &options) {
    return options.empty() ? nullptr : c_text(options, true, "The options");
}

/* A string the library returned through `char **out`: copied, then freed. */
inline std::string take(char *out) {
    struct Free {
        void operator()(char *p) const noexcept { stepkit_string_free(p); }
    };
    std::unique_ptr<char, Free> owned(out);
    return owned ? std::string(owned.get()) : std::string();
}

/* The first exception a clock or an event callback threw on this thread during a library
 * call, held until the Session method that made the call rethrows it. (Clocks and callbacks
 * run on the calling thread, so a thread-local slot is exactly theirs.) */
inline std::exception_ptr &pending_exception() {
    static thread_local std::exception_ptr pending;
    return pending;
}

inline void hold_exception(std::exception_ptr e) {
    if (!pending_exception())
        pending_exception() = std::move(e);
}

inline void rethrow_pending() {
    if (std::exception_ptr e = std::exchange(pending_exception(), nullptr))
        std::rethrow_exception(e);
}

/* The C result of a Session call: its own error first, then a clock's or callback's. */
inline void finish_call(int status) {
    if (status != STEPKIT_OK) {
        pending_exception() = nullptr;
        fail(status);
    }
    rethrow_pending();
}

inline std::int64_t system_now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

/* The clock a Session owns; its address is the C clock's user_data. */
struct ClockState {
    std::function<std::int64_t()> fn;
    std::int64_t last_good;

    static std::int64_t call(void *user_data) noexcept {
        auto *self = static_cast<ClockState *>(user_data);
        try {
            self->last_good = self->fn();
        } catch (...) {
            hold_exception(std::current_exception());
        }
        return self->last_good;
    }
};

/* An event callback, owned by the library once set (freed through free_user_data). */
struct EventState {
    std::function<void(std::string_view)> fn;

    static void call(const char *event_json, void *user_data) noexcept {
        try {
            static_cast<EventState *>(user_data)->fn(event_json ? event_json : "");
        } catch (...) {
            hold_exception(std::current_exception());
        }
    }
    static void release(void *user_data) noexcept { delete static_cast<EventState *>(user_data); }
};

} // namespace detail

inline Error::Error(int status, std::string json)
    : std::runtime_error(detail::top_level_string(json, "message")), status_(status),
      json_(std::move(json)), code_(detail::top_level_string(json_, "code")),
      message_(detail::top_level_string(json_, "message")),
      path_(detail::top_level_string(json_, "path")) {}

/* One run of a task: owns a stepkit_session. Every method returning std::string returns the
 * JSON the C function stores in *out (most: the session's new state). */
class Session {
public:
    Session() noexcept = default;
    /* Takes ownership of a handle from the C API. */
    explicit Session(stepkit_session *handle) noexcept : handle_(handle) {}
    Session(Session &&other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)), clock_(std::move(other.clock_)) {}
    Session &operator=(Session &&other) noexcept {
        if (this != &other) {
            reset();
            handle_ = std::exchange(other.handle_, nullptr);
            clock_ = std::move(other.clock_);
        }
        return *this;
    }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
    ~Session() { reset(); }

    stepkit_session *handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    std::string state() const {
        return out_call([this](char **out) { return stepkit_session_state(handle_, out); });
    }
    std::string result() const {
        return out_call([this](char **out) { return stepkit_session_result(handle_, out); });
    }
    /* The answers as a FHIR R4 QuestionnaireResponse (stepkit_session_result_fhir()): only for a
     * task made by Task::compile_fhir(); otherwise throws Error(STEPKIT_EINVAL, "notFHIR"). */
    std::string result_fhir() const {
        return out_call([this](char **out) { return stepkit_session_result_fhir(handle_, out); });
    }
    /* Restoration data (JSON text): keep it unchanged and give it to Task::restore(). */
    std::string save() const {
        return out_call([this](char **out) { return stepkit_session_save(handle_, out); });
    }

    std::string set_answer(const std::string &answer_json) {
        const char *answer = detail::c_text(answer_json, true, "The answer");
        char *out = nullptr;
        const int status = stepkit_session_set_answer(handle_, answer, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    std::string go_forward() {
        return out_call([this](char **out) { return stepkit_session_go_forward(handle_, out); });
    }
    std::string go_backward() {
        return out_call([this](char **out) { return stepkit_session_go_backward(handle_, out); });
    }
    std::string skip() {
        return out_call([this](char **out) { return stepkit_session_skip(handle_, out); });
    }
    /* Shows the session in `language` (a BCP-47 tag, "fr-CA" → "fr" → the task's default) from
     * now on, texts and the engine's messages alike; every answer stays
     * (stepkit_session_set_language()). Throws Error (STEPKIT_EINVAL "invalidLanguage") for a
     * tag that is not BCP-47, changing nothing. */
    /* "Edit" on the current review step: back to `step_identifier`, which, once left, leads back
     * to the review; answers the new path leaves out are dropped (stepkit_session_review_edit()).
     * Throws Error (STEPKIT_ESTATE "notReview", "notReviewed") changing nothing. */
    std::string review_edit(const std::string &step_identifier) {
        const char *text = detail::c_text(step_identifier, false, "The step identifier");
        char *out = nullptr;
        const int status = stepkit_session_review_edit(handle_, text, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    /* "Edit" on the current review step into instance `index` (from 0) of a repeating block of
     * `step_identifier` (stepkit_session_review_edit_instance()): a repeating section's step in
     * that instance, or the step with its repeating group or question in that instance. `block`
     * names the block as the review's entry does ("" is the step's only block). Throws Error
     * (STEPKIT_EINVAL "instanceOutOfRange", "unknownBlock", "blockRequired"; STEPKIT_ESTATE
     * "notReview", "notReviewed", "noRepeatingBlock") changing nothing. */
    std::string review_edit_instance(const std::string &step_identifier, const std::string &block, std::int64_t index) {
        const char *text = detail::c_text(step_identifier, false, "The step identifier");
        const char *name = block.empty() ? nullptr : detail::c_text(block, false, "The block");
        char *out = nullptr;
        const int status = stepkit_session_review_edit_instance(handle_, text, name, index, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }

    std::string set_language(const std::string &language) {
        const char *text = detail::c_text(language, false, "The language");
        char *out = nullptr;
        const int status = stepkit_session_set_language(handle_, text, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    /* Repeating blocks (stepkit_session_add_instance() and the two after it): `block` names a
     * block of the current step ("" is its only block), `index` counts from 0; each returns the
     * new state, whose "instances" says how many each block has and which one is current.
     * Throws Error (STEPKIT_ESTATE "tooManyInstances", "tooFewInstances", "belowCount",
     * "noRepeatingBlock"; STEPKIT_EINVAL "instanceOutOfRange", "unknownBlock"), changing nothing.
     * A repeating group inside a repeating group is named by its path ("medication.doses"): its
     * instances in the medication the participant is in ("medication[1].doses" names it too;
     * STEPKIT_ESTATE "outsideOuterInstance" when it is another).
     * In a repeating section (a block of steps, named by the section) adding does not move,
     * removing the current instance goes back to the visit before it, and entering goes back to
     * an instance's first step (STEPKIT_ESTATE "instanceNotReached" for a later one). */
    std::string add_instance(const std::string &block = std::string()) {
        const char *name = block.empty() ? nullptr : detail::c_text(block, false, "The block");
        char *out = nullptr;
        const int status = stepkit_session_add_instance(handle_, name, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    std::string remove_instance(const std::string &block, std::int64_t index) {
        const char *name = block.empty() ? nullptr : detail::c_text(block, false, "The block");
        char *out = nullptr;
        const int status = stepkit_session_remove_instance(handle_, name, index, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    std::string enter_instance(const std::string &block, std::int64_t index) {
        const char *name = block.empty() ? nullptr : detail::c_text(block, false, "The block");
        char *out = nullptr;
        const int status = stepkit_session_enter_instance(handle_, name, index, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    /* "completed", "saved", "discarded", "failed" or "earlyTermination" (a host cannot finish a run
     * "timedOut": only a time limit does, at tick()). */
    std::string finish(const std::string &reason) {
        const char *text = detail::c_text(reason, false, "The finish reason");
        char *out = nullptr;
        const int status = stepkit_session_finish(handle_, text, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }

    /* "start", "suspend", "resume", "finish", "suspendTask" or "resumeTask"
     * (stepkit_session_control()). */
    std::string control(const std::string &op) {
        const char *text = detail::c_text(op, false, "The operation");
        char *out = nullptr;
        const int status = stepkit_session_control(handle_, text, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    /* Deprecated: control()'s name before the ABI took verbs (stepkit_session_active(), the
     * same C function under its old name); kept for one release. */
    std::string active(const std::string &op) {
        const char *text = detail::c_text(op, false, "The operation");
        char *out = nullptr;
        const int status = stepkit_session_active(handle_, text, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    std::string tick() {
        return out_call([this](char **out) { return stepkit_session_tick(handle_, out); });
    }

    /* The audit trail from event `start_index` (stepkit_session_audit()):
     * {"count", "enabled", "events": [...]}. */
    std::string audit(std::int64_t start_index = 0) {
        return out_call([this, start_index](char **out) { return stepkit_session_audit(handle_, start_index, out); });
    }
    /* Who makes the calls that follow and why (stepkit_session_set_audit_context()); an empty
     * string is none. */
    void set_audit_context(const std::string &actor, const std::string &reason = std::string()) {
        const char *a = actor.empty() ? nullptr : detail::c_text(actor, false, "The actor");
        const char *r = reason.empty() ? nullptr : detail::c_text(reason, false, "The reason");
        detail::check(stepkit_session_set_audit_context(handle_, a, r));
    }
    /* What the host observed on the current step, a step the state marks "reportedByHost"
     * (stepkit_session_report()): {"step": "<identifier>", ...}, e.g. a signature's
     * {"step": "sig", "typedName": "Ada Lovelace"}. Returns the new state. Throws Error
     * (STEPKIT_ESTATE not the current or not a reported step, STEPKIT_EANSWER a report that
     * does not fit, STEPKIT_EIO the captured file could not be written), changing nothing. */
    std::string report(const std::string &report_json) {
        const char *report = detail::c_text(report_json, true, "The report");
        char *out = nullptr;
        const int status = stepkit_session_report(handle_, report, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }
    /* The run's consent document, signed as far as it is, with its Markdown and HTML
     * (stepkit_session_consent_document()). Throws Error (STEPKIT_ESTATE) when the task has no
     * consent review step. */
    std::string consent_document() {
        return out_call([this](char **out) { return stepkit_session_consent_document(handle_, out); });
    }
    /* Samples: a JSON object or an array of objects. */
    std::string record(const std::string &recorder_id, const std::string &samples_json) {
        const char *recorder = detail::c_text(recorder_id, false, "The recorder identifier");
        const char *samples = detail::c_text(samples_json, true, "The samples");
        char *out = nullptr;
        const int status = stepkit_session_record(handle_, recorder, samples, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }

    /* One input for the current step's game (stepkit_session_input()): {"type": "tap",
     * "target": n} and the like, with an optional "time"; returns the new state. */
    std::string input(const std::string &input_json) {
        const char *input = detail::c_text(input_json, true, "The input");
        char *out = nullptr;
        const int status = stepkit_session_input(handle_, input, &out);
        std::string state = detail::take(out);
        detail::finish_call(status);
        return state;
    }

    /* The session's clock: `clock()` returns milliseconds since the epoch. An empty function
     * restores the system clock. */
    void set_clock(std::function<std::int64_t()> clock) {
        if (!clock) {
            detail::check(stepkit_session_set_clock(handle_, nullptr, nullptr));
            clock_.reset();
            return;
        }
        auto state = std::make_unique<detail::ClockState>();
        state->fn = std::move(clock);
        state->last_good = detail::system_now_ms();
        const int status =
            stepkit_session_set_clock(handle_, &detail::ClockState::call, state.get());
        if (status != STEPKIT_OK) {
            detail::pending_exception() = nullptr;
            detail::fail(status); /* the old clock stays set, and kept */
        }
        clock_ = std::move(state); /* the old one is no longer called: release it */
        detail::rethrow_pending(); /* the new clock, read for the start time, threw */
    }

    /* The event callback: `callback(event_json)` for every event, the text borrowed for the
     * call. An empty function removes it. */
    void set_event_callback(std::function<void(std::string_view)> callback) {
        if (!callback) {
            detail::check(stepkit_session_set_event_callback(handle_, nullptr, nullptr, nullptr));
            return;
        }
        auto state = std::make_unique<detail::EventState>();
        state->fn = std::move(callback);
        const int status = stepkit_session_set_event_callback(
            handle_, &detail::EventState::call, state.get(), &detail::EventState::release);
        detail::check(status);
        state.release(); /* the library owns it now, and frees it through release() */
    }

private:
    /* `call(out)` makes the C call. (A lambda rather than a function pointer: each C function
     * is then called directly, never through an address taken at load time.) */
    template <typename Call> std::string out_call(Call call) const {
        char *out = nullptr;
        const int status = call(&out);
        std::string text = detail::take(out);
        detail::finish_call(status);
        return text;
    }

    void reset() noexcept {
        if (handle_ != nullptr)
            stepkit_session_free(std::exchange(handle_, nullptr)); /* releases the callback */
        clock_.reset(); /* after the free: no call can still be using it */
    }

    stepkit_session *handle_ = nullptr;
    std::unique_ptr<detail::ClockState> clock_;
};

/* A compiled, immutable task definition: owns a stepkit_task. */
class Task {
public:
    Task() noexcept = default;
    /* Takes ownership of a handle from the C API. */
    explicit Task(stepkit_task *handle) noexcept : handle_(handle) {}
    Task(Task &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Task &operator=(Task &&other) noexcept {
        if (this != &other) {
            stepkit_task_free(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    Task(const Task &) = delete;
    Task &operator=(const Task &) = delete;
    ~Task() { stepkit_task_free(handle_); }

    /* Compiles a task definition (docs/task-format.md); with options: {"limits": {...}}. */
    static Task compile(const std::string &task_json, const std::string &options = {}) {
        const char *json = detail::c_text(task_json, true, "The task definition");
        stepkit_task *task = nullptr;
        const int status = options.empty()
                               ? stepkit_task_compile(json, &task)
                               : stepkit_task_compile_with_options(json, detail::c_options(options),
                                                                   &task);
        detail::check(status);
        return Task(task);
    }

    /* Imports a FHIR R4 Questionnaire (stepkit_task_compile_fhir(); docs/fhir.md); options:
     * {"strict": bool, "requiredAnswersChecked": "atCompletion" (default) | "perStep",
     * "valueSets": {URL: [{"system", "code", "display"}, ...]}, "limits": {...}}. Its sessions
     * give Session::result_fhir(). */
    static Task compile_fhir(const std::string &questionnaire_json, const std::string &options = {}) {
        const char *json = detail::c_text(questionnaire_json, true, "The Questionnaire");
        stepkit_task *task = nullptr;
        detail::check(stepkit_task_compile_fhir(json, detail::c_options(options), &task));
        return Task(task);
    }

    /* The translation of a FHIR R4 Questionnaire without compiling a handle
     * (stepkit_task_translate_fhir()): {"task": definition, "report": [{"linkId", "path",
     * "code", "reason"}]}. */
    static std::string translate_fhir(const std::string &questionnaire_json, const std::string &options = {}) {
        const char *json = detail::c_text(questionnaire_json, true, "The Questionnaire");
        char *out = nullptr;
        const int status = stepkit_task_translate_fhir(json, detail::c_options(options), &out);
        std::string text = detail::take(out);
        detail::check(status);
        return text;
    }

    stepkit_task *handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    /* {"identifier", "fingerprint", "stepCount", "steps", "sections", "branching",
     * "requestedPermissions", "recorders", "calculations"}, as stepkit_task_info() gives it:
     * "fingerprint" names the task as Session::save()'s data does (working it out needs
     * libcrypto: STEPKIT_EIO "libcryptoUnavailable" where it cannot be loaded), "recorders"
     * lists every recorder the task can run. */
    std::string info() const {
        return out_call([this](char **out) { return stepkit_task_info(handle_, out); });
    }
    /* The rule graph's labelled edges, as stepkit_task_graph() gives them: {"edges": [{"from",
     * "to", "kind", ...}]} */
    std::string graph() const {
        return out_call([this](char **out) { return stepkit_task_graph(handle_, out); });
    }
    /* The static checker's report: {"problems": [...], "errors": N, "warnings": N} */
    std::string check() const {
        return out_call([this](char **out) { return stepkit_task_check(handle_, out); });
    }
    /* Verifies a submitted task result (or, for a task imported from FHIR, a
     * QuestionnaireResponse) by replaying it through the task, as stepkit_task_verify_result()
     * does (docs/verify.md): {"verified", "divergences": [{"code", "message", "path", ...}],
     * "result": the engine's own, ...}. Options as for stepkit_task_verify_result() ("" for
     * none). A submission that cannot be read (not JSON, past the limits) throws. */
    std::string verify(const std::string &submitted_json, const std::string &options = {}) const {
        const char *submitted = detail::c_text(submitted_json, true, "The submission");
        const char *opts = detail::c_options(options);
        return out_call([&](char **out) { return stepkit_task_verify_result(handle_, submitted, opts, out); });
    }

    /* The read-only review of a saved run (restoration data or an autosave file's text, restored
     * under `options` as stepkit_session_restore() does; "" for none) or of a task result:
     * {"taskIdentifier", "taskRunUUID", "source", "steps": [...]} (stepkit_task_review()). Throws
     * Error for a run that is neither, of another task, or that does not restore. */
    std::string review(const std::string &run_json, const std::string &options = {}) const {
        const char *run = detail::c_text(run_json, true, "The run");
        const char *opts = detail::c_options(options);
        return out_call([&](char **out) { return stepkit_task_review(handle_, run, opts, out); });
    }

    /* A new session on its first step; options as for stepkit_session_open() ("" for none). */
    Session open(const std::string &options = {}) const {
        const char *opts = detail::c_options(options);
        stepkit_session *session = nullptr;
        detail::check(stepkit_session_open(handle_, opts, &session));
        return Session(session);
    }

    /* A session rebuilt from Session::save()'s data; options as for stepkit_session_restore(). */
    Session restore(const std::string &saved_json, const std::string &options = {}) const {
        const char *saved = detail::c_text(saved_json, true, "The restoration data");
        const char *opts = detail::c_options(options);
        stepkit_session *session = nullptr;
        const int status = stepkit_session_restore(handle_, saved, opts, &session);
        if (status != STEPKIT_OK)
            detail::fail(status);
        return Session(session);
    }

private:
    template <typename Call> std::string out_call(Call call) const {
        char *out = nullptr;
        const int status = call(&out);
        std::string text = detail::take(out);
        detail::check(status);
        return text;
    }

    stepkit_task *handle_ = nullptr;
};

/* A message catalogue StepKit ships ("en", "de", "es") as JSON, the reference for a host's own
 * (stepkit_message_catalogue()). Throws Error (STEPKIT_EINVAL) for any other language. */
inline std::string message_catalogue(const std::string &language) {
    const char *text = detail::c_text(language, false, "The language");
    char *out = nullptr;
    const int status = stepkit_message_catalogue(text, &out);
    std::string json = detail::take(out);
    detail::check(status);
    return json;
}

} // namespace stepkit

#endif /* STEPKIT_HPP */
