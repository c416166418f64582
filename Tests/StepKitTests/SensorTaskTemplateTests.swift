import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The sensor-task templates (docs/active-tasks.md, "Sensor task templates"): each expands at
/// compile time into the steps the docs list, with the documented durations, recorders and
/// prompts. The expectations are written from the docs' tables, not read from the engine.
@Suite struct SensorTaskTemplateTests {
    func task(_ template: String) throws -> Task {
        try compile(#"{"identifier": "t", "steps": ["# + template + #", {"type": "completion", "identifier": "end"}]}"#)
    }

    /// (identifier, kind, duration in ms, recorders as "identifier-suffix@frequency") per step.
    struct Expected: Equatable, CustomStringConvertible {
        let id: String
        let kind: String
        let ms: Int64
        let recorders: [String]
        var description: String { "\(id) \(kind) \(ms) \(recorders)" }
    }

    func steps(_ task: Task) -> [Expected] {
        task.steps.map { step in
            let kind: String
            switch step.active?.kind {
            case .active?: kind = "active"
            case .countdown?: kind = "countdown"
            case .wait?: kind = "wait"
            case nil: kind = step.presentation["type"]?.stringValue ?? "?"
            }
            let recorders = (step.active?.recorders ?? []).map { r -> String in
                let suffix = r.identifier.hasPrefix(step.identifier + ".") ? String(r.identifier.dropFirst(step.identifier.count + 1)) : "!" + r.identifier
                #expect(suffix == r.type)
                let frequency = r.configuration["frequency"]?.numericValue ?? r.configuration["sampleRate"]?.numericValue
                return r.type + (frequency.map { "@\(Int($0))" } ?? "")
            }
            return Expected(id: step.identifier, kind: kind, ms: step.active?.duration ?? 0, recorders: recorders)
        }
    }

    static let walkRecorders = ["accelerometer@100", "deviceMotion@100", "pedometer"]

    @Test func shortWalkDefaults() throws {
        let t = try task(#"{"type": "sensorTask", "task": "shortWalk", "identifier": "walk"}"#)
        #expect(steps(t) == [
            Expected(id: "walk.instruction0", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "walk.instruction1", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "walk.countdown", kind: "countdown", ms: 5000, recorders: []),
            Expected(id: "walk.walking.outbound", kind: "active", ms: 100_000, recorders: SensorTaskTemplateTests.walkRecorders),
            Expected(id: "walk.walking.return", kind: "active", ms: 100_000, recorders: SensorTaskTemplateTests.walkRecorders),
            Expected(id: "walk.walking.rest", kind: "active", ms: 20_000, recorders: ["accelerometer@100", "deviceMotion@100"]),
            Expected(id: "walk.conclusion", kind: "completion", ms: 0, recorders: []),
            Expected(id: "end", kind: "completion", ms: 0, recorders: []),
        ])
        let outbound = try #require(t.steps.first { $0.identifier == "walk.walking.outbound" })
        #expect(outbound.presentation["text"] == .string("Walk up to 20 steps in a straight line."))
        #expect(outbound.active?.spokenInstruction == "Walk up to 20 steps in a straight line.")
        #expect(outbound.active?.startsAutomatically == true && outbound.active?.continuesOnFinish == true)
        #expect(outbound.active?.vibrateOnStart == true && outbound.active?.soundOnFinish == true)
        // The template is a section named by its identifier.
        #expect(t.sections.map(\.identifier) == ["walk"])
    }

    @Test func shortWalkParametersAndOptions() throws {
        let t = try task(#"{"type": "sensorTask", "task": "shortWalk", "identifier": "w", "numberOfStepsPerLeg": 30, "restDuration": 0, "legDuration": 45, "options": ["excludeInstructions", "excludeConclusion", "excludePedometer"]}"#)
        #expect(steps(t) == [
            Expected(id: "w.countdown", kind: "countdown", ms: 5000, recorders: []),
            Expected(id: "w.walking.outbound", kind: "active", ms: 45_000, recorders: ["accelerometer@100", "deviceMotion@100"]),
            Expected(id: "w.walking.return", kind: "active", ms: 45_000, recorders: ["accelerometer@100", "deviceMotion@100"]),
            Expected(id: "end", kind: "completion", ms: 0, recorders: []),
        ])
        #expect(t.steps[1].presentation["text"] == .string("Walk up to 30 steps in a straight line."))
    }

    @Test func timedWalkDefaults() throws {
        let t = try task(#"{"type": "sensorTask", "task": "timedWalk", "identifier": "tw"}"#)
        let recorders = ["pedometer", "accelerometer@100", "deviceMotion@100", "location"]
        #expect(steps(t) == [
            Expected(id: "tw.instruction0", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "tw.timed.walk.form", kind: "form", ms: 0, recorders: []),
            Expected(id: "tw.instruction1", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "tw.instruction2", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "tw.countdown", kind: "countdown", ms: 5000, recorders: []),
            Expected(id: "tw.timed.walk.trial1", kind: "active", ms: 180_000, recorders: recorders),
            Expected(id: "tw.timed.walk.turn.around", kind: "active", ms: 60_000, recorders: recorders),
            Expected(id: "tw.timed.walk.trial2", kind: "active", ms: 180_000, recorders: recorders),
            Expected(id: "tw.conclusion", kind: "completion", ms: 0, recorders: []),
            Expected(id: "end", kind: "completion", ms: 0, recorders: []),
        ])
        #expect(t.steps[5].presentation["text"] == .string("Walk up to 100 metres."))
        let noForm = try task(#"{"type": "sensorTask", "task": "timedWalk", "identifier": "tw", "includeAssistiveDeviceForm": false, "distanceInMeters": 1, "turnAroundTimeLimit": 0}"#)
        #expect(steps(noForm).map(\.id) == ["tw.instruction0", "tw.instruction1", "tw.instruction2", "tw.countdown", "tw.timed.walk.trial1", "tw.timed.walk.trial2", "tw.conclusion", "end"])
        #expect(noForm.steps[4].presentation["text"] == .string("Walk up to 1 metre."))
    }

    @Test func fitnessCheckAndSixMinuteWalk() throws {
        let walk = ["pedometer", "accelerometer@100", "deviceMotion@100", "location", "heartRate"]
        let rest = ["accelerometer@100", "deviceMotion@100", "heartRate"]
        let t = try task(#"{"type": "sensorTask", "task": "fitnessCheck", "identifier": "fit", "options": ["excludeLocation"]}"#)
        #expect(steps(t) == [
            Expected(id: "fit.instruction0", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "fit.instruction1", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "fit.countdown", kind: "countdown", ms: 5000, recorders: []),
            Expected(id: "fit.fitness.walk", kind: "active", ms: 360_000, recorders: walk.filter { $0 != "location" }),
            Expected(id: "fit.fitness.rest", kind: "active", ms: 180_000, recorders: rest),
            Expected(id: "fit.conclusion", kind: "completion", ms: 0, recorders: []),
            Expected(id: "end", kind: "completion", ms: 0, recorders: []),
        ])
        #expect(t.steps[3].presentation["text"] == .string("Walk as fast as you can for 6 minutes."))
        #expect(t.steps[3].active?.speaksHalfway == true && t.steps[3].active?.speaksCountDown == true)
        let six = try task(#"{"type": "sensorTask", "task": "sixMinuteWalk", "identifier": "six"}"#)
        #expect(steps(six) == [
            Expected(id: "six.instruction0", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "six.instruction1", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "six.countdown", kind: "countdown", ms: 5000, recorders: []),
            Expected(id: "six.sixMinuteWalk.walk", kind: "active", ms: 360_000, recorders: walk),
            Expected(id: "six.conclusion", kind: "completion", ms: 0, recorders: []),
            Expected(id: "end", kind: "completion", ms: 0, recorders: []),
        ])
    }

    @Test func tremorPerHandAndPose() throws {
        let t = try task(#"{"type": "sensorTask", "task": "tremor", "identifier": "tr", "handOptions": "right", "activeStepDuration": 12, "options": ["excludeHandToNose", "excludeQueenWave"]}"#)
        var expected = [Expected(id: "tr.instruction0", kind: "instruction", ms: 0, recorders: []),
                        Expected(id: "tr.instruction1.right", kind: "instruction", ms: 0, recorders: [])]
        for pose in ["handInLap", "handAtShoulderLength", "handAtShoulderLengthWithElbowBent"] {
            expected += [Expected(id: "tr.tremor.\(pose).right.instruction", kind: "instruction", ms: 0, recorders: []),
                         Expected(id: "tr.tremor.\(pose).right.countdown", kind: "countdown", ms: 5000, recorders: []),
                         Expected(id: "tr.tremor.\(pose).right", kind: "active", ms: 12_000, recorders: ["accelerometer@100", "deviceMotion@100"])]
        }
        expected += [Expected(id: "tr.conclusion", kind: "completion", ms: 0, recorders: []), Expected(id: "end", kind: "completion", ms: 0, recorders: [])]
        #expect(steps(t) == expected)
        // Both hands (the default): left, then right; five poses of 10 s each.
        let both = try task(#"{"type": "sensorTask", "task": "tremor", "identifier": "tr"}"#)
        let active = steps(both).filter { $0.kind == "active" }
        #expect(active.count == 10)
        #expect(active.allSatisfy { $0.ms == 10_000 })
        #expect(active.first?.id == "tr.tremor.handInLap.left")
        #expect(active.last?.id == "tr.tremor.handQueenWave.right")
    }

    @Test func tappingAndAudio() throws {
        let t = try task(#"{"type": "sensorTask", "task": "tapping", "identifier": "tap"}"#)
        #expect(steps(t) == [
            Expected(id: "tap.instruction0", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "tap.instruction1.left", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "tap.tapping.left", kind: "active", ms: 20_000, recorders: ["accelerometer@100", "touch"]),
            Expected(id: "tap.instruction1.right", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "tap.tapping.right", kind: "active", ms: 20_000, recorders: ["accelerometer@100", "touch"]),
            Expected(id: "tap.conclusion", kind: "completion", ms: 0, recorders: []),
            Expected(id: "end", kind: "completion", ms: 0, recorders: []),
        ])
        let a = try task(#"{"type": "sensorTask", "task": "audio", "identifier": "voice", "duration": 15, "checkAudioLevel": true, "shortSpeechInstruction": "Say aah."}"#)
        #expect(steps(a) == [
            Expected(id: "voice.instruction0", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "voice.instruction1", kind: "instruction", ms: 0, recorders: []),
            Expected(id: "voice.countdown", kind: "countdown", ms: 5000, recorders: ["audio@44100"]),
            Expected(id: "voice.audio", kind: "active", ms: 15_000, recorders: ["audio@44100"]),
            Expected(id: "voice.conclusion", kind: "completion", ms: 0, recorders: []),
            Expected(id: "end", kind: "completion", ms: 0, recorders: []),
        ])
        #expect(a.steps[3].presentation["text"] == .string("Say aah."))
    }

    /// An expanded walk runs as ordinary steps: the countdown and the legs finish by themselves
    /// on the clock, and the result holds the steps by their identifiers.
    @Test func anExpandedWalkRunsOnTheClock() throws {
        let clock = ManualClock(GamePlay.t0)
        var options = SessionOptions()
        options.outputDirectory = temporaryDirectory()
        var s = Session(task: try task(#"{"type": "sensorTask", "task": "shortWalk", "identifier": "walk", "restDuration": 10, "legDuration": 30, "options": ["excludeInstructions"]}"#),
                        options: options, clock: clock.clock)
        #expect(s.currentStep?.identifier == "walk.countdown")
        for (offset, next) in [(5_000, "walk.walking.outbound"), (35_000, "walk.walking.return"), (65_000, "walk.walking.rest"), (75_000, "walk.conclusion")] as [(Int64, String)] {
            clock.now = GamePlay.t0 + offset
            s.tick()
            #expect(s.currentStep?.identifier == next)
            if next == "walk.walking.outbound" {
                // Its recorders run, named by the step.
                #expect(s.current?.active?.recorders.map(\.identifier) == ["accelerometer", "deviceMotion", "pedometer"].map { "walk.walking.outbound." + $0 })
                #expect(s.current?.active?.recorders.allSatisfy { $0.status == .running } == true)
            }
        }
        // The path holds the expanded steps by their identifiers.
        #expect(s.resultJSON().objectValue?["results"]?.arrayValue?.first?.objectValue?["identifier"] == .string("walk"))
    }

    /// A template is a section: shown or not by its `visibleWhen`, and not allowed inside a
    /// shuffled section (which holds steps only).
    @Test func aTemplateIsASection() throws {
        let t = try compile(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "able", "answerFormat": {"type": "boolean"}},"#
            + #" {"type": "sensorTask", "task": "audio", "identifier": "voice", "visibleWhen": {"result": {"step": "able"}, "equals": true}},"#
            + #" {"type": "completion", "identifier": "end"}]}"#)
        var s = Session(task: t, options: SessionOptions(), clock: ManualClock(GamePlay.t0).clock)
        try s.setAnswer(.bool(false))
        try s.goForward()
        #expect(s.currentStep?.identifier == "end")
        var shown = Session(task: t, options: SessionOptions(), clock: ManualClock(GamePlay.t0).clock)
        try shown.setAnswer(.bool(true))
        try shown.goForward()
        #expect(shown.currentStep?.identifier == "voice.instruction0")
        #expect(throws: (any Error).self) {
            try compile(#"{"identifier": "t", "steps": [{"type": "section", "identifier": "s", "shuffleSteps": true, "steps": ["#
                + #"{"type": "instruction", "identifier": "a"}, {"type": "sensorTask", "task": "audio", "identifier": "v"}]}]}"#)
        }
    }

    @Test func badTemplatesAreDefinitionErrors() {
        for bad in [#""task": "marathon""#, #""task": "shortWalk", "numberOfStepsPerLeg": 0"#, #""task": "shortWalk", "restDuration": -1"#,
                    #""task": "tremor", "options": ["excludeHandInLap", "excludeHandAtShoulderHeight", "excludeHandAtShoulderHeightElbowBent", "excludeHandToNose", "excludeQueenWave"]"#,
                    #""task": "audio", "options": ["excludeEverything"]"#, #""task": "audio", "colour": 1"#, #""task": "timedWalk", "distanceInMeters": 0"#] {
            #expect(throws: (any Error).self) { try compile(#"{"identifier": "t", "steps": [{"type": "sensorTask", "identifier": "x", "# + bad + "}]}") }
        }
        // A step of the task named like an expanded one is a duplicate.
        #expect(throws: (any Error).self) {
            try compile(#"{"identifier": "t", "steps": [{"type": "sensorTask", "identifier": "w", "task": "audio"}, {"type": "instruction", "identifier": "w.audio"}]}"#)
        }
    }
}
