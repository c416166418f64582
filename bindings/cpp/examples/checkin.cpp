// checkin.cpp — StepKit from C++ (include/stepkit.hpp): compile a task, walk a session with a
// clock of the host's choosing and an event callback, handle a refused answer, save and restore,
// and print the task result.
//
//     c++ -std=c++17 checkin.cpp $(pkg-config --cflags --libs stepkit)
//     # in CMake: find_package(StepKit 0.1 REQUIRED)
//     #           target_link_libraries(app PRIVATE StepKit::stepkit)
#include <cstdint>
#include <iostream>
#include <string>

#include <stepkit.hpp>

int main() {
    const std::string definition = R"({
        "identifier": "checkin",
        "steps": [
            {"type": "question", "identifier": "mood", "title": "Mood",
             "answerFormat": {"type": "scale", "minimum": 1, "maximum": 5}},
            {"type": "question", "identifier": "slept", "title": "Did you sleep well?",
             "answerFormat": {"type": "boolean"}},
            {"type": "completion", "identifier": "done", "title": "Thank you"}
        ]})";
    try {
        std::cout << "StepKit " << stepkit::version() << "\n";
        stepkit::Task task = stepkit::Task::compile(definition);
        stepkit::Session session =
            task.open(R"({"taskRunUUID": "0A2B3C4D-1111-4222-8333-444455556666"})");

        // Time is the host's to give: here a fixed start, one minute per step.
        std::int64_t now_ms = 1767225600000;  // 2026-01-01T00:00:00Z
        session.set_clock([&now_ms] { return now_ms; });
        int events = 0;
        session.set_event_callback([&events](std::string_view) { ++events; });

        try {
            session.set_answer("9");
        } catch (const stepkit::Error &e) {
            std::cout << e.code() << " at \"" << e.path() << "\": " << e.message() << "\n";
        }
        session.set_answer("4");
        now_ms += 60000;
        session.go_forward();

        // Save mid-run, and go on in a restored session (the same step and answers).
        const std::string saved = session.save();
        stepkit::Session restored = task.restore(saved);
        restored.set_clock([&now_ms] { return now_ms; });
        restored.set_answer("true");
        now_ms += 60000;
        restored.go_forward();
        restored.go_forward();  // the completion step: the task completes

        std::cout << events << " events\n" << restored.result() << "\n";
        return 0;
    } catch (const stepkit::Error &e) {
        std::cerr << "error " << e.status() << ": " << e.json() << "\n";
        return 1;
    }
}
