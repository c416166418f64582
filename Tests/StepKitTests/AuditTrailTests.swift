import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A task with an optional question to skip, a required one, a form with bounds (to refuse an
/// answer) and an active step (to suspend and resume).
private let auditTask = """
{"identifier": "audit", "steps": [
  {"type": "instruction", "identifier": "intro"},
  {"type": "question", "identifier": "mood", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 10}},
  {"type": "question", "identifier": "note", "optional": true, "answerFormat": {"type": "text"}},
  {"type": "form", "identifier": "about", "formItems": [
    {"identifier": "age", "text": "Age", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90}}]},
  {"type": "active", "identifier": "walk", "stepDuration": 60},
  {"type": "completion", "identifier": "done"}]}
"""

private let start: Int64 = 1_767_225_600_000

private func restore(_ text: String, _ task: Task, options: SessionOptions = SessionOptions(), clock: Clock = .system) throws(StepKitError) -> Session {
    let result = text.withCString { pointer in
        Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: options, clock: clock) }
    }
    return try result.get()
}

/// The refusal's code and path, or nil when the data restores.
private func refusal(_ text: String, _ task: Task, options: SessionOptions = SessionOptions()) -> (code: String, path: String)? {
    do throws(StepKitError) {
        _ = try restore(text, task, options: options)
        return nil
    } catch {
        return (error.problems.first?.code ?? "", error.problems.first?.path.description ?? "")
    }
}

/// The events as the host lists them, without their digests.
private func listed(_ s: Session, from start: Int = 0) -> [JSONObject] {
    (s.auditListing(from: start).objectValue?["events"]?.arrayValue ?? []).compactMap { event in
        guard var o = event.objectValue else { return nil }
        o["digest"] = nil
        return o
    }
}

/// The saved document's members with its audit events changed by `edit`; the integrity member
/// is kept as it was, so only the trail's own chain can say what is wrong.
private func editTrail(_ saved: String, _ edit: (inout [JSON]) -> Void) throws -> String {
    guard case .object(var document) = try JSONParser.parse(saved), var audit = document["audit"]?.objectValue,
          var events = audit["events"]?.arrayValue else { throw StepKitError(.internal, code: "test", message: "no trail") }
    edit(&events)
    audit["events"] = .array(events)
    document["audit"] = .object(audit)
    return JSONWriter.string(.object(document))
}

@Suite struct AuditTrailTests {
    /// Walks the task: every kind of change a host makes, one refused call between each.
    func walked(options: SessionOptions = SessionOptions()) throws -> (Session, ManualClock) {
        let clock = ManualClock(start)
        var s = Session(task: try compile(auditTask), options: options, clock: clock.clock)
        clock.now += 1000
        try s.goForward()                                    // intro → mood
        clock.now += 1000
        try s.setAnswer(.int(3))
        clock.now += 1000
        try s.setAnswer(.int(7))                      // good → bad
        try s.goForward()                                    // mood → note
        try s.skip()                                         // note skipped → about
        try s.setAnswer(try json(#"{"age": 44}"#))
        try s.goBackward()                                   // about → note
        try s.goForward()                                    // note → about
        try s.goForward()                                    // about → walk
        try s.activeOperation(.start)
        try s.activeOperation(.suspendTask)
        try s.activeOperation(.resumeTask)
        return (s, clock)
    }

    @Test func everyAcceptedChangeIsRecordedWithOldAndNewValues() throws {
        let (s, _) = try walked()
        let events = listed(s)
        let types = events.map { $0["type"]?.stringValue ?? "" }
        #expect(types == ["forward", "answerSet", "answerSet", "forward", "skip", "answerSet", "backward", "forward", "forward",
                          "control", "suspended", "resumed"])
        #expect(events[0]["step"] == .string("intro") && events[0]["to"] == .string("mood"))
        #expect(events[0]["date"] == .string("2026-01-01T00:00:01.000Z"))
        #expect(events[1]["old"] == .null && events[1]["new"] == .int(3))
        #expect(events[2]["old"] == .int(3) && events[2]["new"] == .int(7))
        #expect(events[2]["date"] == .string("2026-01-01T00:00:03.000Z"))
        #expect(events[4]["step"] == .string("note") && events[4]["to"] == .string("about"))
        #expect(events[6]["step"] == .string("about") && events[6]["to"] == .string("note"))
        #expect(events[9]["detail"] == .string("start") && events[10]["detail"] == .string("suspendTask"))
        #expect(events.enumerated().allSatisfy { $0.element["index"] == .int(Int64($0.offset)) })
        s._checkInvariants()
    }

    @Test func clearingAndFinishingAreRecorded() throws {
        var s = Session(task: try compile(auditTask), options: SessionOptions(), clock: ManualClock(start).clock)
        try s.goForward()
        try s.setAnswer(.int(5))
        try s.goForward()
        try s.setAnswer(.string("kept"))
        try s.setAnswer(.null)
        try s.setAnswer(.null)  // the same again: no change, no event
        try s.finish(.discarded)
        let events = listed(s)
        #expect(events.map { $0["type"]?.stringValue ?? "" } == ["forward", "answerSet", "forward", "answerSet", "answerCleared", "finish"])
        #expect(events[4]["old"] == .string("kept") && events[4]["new"] == .null)
        #expect(events[5]["detail"] == .string("discarded") && events[5]["step"] == .string("note"))
    }

    @Test func completingIsAForwardToNothing() throws {
        var s = Session(task: try compile(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "a"}]}"#),
                        options: SessionOptions(), clock: ManualClock(start).clock)
        try s.finish(.completed)
        let events = listed(s)
        #expect(events.count == 1 && events[0]["type"] == .string("forward") && events[0]["to"] == .null)
    }

    @Test func refusedCallsRecordNothing() throws {
        let clock = ManualClock(start)
        var s = Session(task: try compile(auditTask), options: SessionOptions(), clock: clock.clock)
        func refused(_ call: (inout Session) throws(StepKitError) -> Void) {
            let before = s.audit.count
            do throws(StepKitError) { try call(&s); Issue.record("the call was accepted") } catch {}
            #expect(s.audit.count == before)
        }
        refused { (s: inout Session) throws(StepKitError) in try s.goBackward() }          // first step
        refused { (s: inout Session) throws(StepKitError) in try s.setAnswer(.string("x")) } // an instruction
        try s.goForward()
        refused { (s: inout Session) throws(StepKitError) in try s.skip() }                // not optional
        refused { (s: inout Session) throws(StepKitError) in try s.goForward() }           // required answer missing
        refused { (s: inout Session) throws(StepKitError) in try s.setAnswer(.int(99)) }
        refused { (s: inout Session) throws(StepKitError) in try s.activeOperation(.start) } // not active
        try s.setAnswer(.int(3))
        try s.goForward()
        try s.goForward()
        let young = try json(#"{"age": 5}"#)
        refused { (s: inout Session) throws(StepKitError) in try s.setAnswer(young) } // below minimum
        try s.finish(.discarded)
        refused { (s: inout Session) throws(StepKitError) in try s.goForward() }           // finished
        #expect(listed(s).count == 5)
    }

    @Test func actorAndReasonComeFromTheOptionsAndTheHost() throws {
        let options = try SessionOptions.parse(try json(#"{"audit": {"actor": "nurse-7", "reason": "clinic visit"}}"#))
        var s = Session(task: try compile(auditTask), options: options, clock: ManualClock(start).clock)
        try s.goForward()
        s.setAuditContext(actor: "participant", reason: nil)
        try s.setAnswer(.int(3))
        s.setAuditContext(actor: "dr-3", reason: "corrected on call")
        try s.setAnswer(.int(7))
        let events = listed(s)
        #expect(events[0]["actor"] == .string("nurse-7") && events[0]["reason"] == .string("clinic visit"))
        #expect(events[1]["actor"] == .string("participant") && events[1]["reason"] == nil)
        #expect(events[2]["actor"] == .string("dr-3") && events[2]["reason"] == .string("corrected on call"))
        // Bad option values are refused.
        #expect(throws: StepKitError.self) { try SessionOptions.parse(try json(#"{"audit": {"actr": "x"}}"#)) }
        #expect(throws: StepKitError.self) { try SessionOptions.parse(try json(#"{"audit": 3}"#)) }
    }

    /// The chain, as docs/audit.md publishes it, computed here from the listed events.
    @Test func theChainIsThePublishedOne() throws {
        for key in [nil, "k3y"] as [String?] {
            var options = SessionOptions()
            options.integrityKey = key
            var (s, _) = try walked(options: options)
            try s.sealAudit()
            var previous = s.taskRunUUID
            for event in s.auditEvents {
                var saved = event.saved.objectValue ?? JSONObject()
                let digest = saved["digest"]?.stringValue
                saved["digest"] = nil
                let text = previous + "\n" + JSONWriter.string(.object(saved))
                let expected = try key.map { k throws(StepKitError) in try Digest.hmacSHA256(text, key: k) ?? "" } ?? Digest.sha256(text)
                #expect(digest == expected)
                previous = expected
            }
        }
    }

    @Test func saveAndRestoreKeepTheTrailAndRecordTheRestore() throws {
        let (s, clock) = try walked()
        let saved = try Restoration.saveText(s)
        clock.now += 60_000
        var back = try restore(saved, s.task, clock: clock.clock)
        #expect(Array(listed(back).prefix(s.audit.count)) == listed(s))
        // Restored, nothing changed: the same text again; the restore is listed.
        #expect(try Restoration.saveText(back) == saved)
        #expect(listed(back).last?["type"] == .string("restored"))
        try back.activeOperation(.finish)
        let after = listed(back)
        #expect(after.suffix(2).map { $0["type"]?.stringValue ?? "" } == ["restored", "control"])
        #expect(after.count == s.audit.count + 2)
        let again = try restore(try Restoration.saveText(back), s.task, clock: clock.clock)
        #expect(listed(again).prefix(after.count).elementsEqual(after))
        // Restored on the system clock, then given the host's: the restore is dated on the
        // host's clock, as the restored timers are.
        var hosted = try restore(saved, s.task)
        hosted.setClock(clock.clock)
        #expect(listed(hosted).last?["date"] == .string(CivilTime.iso8601(milliseconds: clock.now)))
        // A server that restores for every request leaves the restores out.
        var quiet = try restore(saved, s.task, options: try SessionOptions.parse(try json(#"{"audit": {"recordRestore": false}}"#)), clock: clock.clock)
        try quiet.activeOperation(.finish)
        #expect(listed(quiet).suffix(1).map { $0["type"]?.stringValue ?? "" } == ["control"])
    }

    /// The trail goes on across task versions: the events saved before name the steps as they
    /// were (`note`, which the new version no longer has, included), the events after name the
    /// new version's steps, and the whole trail saves and restores as it was listed.
    @Test func aMigratedTrailNamesTheStepsAsTheyWere() throws {
        let (s, clock) = try walked()
        let v2 = try compile("""
        {"identifier": "audit", "steps": [
          {"type": "instruction", "identifier": "intro"},
          {"type": "question", "identifier": "mood", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 10}},
          {"type": "question", "identifier": "sleep", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 24}},
          {"type": "completion", "identifier": "done"}]}
        """)
        var options = SessionOptions()
        options.migrate = true
        clock.now += 1000
        var back = try restore(try Restoration.saveText(s), v2, options: options, clock: clock.clock)
        let before = listed(s)
        #expect(Array(listed(back).prefix(before.count)) == before)
        #expect(before.contains { $0["step"] == .string("note") && $0["type"] == .string("skip") })
        #expect(listed(back).last?["type"] == .string("migrated"))
        #expect(back.stepID == "sleep")
        clock.now += 1000
        try back.setAnswer(.int(8))
        try back.goForward()
        let after = listed(back)
        #expect(after.suffix(2).map { [$0["type"], $0["step"]] } == [[.string("answerSet"), .string("sleep")],
                                                                     [.string("forward"), .string("sleep")]])
        #expect(after.last?["to"] == .string("done"))
        let again = try restore(try Restoration.saveText(back), v2, clock: clock.clock)
        #expect(Array(listed(again).prefix(after.count)) == after)
    }

    @Test func dataSavedBeforeTheTrailRestores() throws {
        let (s, _) = try walked()
        guard case .object(var document) = try JSONParser.parse(try Restoration.saveText(s)) else { return }
        document["audit"] = nil
        document["integrity"] = nil
        let digest = try Digest.sha256(JSONWriter.string(.object(document)))
        document["integrity"] = .object(["algorithm": .string("SHA-256"), "digest": .string(digest)])
        let back = try restore(JSONWriter.string(.object(document)), s.task)
        #expect(back.audit.count == 0)
    }

    @Test func aTamperedTrailIsRefusedNamingTheFirstBadEvent() throws {
        for key in [nil, "k3y"] as [String?] {
            var options = SessionOptions()
            options.integrityKey = key
            let (s, _) = try walked(options: options)
            let saved = try Restoration.saveText(s)
            let count = s.audit.count
            // Edited: an answer's new value.
            let edited = try editTrail(saved) { events in
                guard case .object(var e) = events[2] else { return }
                e["new"] = .int(3)
                events[2] = .object(e)
            }
            #expect(refusal(edited, s.task, options: options)?.code == "auditTampered")
            #expect(refusal(edited, s.task, options: options)?.path == "audit.events[2]")
            let first = try editTrail(saved) { events in
                guard case .object(var e) = events[0] else { return }
                e["date"] = .int(start)
                events[0] = .object(e)
            }
            #expect(refusal(first, s.task, options: options)?.path == "audit.events[0]")
            // Removed from the middle: the event after it fails.
            let removed = try editTrail(saved) { $0.remove(at: 3) }
            #expect(refusal(removed, s.task, options: options)?.code == "auditTampered")
            #expect(refusal(removed, s.task, options: options)?.path == "audit.events[3]")
            // Reordered.
            let reordered = try editTrail(saved) { $0.swapAt(4, 5) }
            #expect(refusal(reordered, s.task, options: options)?.path == "audit.events[4]")
            // Cut off: the first missing event is named.
            let truncated = try editTrail(saved) { $0.removeLast(2) }
            #expect(refusal(truncated, s.task, options: options)?.code == "auditTampered")
            #expect(refusal(truncated, s.task, options: options)?.path == "audit.events[\(count - 2)]")
            // Not an event.
            let damaged = try editTrail(saved) { $0[1] = .string("forward") }
            #expect(refusal(damaged, s.task, options: options)?.code == "auditDamaged")
            // With the wrong key no event holds: the data is refused as a whole, as before.
            var wrong = SessionOptions()
            wrong.integrityKey = "other"
            #expect(refusal(edited, s.task, options: wrong)?.code == (key == nil ? "integrityCheckFailed" : "integrityCheckFailed"))
            // Untouched: restores.
            #expect(refusal(saved, s.task, options: options) == nil)
        }
    }

    @Test func theAutosaveKeepsTheTrail() throws {
        let directory = temporaryDirectory()
        try #require(directory != "/tmp")
        defer { _ = rmdir(directory) }
        let file = directory + "/run.json"
        defer { _ = unlink(file) }
        var options = SessionOptions()
        options.autosavePath = file
        options.integrityKey = "k"
        let clock = ManualClock(start)
        let task = try compile(auditTask)
        let store = try SessionStore(Session(task: task, options: options, clock: clock.clock), autosavePath: file)
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.goForward() }
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(.int(3)) }
        try store.transaction { (s: inout Session) throws(StepKitError) in s.setAuditContext(actor: "a", reason: "r") }
        try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(.int(7)) }
        // A refused call writes nothing to the trail.
        _ = try? store.transaction { (s: inout Session) throws(StepKitError) in try s.skip() }
        let live = try store.read { (s: borrowing Session) in listed(s) }
        var restoreOptions = SessionOptions()
        restoreOptions.integrityKey = "k"
        let text = try #require(readFile(file))
        #expect(text.split(separator: "\n").count > 1, "the changes are journal records")
        let back = try restore(text, task, options: restoreOptions, clock: clock.clock)
        #expect(Array(listed(back).prefix(live.count)) == live)
        #expect(live.count == 3 && live[2]["actor"] == .string("a") && live[2]["old"] == .int(3))
    }

    @Test func theTrailCanBeSwitchedOff() throws {
        let off = try SessionOptions.parse(try json(#"{"audit": false}"#))
        let (s, clock) = try walked(options: off)
        #expect(s.audit.count == 0)
        #expect(s.auditListing(from: 0).objectValue?["enabled"] == .bool(false))
        // A trail restored with it off is kept as it was and grows no further.
        let (recorded, _) = try walked()
        var back = try restore(try Restoration.saveText(recorded), recorded.task, options: off, clock: clock.clock)
        try back.activeOperation(.finish)
        #expect(back.audit.count == recorded.audit.count)
        #expect(listed(back) == listed(recorded))
    }

    @Test func aListingStreamsFromAnIndex() throws {
        let (s, _) = try walked()
        let all = listed(s)
        let tail = listed(s, from: 10)
        #expect(tail == Array(all[10...]))
        #expect(listed(s, from: 1000).isEmpty)
        #expect(s.auditListing(from: 5).objectValue?["count"] == .int(Int64(all.count)))
    }
}
