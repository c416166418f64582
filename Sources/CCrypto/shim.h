/* OpenSSL's libcrypto for Swift: only the one-shot digests StepKit uses to check restoration
 * data (SHA-256 and HMAC-SHA256) and the constant-time comparison.
 *
 * StepKit does not link libcrypto: it is loaded (dlopen) the first time a digest is needed
 * (Sources/StepKitBase/Integrity/LibCrypto.swift), so a host that never saves, restores or names a
 * long file does not pay for loading it. These headers give the functions' types and the soname
 * of the libcrypto they describe; nothing here calls into libcrypto. */
#ifndef STEPKIT_CCRYPTO_SHIM_H
#define STEPKIT_CCRYPTO_SHIM_H

#include <stddef.h>
#include <openssl/opensslv.h>
#include <openssl/evp.h>

/* The soname of the libcrypto these headers belong to: libcrypto.so.3 for OpenSSL 3, whose
 * headers define OPENSSL_SHLIB_VERSION; libcrypto.so.1.1 for OpenSSL 1.1 (SHLIB_VERSION_NUMBER).
 * The four functions below have the same types in both. */
#define SK_CRYPTO_STRING_(x) #x
#define SK_CRYPTO_STRING(x) SK_CRYPTO_STRING_(x)
#if defined(OPENSSL_SHLIB_VERSION)
#define SK_LIBCRYPTO_SONAME "libcrypto.so." SK_CRYPTO_STRING(OPENSSL_SHLIB_VERSION)
#else
#define SK_LIBCRYPTO_SONAME "libcrypto.so." SHLIB_VERSION_NUMBER
#endif

static inline const char *sk_libcrypto_soname(void) { return SK_LIBCRYPTO_SONAME; }

/* dladdr(3) with glibc's Dl_info spelled out: Swift's Glibc module is built without _GNU_SOURCE,
 * so it has neither. LibCrypto.swift uses it to find the directory StepKit was loaded from. */
struct sk_dl_info {
    const char *file;   /* dli_fname */
    void *base;         /* dli_fbase */
    const char *symbol; /* dli_sname */
    void *address;      /* dli_saddr */
};
extern int sk_dladdr(const void *address, struct sk_dl_info *info) __asm__("dladdr");

/* SHA256(), EVP_sha256(), HMAC() and CRYPTO_memcmp(), as pointers found with dlsym. */
typedef unsigned char *(*sk_sha256_function)(const unsigned char *data, size_t length, unsigned char *digest);
typedef const EVP_MD *(*sk_evp_sha256_function)(void);
typedef unsigned char *(*sk_hmac_function)(const EVP_MD *md, const void *key, int key_length,
                                           const unsigned char *data, size_t data_length,
                                           unsigned char *digest, unsigned int *digest_length);
typedef int (*sk_crypto_memcmp_function)(const void *a, const void *b, size_t length);

#endif
