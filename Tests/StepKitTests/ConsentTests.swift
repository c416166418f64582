import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Consent (document, visual consent, review, signature) and the steps the host reports.
@Suite struct ConsentTests {
    static let document = """
    {"title": "Study consent", "version": "3", "sections": [
      {"type": "overview", "summary": "Short.", "content": "Long text."},
      {"type": "privacy", "summary": "Private."},
      {"type": "onlyInDocument", "title": "Contact", "content": "Write to us."}]}
    """

    static func task(_ steps: String, rules: String = "{}") throws -> Task {
        try compile(#"{"identifier": "t", "consentDocument": \#(document), "steps": \#(steps), "navigationRules": \#(rules)}"#)
    }

    static let flow = """
    [{"type": "visualConsent", "identifier": "v"},
     {"type": "consentReview", "identifier": "r"},
     {"type": "signature", "identifier": "sig"},
     {"type": "instruction", "identifier": "declined", "terminal": true},
     {"type": "completion", "identifier": "done"}]
    """
    static let rules = """
    {"r": {"type": "predicate", "branches": [{"when": {"consented": "r"}, "destination": "sig"}], "defaultDestination": "declined"},
     "sig": {"type": "direct", "destination": "done"}, "declined": {"type": "direct", "destination": "$end"}}
    """

    func open(directory: String? = temporaryDirectory()) throws -> Session {
        var options = SessionOptions()
        options.outputDirectory = directory
        return Session(task: try ConsentTests.task(ConsentTests.flow, rules: ConsentTests.rules), options: options, clock: ManualClock(1_767_225_600_000).clock)
    }

    @Test func theDigestIsTheReviewTextsSHA256() throws {
        let task = try ConsentTests.task(ConsentTests.flow, rules: ConsentTests.rules)
        guard case .consentReview(let document)? = task.steps[1].hosted else { Issue.record("no review"); return }
        // docs/task-format.md: title, "Version", then each section's title and content (else summary).
        let expected = "# Study consent\n\nVersion 3\n\n## Welcome\n\nLong text.\n\n## Privacy\n\nPrivate.\n\n## Contact\n\nWrite to us.\n"
        #expect(document.reviewText == expected)
        #expect(document.sha256 == (try Digest.sha256(expected)))
        // The visual step shows every section but the one only in the document.
        let visual = task.steps[0].presentation["consentSections"]?.arrayValue?.compactMap { $0.objectValue?["title"]?.stringValue }
        #expect(visual == ["Welcome", "Privacy"])
    }

    @Test func agreeingSignsAndTheResultRecordsIt() throws {
        let directory = temporaryDirectory()
        var s = try open(directory: directory)
        try s.goForward()
        // Agreeing without names is refused; with them it is accepted.
        try s.setAnswer(try json(#"{"consented": true}"#))
        #expect(throws: StepKitError.self) { try s.goForward() }
        try s.setAnswer(try json(#"{"consented": true, "givenName": "Ada", "familyName": "Lovelace"}"#))
        try s.goForward()
        #expect(s.currentStep?.identifier == "sig")
        // A signature is only ever a report.
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"{"typedName": "x"}"#)) }
        try s.report(try json(#"{"step": "sig", "typedName": "Ada Lovelace"}"#))
        guard let record = s.answers[2]?.objectValue, let name = record["fileName"]?.stringValue else { Issue.record("no record"); return }
        let bytes = Array("Ada Lovelace\n".utf8)
        #expect(record["sha256"] == .string(try Digest.sha256(bytes: bytes)))
        #expect(record["bytes"] == .int(Int64(bytes.count)))
        #expect(record["contentType"] == .string("text/plain"))
        let fd = Glibc.open(directory + "/" + name, O_RDONLY)
        #expect(fd >= 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buffer, 64)
        close(fd)
        #expect(Array(buffer.prefix(max(n, 0))) == bytes)
        try s.goForward()
        let result = s.resultJSON()
        let steps = result.objectValue?["results"]?.arrayValue ?? []
        let consent = steps[1].objectValue?["consent"]?.objectValue
        #expect(consent?["consented"] == .bool(true))
        #expect(consent?["documentVersion"] == .string("3"))
        #expect(consent?["givenName"] == .string("Ada"))
        let signed = try s.consentDocument().objectValue
        #expect(signed?["markdown"]?.stringValue?.contains("Participant: Ada Lovelace") == true)
        #expect(signed?["markdown"]?.stringValue?.contains(name) == true)
        #expect(signed?["html"]?.stringValue?.contains("<h2>Privacy</h2>") == true)
    }

    @Test func disagreeingTakesTheOtherBranchWithoutNames() throws {
        var s = try open()
        try s.goForward()
        try s.setAnswer(try json(#"{"consented": false}"#))
        try s.goForward()
        #expect(s.currentStep?.identifier == "declined")
    }

    @Test func aBadReportChangesNothing() throws {
        var s = try open()
        try s.goForward()
        try s.setAnswer(try json(#"{"consented": true, "givenName": "A", "familyName": "B"}"#))
        try s.goForward()
        let before = s
        for bad in [#"{"step": "r", "typedName": "x"}"#, #"{"typedName": "x"}"#, #"{"step": "sig"}"#,
                    #"{"step": "sig", "typedName": "  "}"#, #"{"step": "sig", "typedName": "x", "path": "M0 0"}"#,
                    #"{"step": "sig", "image": {"contentType": "image/png", "base64": "AAAA"}}"#,
                    #"{"step": "sig", "image": {"contentType": "image/gif", "base64": "AAAA"}}"#,
                    #"{"step": "sig", "path": "M0 0\"/><script>"}"#, "[]"] {
            #expect(throws: StepKitError.self) { try s.report(try json(bad)) }
            #expect(s.answers[2] == before.answers[2])
        }
        // Without an output directory a file report is refused too.
        var noDirectory = try open(directory: nil)
        try noDirectory.goForward()
        try noDirectory.setAnswer(try json(#"{"consented": true, "givenName": "A", "familyName": "B"}"#))
        try noDirectory.goForward()
        #expect(throws: StepKitError.self) { try noDirectory.report(try json(#"{"step": "sig", "typedName": "x"}"#)) }
    }

    @Test func aSignatureSurvivesSaveAndRestore() throws {
        var s = try open()
        try s.goForward()
        try s.setAnswer(try json(#"{"consented": true, "givenName": "A", "familyName": "B"}"#))
        try s.goForward()
        try s.report(try json(#"{"step": "sig", "path": "M 10 10 L 20 20"}"#))
        let text = try Restoration.saveText(s)
        let restored = try text.withCString { p throws(StepKitError) in try Restoration.restore(p, task: s.task, options: s.options, clock: .system) }
        #expect(restored.answers[2] == s.answers[2])
        #expect(restored.answers[2]?.objectValue?["contentType"] == .string("image/svg+xml"))
        // Restoration data naming a file outside the output directory is refused.
        let forged = text.replacingOccurrences(s.answers[2]?.objectValue?["fileName"]?.stringValue ?? "?", "../x")
        #expect(throws: StepKitError.self) { _ = try forged.withCString { p throws(StepKitError) in try Restoration.restore(p, task: s.task, options: s.options, clock: .system) } }
    }

    @Test func theHostReportedStepsCheckWhatTheyAreTold() throws {
        let task = try ConsentTests.task("""
        [{"type": "table", "identifier": "t", "items": ["a", "b"]},
         {"type": "webView", "identifier": "w", "html": "<p>hi</p>"},
         {"type": "videoInstruction", "identifier": "v", "videoURL": "https://example.org/v.mp4"},
         {"type": "pdfViewer", "identifier": "p", "pdfURL": "https://example.org/d.pdf"},
         {"type": "requestPermissions", "identifier": "perm", "permissions": ["camera", "location"]},
         {"type": "imageCapture", "identifier": "img"}]
        """)
        var s = Session(task: task, options: SessionOptions())
        let cases: [(good: String, bad: [String])] = [
            (#"{"viewed": true}"#, [#"{"viewed": false}"#, #"{}"#]),
            (#"{"message": "done"}"#, [#"{"message": 3}"#, #"{"msg": "x"}"#]),
            (#"{"playbackCompleted": true, "position": 12.5}"#, [#"{"position": 1}"#, #"{"playbackCompleted": true, "position": -1}"#]),
            (#"{"viewed": true}"#, [#"{"viewed": "yes"}"#]),
            (#"{"granted": ["location"], "denied": ["camera"]}"#, [#"{"granted": ["camera"], "denied": []}"#, #"{"granted": ["camera", "location", "health"], "denied": []}"#,
                                                                   #"{"granted": ["camera", "camera"], "denied": ["location"]}"#]),
        ]
        for (i, c) in cases.enumerated() {
            let id = task.steps[i].identifier
            #expect(task.steps[i].presentation["reportedByHost"] == .bool(true))
            for bad in c.bad {
                var report = try json(bad).objectValue ?? JSONObject()
                report["step"] = .string(id)
                #expect(throws: StepKitError.self) { try s.report(.object(report)) }
                #expect(s.answers[i] == nil)
            }
            var report = try json(c.good).objectValue ?? JSONObject()
            report["step"] = .string(id)
            try s.report(.object(report))
            #expect(s.answers[i] != nil)
            try s.goForward()
        }
        // Kept in the order the step asks for them.
        #expect(s.answers[4] == (try json(#"{"granted": ["location"], "denied": ["camera"]}"#)))
        // An image capture takes an image only.
        #expect(throws: StepKitError.self) { try s.report(try json(#"{"step": "img", "typedName": "x"}"#)) }
    }

    @Test func definitionsAreChecked() throws {
        func codes(_ text: String) -> [String] { problems(text).map(\.code) }
        #expect(codes(#"{"identifier": "t", "steps": [{"type": "consentReview", "identifier": "r"}]}"#) == ["missingConsentDocument"])
        #expect(codes(#"{"identifier": "t", "consentDocument": {"title": "x", "version": "1", "sections": [{"type": "custom", "summary": "s"}]}, "steps": [{"type": "visualConsent", "identifier": "v"}]}"#) == ["missingKey"])
        #expect(codes(#"{"identifier": "t", "steps": [{"type": "requestPermissions", "identifier": "p", "permissions": ["telepathy"]}]}"#) == ["unknownPermission"])
        #expect(codes(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}], "navigationRules": {"q": {"type": "predicate", "branches": [{"when": {"consented": "q"}, "destination": "q"}]}}}"#) == ["notConsentReview"])
        // The checker: a signature with no consent document to sign.
        let found = try findings(#"{"identifier": "t", "steps": [{"type": "signature", "identifier": "s"}]}"#)
        #expect(found.map(\.code) == ["signatureWithoutConsent"])
    }

    @Test func verifyReplaysTheConsentAndTheSignatureRecord() throws {
        var s = try open()
        try s.goForward()
        try s.setAnswer(try json(#"{"consented": true, "givenName": "A", "familyName": "B"}"#))
        try s.goForward()
        try s.report(try json(#"{"step": "sig", "typedName": "A B"}"#))
        try s.goForward()
        try s.goForward()
        let result = s.resultJSON()
        let report = try Verification.verify(result, task: s.task, options: VerifyOptions()).objectValue
        #expect(report?["divergences"]?.arrayValue?.count == 0, "\(JSONWriter.string(report?["divergences"] ?? .null))")
        // A record that is no captured file's (a digest that is not one) diverges.
        let forged = JSONWriter.string(result).replacingOccurrences(s.answers[2]?.objectValue?["sha256"]?.stringValue ?? "?", "not-a-digest")
        let refused = try Verification.verify(try json(forged), task: s.task, options: VerifyOptions()).objectValue
        #expect((refused?["divergences"]?.arrayValue?.count ?? 0) > 0)
    }

    @Test func base64IsRFC4648() {
        // RFC 4648, section 10.
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors { #expect(Base64.decode(encoded) == Array(plain.utf8)) }
        for bad in ["Zg=", "Z===", "Zh==", "Zm9v\n", "Zm 9", "=Zm9"] { #expect(Base64.decode(bad) == nil) }
    }
}
