import Glibc
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Compiles a task from JSON text, failing the test with the error JSON if it does not compile.
func compile(_ text: String) throws -> Task {
    try TaskCompiler.compile(try JSONParser.parse(text))
}

/// The problems a definition has (empty when it compiles).
func problems(_ text: String) -> [Problem] {
    do {
        _ = try TaskCompiler.compile(try JSONParser.parse(text))
        return []
    } catch {
        return error.problems
    }
}

func json(_ text: String) throws -> JSON { try JSONParser.parse(text) }

/// The repository's root, ending in "/": the tests read the examples, the schemas and the
/// benchmarks' tasks from where they are.
let repositoryRoot: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/") + "/"
}()

/// xorshift64*: a fixed sequence from its seed, for the tests' seeded walks (the same on every run).
struct SeededGenerator {
    var state: UInt64
    mutating func next(_ n: Int) -> Int {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return Int((state &* 0x2545_F491_4F6C_DD1D) >> 33) % n
    }
}

/// One finding of the static checker, as its report gives it.
struct Finding: Equatable, CustomStringConvertible {
    let severity: String
    let code: String
    let path: String
    var description: String { "\(severity) \(code) @ \(path)" }
}

/// The checker's findings on a task given as JSON text.
func findings(_ text: String) throws -> [Finding] {
    let report = TaskChecker.check(try compile(text))
    return report.objectValue?["problems"]?.arrayValue?.compactMap { p in
        guard let o = p.objectValue, let s = o["severity"]?.stringValue, let c = o["code"]?.stringValue,
              let path = o["path"]?.stringValue else { return nil }
        return Finding(severity: s, code: c, path: path)
    } ?? []
}

/// A clock the test moves by hand, shared through a pointer as a host's would be. The clock
/// keeps the object alive (a deliberate leak in tests), as a host must keep its user_data alive.
final class ManualClock {
    var now: Int64
    init(_ now: Int64) { self.now = now }

    var clock: Clock {
        Clock.host({ context in
            guard let context else { return 0 }
            return Unmanaged<ManualClock>.fromOpaque(context).takeUnretainedValue().now
        }, context: Unmanaged.passRetained(self).toOpaque())
    }
}

/// A task with one question step of the given answer format, for format tests.
func questionTask(_ format: String, optional: Bool = false) throws -> Task {
    try compile("""
    {"identifier": "t", "steps": [{"type": "question", "identifier": "q", "optional": \(optional), "answerFormat": \(format)}]}
    """)
}

/// Validates `answer` against the single question of `task`, returning the kept answer or the rejection code.
func check(_ task: Task, _ answer: String, previous: String? = nil) throws -> Result<JSON?, AnswerRejection> {
    guard case .question(let format)? = task.steps.first?.content else { fatalError("not a question task") }
    let value = try json(answer)
    let before = try previous.map(json)
    do throws(AnswerRejection) {
        return .success(try format.validate(value, previous: before))
    } catch {
        return .failure(error)
    }
}

extension Result where Failure == AnswerRejection {
    var rejectionCode: String? {
        if case .failure(let e) = self { return e.code }
        return nil
    }
    var kept: Success? {
        if case .success(let v) = self { return v }
        return nil
    }
}

extension Restoration {
    /// The restoration data as a JSON value, signed the slow way: the document `saveText` wrote,
    /// without its integrity member, written again as a value, digested, and the member added.
    /// Tests compare it with `saveText` (the one-pass writer) and restore from it.
    static func save(_ s: Session) -> JSON {
        guard let parsed = try? JSONParser.parse(saveText(s)), case .object(var document) = parsed else { return .null }
        document["integrity"] = nil
        let text = JSONWriter.string(.object(document))
        let mac = s.options.integrityKey.flatMap { key in (try? Digest.hmacSHA256(text, key: key)) ?? nil }
        guard let signed = mac.map({ ("HMAC-SHA256", $0) }) ?? (try? Digest.sha256(text)).map({ ("SHA-256", $0) }) else { return .null }
        document["integrity"] = .object(["algorithm": .string(signed.0), "digest": .string(signed.1)])
        return .object(document)
    }
}

/// Runs `body` on a new thread whose stack is `bytes` long, and waits for it: how the tests hold
/// the engine's recursive walks to the small stacks hosts are promised will do. False if the
/// thread could not be started.
func onThread(stack bytes: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
    final class Context: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, bytes)
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Context(body)).toOpaque()
    let status = pthread_create(&thread, &attributes, { raw in
        guard let raw else { return nil }
        Unmanaged<Context>.fromOpaque(raw).takeRetainedValue().body()
        return nil
    }, context)
    guard status == 0 else {
        Unmanaged<Context>.fromOpaque(context).release()
        return false
    }
    pthread_join(thread, nil)
    return true
}
