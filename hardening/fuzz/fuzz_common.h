/* Shared helpers of the StepKit fuzz targets (hardening/fuzz/). Not part of the library. */
#ifndef STEPKIT_FUZZ_COMMON_H
#define STEPKIT_FUZZ_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr's struct dl_phdr_info (fuzz_skip_byte_compare_hooks) */
#endif
#include <errno.h>
#include <link.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "stepkit.h"
#include "../../bindings/c/tests/read_file.h"

#ifndef STEPKIT_EXAMPLES_DIR
#define STEPKIT_EXAMPLES_DIR "examples/tasks"
#endif

/* Hardening-only functions of the library, compiled in with -DSTEPKIT_HARDENING (hardening/fuzz/run
 * builds it so; Sources/StepKit/ABI/HardeningExports.swift), not part of include/stepkit.h. */
/* A new, independent session handle holding a copy of `session` as it is (same run, clock and
 * options; no event callback, no autosave). */
int stepkit_hardening_session_copy(stepkit_session *session, stepkit_session **out_session);

static const char *const fuzz_task_names[] = {"headache", "daily-checkin", "health-survey",
                                              "intake", "medications", "short-walk"};
#define FUZZ_TASK_COUNT 6

/* An oracle failure: print and abort so libFuzzer keeps the input. */
#define FUZZ_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "FUZZ ORACLE FAILED (%s:%d): %s\n", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\nlast_error: %s\n", stepkit_last_error() ? stepkit_last_error() : "(null)"); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

static char *fuzz_example_text(const char *name) {
    const char *dir = getenv("STEPKIT_EXAMPLES");
    if (!dir) dir = STEPKIT_EXAMPLES_DIR;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    char *text = read_file(path, NULL);
    if (!text) { fprintf(stderr, "cannot read %s\n", path); abort(); }
    return text;
}

static stepkit_task *fuzz_compile_example(const char *name) {
    char *text = fuzz_example_text(name);
    stepkit_task *task = NULL;
    int rc = stepkit_task_compile(text, &task);
    if (rc != STEPKIT_OK) { fprintf(stderr, "example %s does not compile: %s\n", name, stepkit_last_error()); abort(); }
    free(text);
    return task;
}

/* Copies fuzz bytes into a NUL-terminated string (an embedded NUL just ends it early). */
static char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* A documented status code. */
static int fuzz_known_status(int rc) { return rc <= 0 && rc >= STEPKIT_EINTERNAL; }

/* The library's 1- and 2-byte comparison hooks, pointed at a function that does nothing when the
 * run does not use libFuzzer's value profile. libFuzzer's hooks for those sizes only set bits in
 * the value-profile map (its table of recent comparisons, which guides mutations, keeps 4- and
 * 8-byte operands only), and that map is read only with -use_value_profile=1, which
 * hardening/fuzz/run does not pass; so the calls change nothing the fuzzer does. They are most of
 * the engine's comparison call sites (Swift compares enum tags and bytes: about 103,000 of
 * 128,000), and in the answers target the 1-byte hook itself was a tenth of the run (most of it the JSON
 * writer's byte tests). The 4- and 8-byte hooks, switches and indirect calls are left as they are.
 * The library calls the hooks through its PLT, resolved to the harness's (libFuzzer's) own
 * definitions; every target's harness rewrites those slots of libstepkit.so only, at start-up. Returns how many slots it
 * rewrote (0 with -use_value_profile=1, or when the library has no such slots: a plain build). */
#include <sys/mman.h>
#include <unistd.h>
__attribute__((no_sanitize("coverage"))) static void fuzz_ignore_cmp1(uint8_t a, uint8_t b) { (void)a; (void)b; }
__attribute__((no_sanitize("coverage"))) static void fuzz_ignore_cmp2(uint16_t a, uint16_t b) { (void)a; (void)b; }

static int fuzz_patch_library_slots(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    if (!strstr(info->dlpi_name, "libstepkit")) return 0;
    ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 0;
    const ElfW(Rela) *rel = NULL;
    size_t relsize = 0;
    const ElfW(Sym) *symbols = NULL;
    const char *names = NULL;
    for (ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_JMPREL) rel = (const ElfW(Rela) *)d->d_un.d_ptr;
        else if (d->d_tag == DT_PLTRELSZ) relsize = d->d_un.d_val;
        else if (d->d_tag == DT_SYMTAB) symbols = (const ElfW(Sym) *)d->d_un.d_ptr;
        else if (d->d_tag == DT_STRTAB) names = (const char *)d->d_un.d_ptr;
    }
    if (!rel || !symbols || !names) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (size_t k = 0; k < relsize / sizeof *rel; k++) {
        const char *name = names + symbols[ELF64_R_SYM(rel[k].r_info)].st_name;
        void *to = NULL;
        if (!strcmp(name, "__sanitizer_cov_trace_cmp1") || !strcmp(name, "__sanitizer_cov_trace_const_cmp1")) to = (void *)fuzz_ignore_cmp1;
        else if (!strcmp(name, "__sanitizer_cov_trace_cmp2") || !strcmp(name, "__sanitizer_cov_trace_const_cmp2")) to = (void *)fuzz_ignore_cmp2;
        if (!to) continue;
        void **slot = (void **)(info->dlpi_addr + rel[k].r_offset);
        uintptr_t start = (uintptr_t)slot & ~(page - 1); /* writable already unless bound at load (RELRO) */
        FUZZ_CHECK(mprotect((void *)start, page, PROT_READ | PROT_WRITE) == 0, "mprotect of the library's PLT slots failed");
        *slot = to;
        (*(int *)data)++;
    }
    return 0;
}

static int fuzz_skip_byte_compare_hooks(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "-use_value_profile=", 19) && strcmp(argv[i], "-use_value_profile=0") != 0) return 0;
    int rewritten = 0;
    dl_iterate_phdr(fuzz_patch_library_slots, &rewritten);
    return rewritten;
}

/* Every target calls this from LLVMFuzzerInitialize, and says what it did. */
static void fuzz_skip_byte_compare_hooks_of(const char *target, int argc, char **argv) {
    int skipped = fuzz_skip_byte_compare_hooks(argc, argv);
    fprintf(stderr, "%s: the library's 1- and 2-byte comparison hooks %s\n", target,
            skipped ? "point at a no-op (no value profile in this run)" : "are left as they are");
}

/* After a failing call: the error JSON is an object whose "status" is rc and whose code is named.
 * A call refused again the same way gives the same text: the check is a function of the text and
 * rc, so the text last found good (and its rc) is kept and not parsed again (most fuzzed calls are
 * refused, and each parse built a jansson tree through ASan's allocator). */
static char *fuzz_error_checked;
static int fuzz_error_checked_rc;

static void fuzz_check_error(int rc) {
    const char *e = stepkit_last_error();
    FUZZ_CHECK(e != NULL, "no last_error after rc %d", rc);
    if (fuzz_error_checked && rc == fuzz_error_checked_rc && strcmp(e, fuzz_error_checked) == 0) return;
    json_error_t err;
    json_t *j = json_loads(e, 0, &err);
    FUZZ_CHECK(j && json_is_object(j), "last_error is not a JSON object: %s", e);
    json_t *st = json_object_get(j, "status");
    FUZZ_CHECK(json_is_integer(st) && json_integer_value(st) == rc, "status %d != rc %d", (int)json_integer_value(st), rc);
    FUZZ_CHECK(json_is_string(json_object_get(j, "code")) && json_is_string(json_object_get(j, "message")),
               "error JSON lacks code/message: %s", e);
    FUZZ_CHECK(rc != STEPKIT_EINTERNAL, "EINTERNAL (a bug): %s", e);
    json_decref(j);
    free(fuzz_error_checked);
    fuzz_error_checked = strdup(e);
    fuzz_error_checked_rc = rc;
}

/* A JSON checker for the oracles, as strict as jansson's json_loads(text, JSON_DECODE_ANY): the
 * same grammar, UTF-8 validated, no \u0000, surrogates paired, integers within long long, reals
 * finite, at most 2048 levels of values, nothing after the value; but it builds no tree: parsing
 * every output with jansson was a fifth of the answers target's time (every node allocated through
 * ASan's allocator). Checked against jansson by a differential fuzz run (docs/reliability.md).
 * Not coverage-instrumented: its branches are the harness's, not the engine's. */
#define FUZZ_JSON_MAX_DEPTH 2048
#ifndef FUZZ_NOCOV /* defined empty to fuzz the checker itself against jansson */
#define FUZZ_NOCOV __attribute__((no_sanitize("coverage"), noinline))
#endif
typedef struct { const unsigned char *p; int depth; } fuzz_json_cursor;

FUZZ_NOCOV static void fuzz_json_ws(fuzz_json_cursor *c) {
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') c->p++;
}

FUZZ_NOCOV static int fuzz_json_hex4(const unsigned char *p, unsigned *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) { /* stops at the first non-hex byte, the final NUL included */
        unsigned char h = p[i];
        unsigned d;
        if (h >= '0' && h <= '9') d = h - '0';
        else if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
        else if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
        else return 0;
        *v = *v * 16 + d;
    }
    return 1;
}

/* One UTF-8 sequence starting at p (first byte >= 0x80): its length, or 0 if invalid (overlong,
 * a surrogate, above U+10FFFF, truncated). */
FUZZ_NOCOV static int fuzz_json_utf8(const unsigned char *p) {
    unsigned char b = p[0];
    int n;
    unsigned v;
    if (b >= 0xC2 && b <= 0xDF) { n = 2; v = b & 0x1F; }
    else if (b >= 0xE0 && b <= 0xEF) { n = 3; v = b & 0x0F; }
    else if (b >= 0xF0 && b <= 0xF4) { n = 4; v = b & 0x07; }
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (n == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) return 0;
    if (n == 4 && (v < 0x10000 || v > 0x10FFFF)) return 0;
    return n;
}

FUZZ_NOCOV static int fuzz_json_string(fuzz_json_cursor *c) {
    const unsigned char *p = c->p + 1; /* after the opening quote */
    for (;;) {
        unsigned char b = *p;
        if (b == '"') { c->p = p + 1; return 1; }
        if (b < 0x20) return 0; /* a control character, or the end of the text */
        if (b == '\\') {
            unsigned char e = p[1];
            if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') { p += 2; continue; }
            if (e != 'u') return 0;
            unsigned v;
            if (!fuzz_json_hex4(p + 2, &v) || v == 0) return 0;
            p += 6;
            if (v >= 0xDC00 && v <= 0xDFFF) return 0; /* a low surrogate alone */
            if (v >= 0xD800 && v <= 0xDBFF) {
                unsigned w;
                if (p[0] != '\\' || p[1] != 'u' || !fuzz_json_hex4(p + 2, &w) || w < 0xDC00 || w > 0xDFFF) return 0;
                p += 6;
            }
            continue;
        }
        if (b >= 0x80) {
            int n = fuzz_json_utf8(p);
            if (!n) return 0;
            p += n;
            continue;
        }
        p++;
    }
}

FUZZ_NOCOV static int fuzz_json_number(fuzz_json_cursor *c) {
    const unsigned char *start = c->p, *p = c->p;
    int real = 0;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return 0;
    if (*p >= '0' && *p <= '9') return 0; /* "01" */
    if (*p == '.') {
        real = 1; p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        real = 1; p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    size_t n = (size_t)(p - start);
    char buf[128];
    char *num = n < sizeof buf ? buf : malloc(n + 1);
    if (!num) return 0;
    memcpy(num, start, n);
    num[n] = 0;
    errno = 0;
    int ok;
    if (real) { double d = strtod(num, NULL); ok = !((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE); }
    else { (void)strtoll(num, NULL, 10); ok = errno != ERANGE; }
    if (num != buf) free(num);
    c->p = p;
    return ok;
}

FUZZ_NOCOV static int fuzz_json_value(fuzz_json_cursor *c);

FUZZ_NOCOV static int fuzz_json_container(fuzz_json_cursor *c, unsigned char close) {
    c->p++;
    fuzz_json_ws(c);
    if (*c->p == close) { c->p++; return 1; }
    for (;;) {
        if (close == '}') {
            if (*c->p != '"' || !fuzz_json_string(c)) return 0;
            fuzz_json_ws(c);
            if (*c->p != ':') return 0;
            c->p++;
            fuzz_json_ws(c);
        }
        if (!fuzz_json_value(c)) return 0;
        fuzz_json_ws(c);
        if (*c->p == close) { c->p++; return 1; }
        if (*c->p != ',') return 0;
        c->p++;
        fuzz_json_ws(c);
    }
}

/* jansson counts the depth of every value, scalars included, and refuses beyond 2048. */
FUZZ_NOCOV static int fuzz_json_value(fuzz_json_cursor *c) {
    if (++c->depth > FUZZ_JSON_MAX_DEPTH) return 0;
    int ok;
    switch (*c->p) {
    case '{': ok = fuzz_json_container(c, '}'); break;
    case '[': ok = fuzz_json_container(c, ']'); break;
    case '"': ok = fuzz_json_string(c); break;
    case 't': ok = strncmp((const char *)c->p, "true", 4) == 0; if (ok) c->p += 4; break;
    case 'f': ok = strncmp((const char *)c->p, "false", 5) == 0; if (ok) c->p += 5; break;
    case 'n': ok = strncmp((const char *)c->p, "null", 4) == 0; if (ok) c->p += 4; break;
    default: ok = fuzz_json_number(c); break;
    }
    c->depth--;
    return ok;
}

/* 1 if `text` is one JSON value (with whitespace around it at most), as json_loads accepts. */
FUZZ_NOCOV static int fuzz_json_valid(const char *text) {
    fuzz_json_cursor c = {(const unsigned char *)text, 0};
    fuzz_json_ws(&c);
    if (!fuzz_json_value(&c)) return 0;
    fuzz_json_ws(&c);
    return *c.p == 0;
}

/* The output of a successful call must be JSON. */
static void fuzz_check_json(const char *out) {
    FUZZ_CHECK(out != NULL, "NULL output on success");
    if (fuzz_json_valid(out)) return;
    json_error_t err; /* jansson says why (and must agree) */
    json_t *j = json_loads(out, JSON_DECODE_ANY, &err);
    FUZZ_CHECK(j == NULL, "the harness's JSON checker refused what jansson accepts: %.200s", out);
    FUZZ_CHECK(0, "output is not JSON (%s): %.200s", err.text, out);
}

#endif
