import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A short walk: instruction, countdown, a timed walking step with two recorders, rest, completion.
let walk = """
{"identifier": "walk", "steps": [
  {"type": "instruction", "identifier": "intro", "title": "Short walk"},
  {"type": "countdown", "identifier": "countdown", "shouldSpeakCountDown": true},
  {"type": "active", "identifier": "walking", "stepDuration": 60, "shouldStartTimerAutomatically": true,
   "shouldContinueOnFinish": true, "shouldSpeakRemainingTimeAtHalfway": true, "shouldSpeakCountDown": true,
   "spokenInstruction": "Walk up to 20 steps in a straight line.", "finishedSpokenInstruction": "Stop walking.",
   "shouldVibrateOnStart": true, "shouldPlaySoundOnFinish": true,
   "recorderConfigurations": [{"type": "accelerometer", "identifier": "accel", "frequency": 100},
                              {"type": "pedometer", "identifier": "pedometer"}]},
  {"type": "active", "identifier": "rest", "stepDuration": 30},
  {"type": "completion", "identifier": "done"}],
 "asyncActions": [{"type": "location", "identifier": "gps", "startStepIdentifier": "countdown", "stopStepIdentifier": "rest"}]}
"""

func temporaryDirectory() -> String {
    var template = Array("/tmp/stepkit-test-XXXXXX".utf8CString)
    let made: String? = template.withUnsafeMutableBufferPointer { buffer in
        guard let base = buffer.baseAddress, let result = mkdtemp(base) else { return nil }
        return String(cString: result)
    }
    return made ?? "/tmp"
}

func readFile(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

@Suite struct ActiveTests {
    func open(outputDirectory: String? = temporaryDirectory(), continueOnFailure: Bool = false) throws -> (Session, ManualClock) {
        let clock = ManualClock(1_767_225_600_000)
        var options = SessionOptions()
        options.outputDirectory = outputDirectory
        options.continueOnRecorderFailure = continueOnFailure
        return (Session(task: try compile(walk), options: options, clock: clock.clock), clock)
    }

    func types(_ events: [JSON]) -> [String] { events.compactMap { $0.objectValue?["type"]?.stringValue } }

    @Test func countdownStartsAndContinuesByItselfWithSpokenCountdown() throws {
        var (s, clock) = try open()
        _ = s.takeEvents()
        try s.goForward()
        #expect(s.stepID == "countdown")
        #expect(s.current?.active?.status == .running)
        #expect(s.nextDeadline == clock.now + 2000)
        #expect(s.activeProblems().first?.code == "activeStepNotFinished")
        var events = s.takeEvents()
        #expect(types(events) == ["stepWillAppear", "stepDidChange", "recorderStarted", "activeStepStarted"])
        clock.now += 5000
        s.tick()
        events = s.takeEvents()
        let spoken = events.filter { $0.objectValue?["type"] == .string("speak") }.compactMap { $0.objectValue?["text"]?.stringValue }
        #expect(spoken.prefix(3) == ["3", "2", "1"])
        // The countdown ended at +5 s and the walk started then, by itself.
        #expect(s.stepID == "walking")
        #expect(s.current?.startDate == Int64(1_767_225_605_000))
        #expect(s.current?.active?.status == .running)
        #expect(types(events).contains("activeStepFinished"))
        #expect(types(events).contains("recorderStarted"))
    }

    @Test func aWholeWalkRunsInOneTickWithEveryPromptOnTime() throws {
        var (s, clock) = try open()
        try s.goForward()
        _ = s.takeEvents()
        clock.now += 5000 + 60_000 + 30_000
        s.tick()
        let events = s.takeEvents()
        #expect(s.stepID == "rest")
        // rest does not start by itself.
        #expect(s.current?.active?.status == .prepared)
        let walking = events.filter { $0.objectValue?["step"] == .string("walking") }
        let timeline = walking.compactMap { e -> String? in
            guard let o = e.objectValue, let type = o["type"]?.stringValue, let date = o["date"]?.stringValue else { return nil }
            return type + (o["kind"]?.stringValue.map { ":" + $0 } ?? "") + (o["text"]?.stringValue.map { "=" + $0 } ?? "") + "@" + String(date.dropFirst(14).prefix(9))
        }
        #expect(timeline == [
            "stepWillAppear@00:05.000", "stepDidChange@00:05.000", "activeStepStarted@00:05.000",
            "speak:spokenInstruction=Walk up to 20 steps in a straight line.@00:05.000", "vibrate:start@00:05.000",
            "speak:halfway=30 seconds remaining@00:35.000",
            "speak:countDown=3@01:02.000", "speak:countDown=2@01:03.000", "speak:countDown=1@01:04.000",
            "speak:finishedSpokenInstruction=Stop walking.@01:05.000", "playSound:finish@01:05.000", "activeStepFinished@01:05.000",
        ])
    }

    @Test func suspendedTimeDoesNotCount() throws {
        var (s, clock) = try open()
        try s.goForward()
        clock.now += 5000
        s.tick()
        clock.now += 10_000
        try s.activeOperation(.suspend)
        clock.now += 100_000
        s.tick()
        #expect(s.stepID == "walking")
        #expect(s.current?.active?.elapsed(at: clock.now) == 10_000)
        #expect(s.nextDeadline == nil)
        try s.activeOperation(.resume)
        #expect(throws: StepKitError.self) { try s.activeOperation(.resume) }
        clock.now += 50_000
        s.tick()
        #expect(s.stepID == "rest")
    }

    @Test func taskLevelSuspendHoldsEverything() throws {
        var (s, clock) = try open()
        try s.goForward()
        try s.activeOperation(.suspendTask)
        #expect(s.current?.active?.status == .suspended)
        #expect(throws: StepKitError.self) { try s.activeOperation(.resume) }
        clock.now += 60_000
        s.tick()
        #expect(s.stepID == "countdown")
        try s.activeOperation(.resumeTask)
        clock.now += 5000
        s.tick()
        #expect(s.stepID == "walking")
    }

    @Test func hostDrivenStartAndEarlyFinish() throws {
        var (s, clock) = try open()
        try s.goForward()
        clock.now += 65_000
        s.tick()
        #expect(s.stepID == "rest")
        #expect(throws: StepKitError.self) { try s.goForward() }
        #expect(throws: StepKitError.self) { try s.activeOperation(.finish).self; try s.activeOperation(.start) }
        var fresh = try open().0
        try fresh.goForward()
        #expect(throws: StepKitError.self) { try fresh.activeOperation(.start) }
        try fresh.activeOperation(.finish)
        #expect(fresh.stepID == "walking")
    }

    @Test func recorderFilesHoldEverySampleAsValidJSONAndRoll() throws {
        let directory = temporaryDirectory()
        var (s, clock) = try open(outputDirectory: directory)
        try s.goForward()
        clock.now += 5000
        s.tick()
        #expect(throws: StepKitError.self) { try s.record("nope", .object(JSONObject())) }
        for i in 0..<3 {
            try s.record("accel", .array((0..<2).map { j in .object(["t": .int(Int64(i * 2 + j)), "x": .double(0.25)]) }))
        }
        try s.record("gps", .object(["latitude": .double(52.5), "longitude": .double(13.4)]))
        let run = try #require(s.current?.active?.recorders.first)
        #expect(run.samples == 6)
        let file = try #require(run.files.first)
        let text = try #require(readFile(directory + "/" + file.fileName))
        let parsed = try json(text)
        #expect(parsed.objectValue?["items"]?.arrayValue?.count == 6)
        clock.now += 60_000
        s.tick()
        #expect(s.stepID == "rest")
        let result = s.resultJSON()
        let walking = result.objectValue?["results"]?.arrayValue?.first { $0.objectValue?["identifier"] == .string("walking") }
        let files = walking?.objectValue?["results"]?.arrayValue ?? []
        #expect(files.first?.objectValue?["type"] == .string("file"))
        #expect(files.first?.objectValue?["fileName"] == .string(file.fileName))
        // The async GPS recorder is still running until rest is left.
        try s.record("gps", .object(["latitude": .double(52.6), "longitude": .double(13.4)]))
        try s.activeOperation(.start)
        clock.now += 30_000
        s.tick()
        try s.goForward()
        #expect(throws: StepKitError.self) { try s.record("gps", .object(JSONObject())) }
        let async = s.resultJSON().objectValue?["asyncResults"]?.arrayValue ?? []
        #expect(async.count == 1)
        let gpsName = try #require(async.first?.objectValue?["fileName"]?.stringValue)
        #expect(try json(try #require(readFile(directory + "/" + gpsName))).objectValue?["items"]?.arrayValue?.count == 2)
    }

    @Test func rollingStartsANewFilePastTheLimit() throws {
        let directory = temporaryDirectory()
        let clock = ManualClock(1_767_225_600_000)
        var options = SessionOptions()
        options.outputDirectory = directory
        options.recorderFileSizeLimit = 1024
        var s = Session(task: try compile(walk), options: options, clock: clock.clock)
        try s.goForward()
        clock.now += 5000
        s.tick()
        for i in 0..<40 { try s.record("accel", .object(["t": .int(Int64(i)), "payload": .string(String(repeating: "x", count: 100))])) }
        let files = s.current?.active?.recorders.first?.files ?? []
        #expect(files.count > 1)
        var total = 0
        for file in files {
            #expect(file.bytes <= 1024 || file.items == 1)
            total += try json(try #require(readFile(directory + "/" + file.fileName))).objectValue?["items"]?.arrayValue?.count ?? 0
        }
        #expect(total == 40)
    }

    @Test func withoutAnOutputDirectoryTheRecorderFailsAndTheTaskFails() throws {
        var (s, clock) = try open(outputDirectory: nil)
        try s.goForward()
        // The async GPS recorder fails as the countdown appears.
        #expect(s.finishReason == .failed)
        let events = types(s.takeEvents())
        #expect(events.contains("recorderFailed"))
        #expect(events.last == "taskFinished")
        var (c, cclock) = try open(outputDirectory: nil, continueOnFailure: true)
        try c.goForward()
        cclock.now += 5000
        c.tick()
        #expect(c.finishReason == nil)
        #expect(c.stepID == "walking")
        _ = clock
    }

    @Test func aWriteFailureKeepsEarlierSamples() throws {
        let directory = temporaryDirectory()
        var (s, clock) = try open(outputDirectory: directory)
        try s.goForward()
        clock.now += 5000
        s.tick()
        try s.record("accel", .object(["t": .int(1)]))
        let file = try #require(s.current?.active?.recorders.first?.files.first)
        // Make the file impossible to reopen for writing: replace it by a directory.
        let path = directory + "/" + file.fileName
        let kept = try #require(readFile(path))
        unlink(path)
        mkdir(path, 0o755)
        try s.record("accel", .object(["t": .int(2)]))
        #expect(s.finishReason == .failed)
        let failed = s.takeEvents().first { $0.objectValue?["type"] == .string("recorderFailed") }
        #expect(failed?.objectValue?["samplesLost"] == .int(1))
        #expect(try json(kept).objectValue?["items"]?.arrayValue?.count == 1)
    }

    @Test func activeStateSurvivesSaveAndRestore() throws {
        var (s, clock) = try open()
        try s.goForward()
        clock.now += 5000
        s.tick()
        clock.now += 20_000
        try s.record("accel", .object(["t": .int(1)]))
        let saved = Restoration.save(s)
        let text = JSONWriter.string(saved)
        let restored = text.withCString { p in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: s.options, clock: clock.clock) }
        }
        var back = try restored.get()
        #expect(back.stateJSON() == s.stateJSON())
        #expect(back.resultJSON() == s.resultJSON())
        clock.now += 40_000
        back.tick()
        s.tick()
        #expect(back.stepID == "rest")
        #expect(back.stateJSON() == s.stateJSON())
    }

    @Test func compileChecksAndPermissions() throws {
        let task = try compile(walk)
        #expect(task.requestedPermissions == ["location", "motion"])
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "countdown", "identifier": "c", "stepDuration": 2}]}"#).first?.code == "outOfRange")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "active", "identifier": "a", "recorderConfigurations": [{"type": "camera", "identifier": "x"}]}]}"#).first?.code == "invalidValue")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "active", "identifier": "a", "recorderConfigurations": [{"type": "audio", "identifier": "x"}, {"type": "audio", "identifier": "x"}]}]}"#).first?.code == "duplicateIdentifier")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "active", "identifier": "a"}], "asyncActions": [{"type": "audio", "identifier": "x", "startStepIdentifier": "zz"}]}"#).first?.code == "unknownStep")
        // A zero-length active step with nothing to record starts finished.
        var zero = Session(task: try compile(#"{"identifier": "t", "steps": [{"type": "active", "identifier": "a"}, {"type": "wait", "identifier": "w"}]}"#), options: SessionOptions())
        #expect(zero.current?.active?.status == .finished)
        try zero.goForward()
        #expect(zero.current?.active?.status == .running)
        try zero.activeOperation(.finish)
        #expect(zero.finishReason == nil)
        try zero.goForward()
        #expect(zero.finishReason == .completed)
    }
}
