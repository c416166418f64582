import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The task fingerprint names a definition's content, not its text (issue 11, item 9).
@Suite struct FingerprintTests {
    @Test func canonicalFormSortsKeysAndWritesWholeNumbersAsIntegers() throws {
        let value = try json(#"{"b": [1.0, 2.5, -0.0, 1e2, true, null], "a": {"é": "x", "e": 2.0, "Z": 1}}"#)
        #expect(CanonicalJSON.text(value) == #"{"a":{"Z":1,"e":2,"é":"x"},"b":[1,2.5,0,100,true,null]}"#)
        // Not whole, or beyond what an integer holds exactly: kept as reals.
        #expect(CanonicalJSON.form(.double(1e300)) == .double(1e300))
        #expect(CanonicalJSON.form(.double(0.1)) == .double(0.1))
    }

    @Test func keyOrderAndNumberSpellingKeepTheFingerprint() throws {
        let original = try compile(#"""
        {"identifier": "t", "steps": [{"type": "question", "identifier": "q", "title": "Pain",
         "answerFormat": {"type": "scale", "minimum": 1, "maximum": 10, "step": 1}}]}
        """#)
        let stored = try compile(#"""
        {"steps":[{"answerFormat":{"step":1.0,"maximum":10.0,"minimum":1e0,"type":"scale"},"title":"Pain","identifier":"q","type":"question"}],"identifier":"t"}
        """#)
        #expect(try original.fingerprint.value() == stored.fingerprint.value())
        let changed = try compile(#"""
        {"identifier": "t", "steps": [{"type": "question", "identifier": "q", "title": "Pain",
         "answerFormat": {"type": "scale", "minimum": 1, "maximum": 11, "step": 1}}]}
        """#)
        #expect(try original.fingerprint.value() != changed.fingerprint.value())
    }
}
