import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// libcrypto is loaded on the first digest, from the candidates `LibCrypto` names; where none
/// loads, the call gets STEPKIT_EIO "libcryptoUnavailable" naming each candidate and why.
@Suite struct LibCryptoTests {
    @Test func digestsMatchPublishedVectors() throws {
        // FIPS 180-2's "abc"; RFC 4231's test case 2 (key "Jefe").
        #expect(try Digest.sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try Digest.sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(try Digest.hmacSHA256("what do ya want for nothing?", key: "Jefe")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(try Digest.equal("ab", "ab"))
        #expect(try !Digest.equal("ab", "ac"))
        #expect(try !Digest.equal("ab", "abc"))
    }

    @Test func candidatesAreTheOwnDirectoryThenTheSoname() {
        let candidates = LibCrypto.candidates()
        #expect(LibCrypto.soname.hasPrefix("libcrypto.so."))
        #expect(candidates.last == LibCrypto.soname)
        #expect(candidates.count == 2)
        if let first = candidates.first, candidates.count == 2 {
            #expect(first.hasPrefix("/") && first.hasSuffix("/" + LibCrypto.soname))
        }
    }

    @Test func theFirstCandidateThatLoadsIsUsed() throws {
        let crypto = try LibCrypto.load(from: ["/nonexistent/stepkit/" + LibCrypto.soname, LibCrypto.soname]).get()
        #expect(crypto.origin == LibCrypto.soname)
    }

    @Test func noCandidateGivesAnIOErrorNamingEach() {
        let candidates = ["/nonexistent/stepkit/" + LibCrypto.soname, "libstepkit-no-such-library.so.9", "libc.so.6"]
        guard case .failure(let error) = LibCrypto.load(from: candidates) else {
            Issue.record("loaded from \(candidates)")
            return
        }
        #expect(error.status == .io)
        #expect(error.problems.map(\.code) == ["libcryptoUnavailable"])
        let message = error.problems.first?.message ?? ""
        #expect(message.contains("OpenSSL's libcrypto (" + LibCrypto.soname + ")"))
        #expect(message.contains("/nonexistent/stepkit/" + LibCrypto.soname + ": no such file"))
        #expect(message.contains("libstepkit-no-such-library.so.9"))
        #expect(message.contains("libc.so.6: lacks SHA256, EVP_sha256, HMAC or CRYPTO_memcmp"))
    }

    @Test func theProcessLoadsItOnce() throws {
        let first = try LibCrypto.shared.get()
        let second = try LibCrypto.shared.get()
        #expect(first.origin == second.origin)
        #expect(LibCrypto.candidates().contains(first.origin))
    }
}
