// test_repeat_walks.cpp — issue 31's "walk with several instances from C++", through
// include/stepkit.hpp: the medications example walked with three medications and one removed,
// its result nested one object per instance in order; the published FHIR forms with repeating
// groups (the Android FHIR SDK catalog's repeated group, LHC-Forms' min/max-occurs form, from
// ../shared/fhir/q: skipped with a message when absent) walked with three repetitions, adding
// past maxOccurs refused with nothing changed, and each QuestionnaireResponse checked against
// R4's nesting (a repeating group is several items with its linkId side by side, in the
// Questionnaire's order, each holding its own items; another item appears at most once among
// its siblings; a group has no answer; a question that does not repeat has one answer). JSON
// is read with jansson. Expected values come from the forms and the answers given here.
//
// Usage: test_repeat_walks_cpp <forms dir> <examples/tasks dir>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <jansson.h>
#include <stepkit.hpp>

static int failures = 0;
static int passed = 0;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (cond) {                                                                            \
            ++passed;                                                                          \
        } else {                                                                               \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
            ++failures;                                                                        \
        }                                                                                      \
    } while (0)

// A parsed JSON document, released with its owner.
struct Json {
    json_t *value;
    explicit Json(const std::string &text) : value(json_loads(text.c_str(), 0, nullptr)) {}
    ~Json() { json_decref(value); }
    Json(const Json &) = delete;
    Json &operator=(const Json &) = delete;
};

static std::string read_text(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

static std::string str(const json_t *object, const char *key) {
    const char *s = json_string_value(json_object_get(object, key));
    return s ? s : "";
}

static std::vector<json_t *> items_named(const json_t *parent, const std::string &link) {
    std::vector<json_t *> found;
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(parent, "item"), i, item) {
        if (str(item, "linkId") == link) found.push_back(item);
    }
    return found;
}

static long position_of(const json_t *defined, const std::string &link) {
    size_t i;
    json_t *d;
    json_array_foreach(defined, i, d) {
        if (str(d, "linkId") == link) return static_cast<long>(i);
    }
    return -1;
}

// R4's nesting rules (see the top of this file), recursively.
static void check_r4_nesting(const json_t *items, const json_t *defined) {
    std::vector<std::string> seen;
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item) {
        const std::string link = str(item, "linkId");
        const long at = position_of(defined, link);
        CHECK(at >= 0);
        if (at < 0) continue;
        const json_t *definition = json_array_get(defined, static_cast<size_t>(at));
        const bool repeats = json_is_true(json_object_get(definition, "repeats"));
        const bool group = str(definition, "type") == "group";
        if (!seen.empty() && seen.back() == link) {
            CHECK(group && repeats);
        } else {
            for (const std::string &s : seen) CHECK(s != link);
            if (!seen.empty()) CHECK(at > position_of(defined, seen.back()));
        }
        seen.push_back(link);
        if (group) {
            CHECK(json_object_get(item, "answer") == nullptr);
            CHECK(json_array_size(json_object_get(item, "item")) > 0);
            check_r4_nesting(json_object_get(item, "item"), json_object_get(definition, "item"));
        } else {
            CHECK(json_array_size(json_object_get(item, "answer")) > 0);
            CHECK(repeats || json_array_size(json_object_get(item, "answer")) == 1);
        }
    }
}

// Answer n of the child `link` of a repetition (nullptr when there is none).
static json_t *child_answer(const json_t *repetition, const std::string &link, size_t n = 0) {
    const std::vector<json_t *> child = items_named(repetition, link);
    return child.size() == 1 ? json_array_get(json_object_get(child[0], "answer"), n) : nullptr;
}

static std::string forms_dir = "../shared/fhir/q";
static std::string examples_dir = "examples/tasks";

static void test_medications_example() {
    const std::string text = read_text(examples_dir + "/medications.json");
    CHECK(!text.empty());
    stepkit::Task task = stepkit::Task::compile(text);
    stepkit::Session session = task.open();
    session.go_forward();
    session.set_answer("true");
    session.go_forward();
    session.set_answer("2");
    {
        Json state(session.go_forward());
        CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(state.value, "instances"), "medications"), "count")) == 2);
    }
    {
        Json state(session.add_instance("medications"));
        CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(state.value, "instances"), "medications"), "current")) == 2);
    }
    session.set_answer(R"({"medications": [{"name": "Ibuprofen", "dose": 400, "frequency": ["asNeeded"]},
        {"name": "Zinc", "dose": 25, "frequency": ["weekly"]},
        {"name": "Metformin", "dose": 500, "frequency": ["daily"], "reason": "diabetes"}], "sideEffects": false})");
    session.remove_instance("medications", 1);
    session.go_forward();
    session.set_answer("0");
    session.go_forward();
    session.go_forward();
    const std::string text_result = session.result();
    Json result(text_result);
    const json_t *form = nullptr;
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(result.value, "results"), i, entry) {
        if (str(entry, "identifier") == "medication") form = entry;
    }
    const json_t *group = json_array_get(json_object_get(form, "results"), 0);
    CHECK(str(group, "type") == "group");
    const json_t *instances = json_object_get(group, "instances");
    CHECK(json_array_size(instances) == 2);
    CHECK(str(json_array_get(json_object_get(json_array_get(instances, 0), "results"), 0), "answer") == "Ibuprofen");
    CHECK(str(json_array_get(json_object_get(json_array_get(instances, 1), "results"), 0), "answer") == "Metformin");
    CHECK(text_result.find("Zinc") == std::string::npos);
}

// A walk's last move: forward to the end, the run finished, and its QuestionnaireResponse
// (returned as text) nested as R4 says for the Questionnaire text `q`.
static std::string finished_response(stepkit::Session &session, const std::string &q) {
    Json done(session.go_forward());
    CHECK(str(done.value, "status") == "finished");
    const std::string text = session.result_fhir();
    Json response(text);
    Json questionnaire(q);
    check_r4_nesting(json_object_get(response.value, "item"), json_object_get(questionnaire.value, "item"));
    return text;
}

static void test_android_repeated_group() {
    const std::string q = read_text(forms_dir + "/afhir_repeated_group.json");
    CHECK(!q.empty());
    stepkit::Task task = stepkit::Task::compile_fhir(q);
    stepkit::Session session = task.open();
    for (int k = 0; k < 4; ++k) session.add_instance("1");
    session.set_answer(R"({"1": [{"1-1": "2024-01-01", "1-2": ["answer-a"]}, {"1-1": "2024-01-02"},
        {"1-1": "2024-01-03", "1-2": ["answer-c"]}, {"1-1": "2024-01-04", "1-2": ["answer-other"]}]})");
    session.remove_instance("1", 1);
    Json response(finished_response(session, q));
    const std::vector<json_t *> reps = items_named(response.value, "1");
    CHECK(reps.size() == 3);
    if (reps.size() == 3) {
        const char *dates[] = {"2024-01-01", "2024-01-03", "2024-01-04"};
        const char *codes[] = {"answer-a", "answer-c", "answer-other"};
        for (size_t k = 0; k < 3; ++k) {
            CHECK(str(child_answer(reps[k], "1-1"), "valueDate") == dates[k]);
            CHECK(str(json_object_get(child_answer(reps[k], "1-2"), "valueCoding"), "code") == codes[k]);
        }
    }
}

static void test_lhc_min_max_occurs() {
    const std::string q = read_text(forms_dir + "/lhc_min_max_occurs.json");
    CHECK(!q.empty());
    stepkit::Task task = stepkit::Task::compile_fhir(q);
    stepkit::Session session = task.open();
    {
        Json state(session.state());
        CHECK(json_integer_value(json_object_get(json_object_get(json_object_get(state.value, "instances"), "1"), "count")) == 2);
    }
    session.add_instance("1");
    const std::string before = session.state();
    try {
        session.add_instance("1");
        CHECK(false);
    } catch (const stepkit::Error &e) {
        CHECK(e.status() == STEPKIT_ESTATE && e.json().find("tooManyInstances") != std::string::npos);
    }
    CHECK(session.state() == before);
    session.set_answer(R"({"1": [{"1.1": ["Apple", "Orange"], "1.2": "first", "1.3": ["Pear", "Peach"]},
        {"1.1": ["Banana", "Pear"], "1.3": ["Apple", "Banana"]},
        {"1.1": ["Peach", "Apple"], "1.2": "third", "1.3": ["Orange", "Pear"]}]})");
    Json response(finished_response(session, q));
    const std::vector<json_t *> reps = items_named(response.value, "1");
    CHECK(reps.size() == 3);
    if (reps.size() == 3) {
        CHECK(str(child_answer(reps[0], "1.2"), "valueString") == "first");
        CHECK(items_named(reps[1], "1.2").empty());
        CHECK(str(child_answer(reps[2], "1.2"), "valueString") == "third");
        for (json_t *rep : reps) {
            CHECK(json_array_size(json_object_get(items_named(rep, "1.1").at(0), "answer")) == 2);
            CHECK(json_array_size(json_object_get(items_named(rep, "1.3").at(0), "answer")) == 2);
        }
    }
}

int main(int argc, char **argv) {
    if (argc > 1) forms_dir = argv[1];
    if (const char *env = std::getenv("STEPKIT_FHIR_FORMS")) {
        if (*env) forms_dir = env;
    }
    if (argc > 2) examples_dir = argv[2];
    try {
        test_medications_example();
        struct stat st;
        if (stat(forms_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            test_android_repeated_group();
            test_lhc_min_max_occurs();
        } else {
            std::printf("SKIP: the published FHIR forms are not here: %s is absent (set STEPKIT_FHIR_FORMS); "
                        "only the medications example was walked\n", forms_dir.c_str());
        }
    } catch (const stepkit::Error &e) {
        std::fprintf(stderr, "unexpected stepkit::Error: %s\n", e.json().c_str());
        ++failures;
    }
    std::printf("%d passed, %d failed\n", passed, failures);
    return failures == 0 && passed > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
