import CCrypto
import Glibc

/// OpenSSL's libcrypto, loaded the first time a digest is needed rather than with the library.
///
/// Loading libcrypto costs a host more than loading all of StepKit's other code (about 0.6 ms
/// of a 1.7 ms `dlopen`, `benchmarks/README.md`), and most calls never need it: only saving,
/// restoring, a task's fingerprint (`stepkit_task_info`) and naming a file whose name is too
/// long to spell out take a digest. So libstepkit.so does not list libcrypto as a dependency;
/// the first digest loads it with `dlopen` and finds the four functions StepKit uses with
/// `dlsym`.
///
/// Where it looks, in order (`candidates`):
/// 1. beside StepKit itself: the directory of the object this code was linked into (found with
///    `dladdr`), under libcrypto's soname. The Python wheel ships its copy there, next to
///    libstepkit.so; an installed library finds its system's copy there too.
/// 2. the soname, through the dynamic loader's usual search (`LD_LIBRARY_PATH`, the cache, the
///    default directories).
///
/// A process loads it at most once: `shared` is a global, which Swift initialises exactly once
/// even when threads race to it, and the handle is never closed. When no candidate loads, every
/// call that needs a digest fails with `STEPKIT_EIO` "libcryptoUnavailable" and changes nothing.
struct LibCrypto: @unchecked Sendable {
    // @unchecked: C function pointers into a library that is never unloaded; calling them from
    // any thread is safe (OpenSSL 1.1 and later initialise themselves thread-safely).
    let sha256: sk_sha256_function
    let evpSHA256: sk_evp_sha256_function
    let hmac: sk_hmac_function
    let memcmp: sk_crypto_memcmp_function
    /// The file or name it was loaded from (for the docs' and the tests' sake).
    let origin: String

    /// The process's libcrypto, or why it could not be loaded.
    static let shared: Result<LibCrypto, StepKitError> = load(from: candidates())

    /// The soname of the libcrypto StepKit was compiled against (`libcrypto.so.3`).
    static var soname: String { String(cString: sk_libcrypto_soname()) }

    /// Where to look, in order: beside StepKit, then the soname.
    static func candidates() -> [String] {
        var info = sk_dl_info()
        guard sk_dladdr(#dsohandle, &info) != 0, let file = info.file else { return [soname] }
        let path = String(cString: file)
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return [soname] }
        return [String(path[...slash]) + soname, soname]
    }

    /// The first candidate that loads and has the four functions. A file beside StepKit that is
    /// absent is skipped quietly; the error names every candidate and what the loader said.
    static func load(from candidates: [String]) -> Result<LibCrypto, StepKitError> {
        var reasons: [String] = []
        for candidate in candidates {
            if candidate.utf8.contains(UInt8(ascii: "/")) && access(candidate, F_OK) != 0 {
                reasons.append(candidate + ": no such file")
                continue
            }
            guard let handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL) else {
                reasons.append(dlerror().map { String(cString: $0) } ?? candidate + ": not loaded")
                continue
            }
            guard let sha256 = dlsym(handle, "SHA256"), let evpSHA256 = dlsym(handle, "EVP_sha256"),
                  let hmac = dlsym(handle, "HMAC"), let memcmp = dlsym(handle, "CRYPTO_memcmp") else {
                reasons.append(candidate + ": lacks SHA256, EVP_sha256, HMAC or CRYPTO_memcmp")
                dlclose(handle)
                continue
            }
            return .success(LibCrypto(
                sha256: unsafeBitCast(sha256, to: sk_sha256_function.self),
                evpSHA256: unsafeBitCast(evpSHA256, to: sk_evp_sha256_function.self),
                hmac: unsafeBitCast(hmac, to: sk_hmac_function.self),
                memcmp: unsafeBitCast(memcmp, to: sk_crypto_memcmp_function.self),
                origin: candidate))
        }
        return .failure(StepKitError(.io, code: "libcryptoUnavailable",
            message: "OpenSSL's libcrypto (" + soname + "), which this call needs for a SHA-256 (the integrity check of restoration data, a task's fingerprint, or a long file name), could not be loaded: "
                + reasons.joined(separator: "; ") + "."))
    }
}
