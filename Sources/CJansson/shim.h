/* jansson for Swift: the header, plus inline wrappers for what jansson defines as macros
 * (Swift cannot call a function-like macro). */
#ifndef STEPKIT_CJANSSON_SHIM_H
#define STEPKIT_CJANSSON_SHIM_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static inline json_type sk_json_typeof(const json_t *json) { return json_typeof(json); }
static inline void sk_json_decref(json_t *json) { json_decref(json); }
static inline size_t sk_json_real_precision(int digits) { return (size_t)JSON_REAL_PRECISION(digits); }
static inline size_t sk_json_flag_compact(void) { return JSON_COMPACT; }
static inline size_t sk_json_flag_encode_any(void) { return JSON_ENCODE_ANY; }
static inline size_t sk_json_flag_decode_any(void) { return JSON_DECODE_ANY; }
static inline size_t sk_json_flag_reject_duplicates(void) { return JSON_REJECT_DUPLICATES; }
/* A real as jansson's dump formats it before tidying it: printf's %.*g (Swift cannot call a
 * variadic C function, and going through a va_list allocated on every real). */
static inline int sk_format_real(char *buffer, size_t size, int precision, double value) {
    return snprintf(buffer, size, "%.*g", precision, value);
}

#endif
