/* PCRE2 (8-bit code units) for Swift: the header with its code unit width chosen, plus inline
 * wrappers for what PCRE2 defines as macros (Swift cannot use a function-like macro, and the
 * option constants are macros Swift may not import with the right type). */
#ifndef STEPKIT_CPCRE2_SHIM_H
#define STEPKIT_CPCRE2_SHIM_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>

static inline uint32_t sk_pcre2_option_utf(void) { return PCRE2_UTF; }
static inline uint32_t sk_pcre2_option_ucp(void) { return PCRE2_UCP; }
static inline uint32_t sk_pcre2_option_no_utf_check(void) { return PCRE2_NO_UTF_CHECK; }
static inline uint32_t sk_pcre2_option_never_backslash_c(void) { return PCRE2_NEVER_BACKSLASH_C; }
static inline int sk_pcre2_error_nomatch(void) { return PCRE2_ERROR_NOMATCH; }
static inline int sk_pcre2_error_matchlimit(void) { return PCRE2_ERROR_MATCHLIMIT; }
static inline int sk_pcre2_error_depthlimit(void) { return PCRE2_ERROR_DEPTHLIMIT; }
static inline int sk_pcre2_error_heaplimit(void) { return PCRE2_ERROR_HEAPLIMIT; }
static inline int sk_pcre2_error_nomemory(void) { return PCRE2_ERROR_NOMEMORY; }
static inline uint32_t sk_pcre2_option_anchored(void) { return PCRE2_ANCHORED; }
static inline uint32_t sk_pcre2_option_no_auto_possess(void) { return PCRE2_NO_AUTO_POSSESS; }
static inline uint32_t sk_pcre2_newline_any(void) { return PCRE2_NEWLINE_ANY; }
static inline uint32_t sk_pcre2_info_capturecount(void) { return PCRE2_INFO_CAPTURECOUNT; }
static inline uint32_t sk_pcre2_info_alloptions(void) { return PCRE2_INFO_ALLOPTIONS; }

#endif
