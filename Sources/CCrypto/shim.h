/* OpenSSL's libcrypto for Swift: only the one-shot digests StepKit uses to check restoration
 * data (SHA-256 and HMAC-SHA256) and the constant-time comparison. */
#ifndef STEPKIT_CCRYPTO_SHIM_H
#define STEPKIT_CCRYPTO_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#endif
