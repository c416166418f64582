import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A new empty directory of this test's own (`temporaryDirectory` falls back to /tmp itself,
/// which these tests must never move or remove).
private func ownDirectory() throws -> String {
    let directory = temporaryDirectory()
    try #require(directory != "/tmp")
    return directory
}

/// The whole content of the file at `path` as text; nil if it cannot be opened.
private func contents(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// What the autosave file at `path` restores to, as `saveText` writes it (the file is a snapshot
/// and a journal of changes: it is `saveText` itself only right after a snapshot).
private func autosaved(_ path: String, _ task: Task, options: SessionOptions = SessionOptions(), now: Int64 = 1_767_225_600_000) -> String? {
    guard let text = contents(path) else { return nil }
    let clock = ManualClock(now)
    let restored = text.withCString { pointer in
        Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: options, clock: clock.clock) }
    }
    return (try? restored.get()).flatMap { try? Restoration.saveText($0) }
}

/// The autosave transaction, tested on the store itself: no C handle, no exported function.
@Suite struct SessionStoreTests {
    func store(at path: String) throws -> SessionStore {
        let clock = ManualClock(1_767_225_600_000)
        return try SessionStore(Session(task: try compile(headache), options: SessionOptions(), clock: clock.clock), autosavePath: path)
    }

    @Test func everySuccessfulCallWritesTheSaveText() throws {
        let directory = try ownDirectory()
        let path = directory + "/run.json"
        defer { unlink(path); rmdir(directory) }
        let store = try store(at: path)
        // The first save is written when the store is made.
        #expect(try contents(path) == store.saveText())
        let first = try store.saveText()
        let task = try compile(headache)
        func saved() throws { #expect(try autosaved(path, task) == store.saveText()) }
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.goForward() }
        try saved()
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(.array([.string("headache")])) }
        try saved()
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.goForward() }
        try saved()
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(.bool(true)) }
        try saved()
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.goForward() }
        try saved()
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.goBackward() }
        try saved()
        #expect(try store.saveText() != first)
        #expect(store.read { $0.stepID } == "severity")
    }

    @Test func aCallThatCannotBeSavedChangesNothing() throws {
        let directory = try ownDirectory()
        let moved = directory + "-moved"
        let path = directory + "/run.json"
        defer { unlink(path); rmdir(directory); unlink(moved + "/run.json"); rmdir(moved) }
        let store = try store(at: path)
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.goForward() }
        let before = try store.saveText()
        let state = store.read { $0.stateJSON() }
        let file = contents(path)
        #expect(autosaved(path, try compile(headache)) == before)

        // The directory goes away (moved, so the file it held can still be looked at).
        #expect(rename(directory, moved) == 0)
        var failure: StepKitError?
        do throws(StepKitError) {
            try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(.array([.string("headache")])) }
        } catch {
            failure = error
        }
        #expect(failure?.status == .io)
        #expect(failure?.problems.first?.code == "autosaveFailed")
        #expect(try store.saveText() == before)
        #expect(store.read { $0.stateJSON() } == state)
        #expect(contents(moved + "/run.json") == file)
        #expect(access(path, F_OK) != 0)

        // Back in place, the same call is kept and saved.
        #expect(rename(moved, directory) == 0)
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(.array([.string("headache")])) }
        #expect(try store.saveText() != before)
        #expect(try autosaved(path, compile(headache)) == store.saveText())
    }

    @Test func aRejectedCallWritesNothing() throws {
        let directory = try ownDirectory()
        let path = directory + "/run.json"
        defer { unlink(path); rmdir(directory) }
        let store = try store(at: path)
        let before = try store.saveText()
        // "intro" is an instruction: there is no answer to give.
        #expect(throws: StepKitError.self) {
            try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(.bool(true)) }
        }
        #expect(try store.saveText() == before)
        #expect(contents(path) == before)
    }

    @Test func onePathOneStore() throws {
        let directory = try ownDirectory()
        let path = directory + "/run.json"
        defer { unlink(path); rmdir(directory) }
        var first: SessionStore? = try store(at: path)
        let task = try compile(headache)
        var refusal: StepKitError?
        do throws(StepKitError) {
            _ = try SessionStore(Session(task: task, options: SessionOptions()), autosavePath: directory + "/./run.json")
        } catch {
            refusal = error
        }
        #expect(refusal?.problems.first?.code == "autosaveInUse")
        #expect(try contents(path) == first?.saveText())
        first = nil
        let second = try store(at: path)
        #expect(try contents(path) == second.saveText())
    }

    /// The names in `directory` other than "." and "..".
    func entries(_ directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    @Test func aCallThatCannotBeSavedLeavesRecorderFilesAsTheyWere() throws {
        let directory = try ownDirectory()
        let output = try ownDirectory()
        let moved = directory + "-moved"
        let path = directory + "/run.json"
        defer {
            unlink(path); rmdir(directory); unlink(moved + "/run.json"); rmdir(moved)
            for name in entries(output) { unlink(output + "/" + name) }
            rmdir(output)
        }
        let clock = ManualClock(1_767_225_600_000)
        var options = SessionOptions()
        options.outputDirectory = output
        let store = try SessionStore(Session(task: try compile(walk), options: options, clock: clock.clock), autosavePath: path)
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.goForward() }
        clock.now += 5000
        try store.transaction { (s: inout Session) in s.tick() }
        #expect(store.read { $0.stepID } == "walking")

        // A file the failed call created is removed.
        #expect(rename(directory, moved) == 0)
        #expect(throws: StepKitError.self) {
            try store.transaction { (s: inout Session) throws(StepKitError) in try s.record("accel", .object(["t": .int(1)])) }
        }
        #expect(entries(output).isEmpty)
        #expect(rename(moved, directory) == 0)

        try store.transaction { (s: inout Session) throws(StepKitError) in try s.record("accel", .object(["t": .int(1)])) }
        let name = try #require(store.read { $0.current?.active?.recorders.first?.files.first?.fileName })
        let kept = try #require(contents(output + "/" + name))
        let before = try store.saveText()
        let file = contents(path)

        // A batch the failed call appended is cut off: the file is byte for byte as before.
        #expect(rename(directory, moved) == 0)
        #expect(throws: StepKitError.self) {
            try store.transaction { (s: inout Session) throws(StepKitError) in try s.record("accel", .object(["t": .int(2)])) }
        }
        #expect(contents(output + "/" + name) == kept)
        #expect(try store.saveText() == before)
        #expect(contents(moved + "/run.json") == file)
        #expect(rename(moved, directory) == 0)

        try store.transaction { (s: inout Session) throws(StepKitError) in try s.record("accel", .object(["t": .int(2)])) }
        let items = try json(try #require(contents(output + "/" + name))).objectValue?["items"]?.arrayValue
        #expect(items == [.object(["t": .int(1)]), .object(["t": .int(2)])])
        #expect(try autosaved(path, compile(walk), options: options, now: clock.now) == store.saveText())
    }
}
