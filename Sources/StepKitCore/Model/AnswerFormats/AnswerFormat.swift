import StepKitBase

/// Why an answer was refused: a stable code and a sentence for the participant.
struct AnswerRejection: Error, Sendable {
    var code: String
    /// The participant's message, rendered in their language by the session.
    var text: Message
    /// The message in English.
    var message: String { text.english }

    init(_ code: String, _ text: Message) {
        self.code = code
        self.text = text
    }

    init(_ code: String, _ key: String, _ arguments: KeyValuePairs<String, Message.Argument> = [:]) {
        self.init(code, Message(key, arguments))
    }

    /// A text whose check against a pattern would take more than the bound on a match.
    static let patternTooComplex = AnswerRejection("patternTooComplex", "pattern.tooComplex")

    /// The problem it is, at `path`.
    func problem(at path: JSONPath, item: String? = nil) -> Problem {
        Problem(code: code, text: text, path: path, item: item)
    }
}

/// The type a question result reports, and what predicates compare answers as.
enum ResultType: String, Sendable {
    case boolean, choice, scale, numeric, text, date, timeOfDay, timeInterval, location, multipleComponent, ses
    /// A host's report (`Model/HostedSteps.swift`): a captured file, or what the host observed.
    case file, report

    /// The type its answers have in expressions (a date's is `.date`; `DateFormat` says when
    /// it is a date and time); nil for answers only `answered` reads.
    var expressionType: ExpressionType? {
        switch self {
        case .boolean: return .boolean
        case .choice: return .choice
        case .scale, .numeric, .timeInterval, .ses: return .number
        case .text: return .string
        case .date: return .date
        case .timeOfDay: return .time
        case .location, .multipleComponent, .file, .report: return nil
        }
    }
}

/// Where every answer a format accepts lies, in the order predicates and expressions compare
/// its answers (`AnswerValue.magnitude`): numbers as themselves, dates as their instant,
/// times of day as seconds since midnight. nil on a side: no bound there. It may be wider than
/// the exact set of answers (a scale's steps are not in it), never narrower: the checker claims
/// "never holds" from it.
struct ValueRange: Sendable, Equatable {
    var minimum: Double?
    var maximum: Double?
}

/// The keys of a format's two bounds that a definition may write as expressions, and the type
/// each expression must have (`AnswerBounds`).
struct BoundKeys: Sendable, Equatable {
    let minimum: String
    let maximum: String
    let type: ExpressionType
}

/// One answer format's rules: what an answer must look like and how it is reported.
///
/// Each format is a small value built once at compile time; `validate` runs on every answer
/// and returns the answer as it is kept (normalized where the format says so, for example an
/// exclusive choice clearing the others), or `nil` when the answer clears the question.
///
/// Every fact about a format is asked of the format, never worked out elsewhere by its type:
/// its result type and expression type, its value range (the checker's "never holds"), its
/// bound keys and what an answer outside bounds written as expressions is told, its scores,
/// its defaults. Adding a format is one file here and a line in `AnswerFormat.parsers`.
protocol AnswerFormatRules: Sendable {
    var resultType: ResultType { get }
    /// The type of its answers in expressions (`resultType`'s, unless the format says more).
    var expressionType: ExpressionType? { get }
    /// Where every answer it accepts lies (nil: it has no order, or no bound is known).
    var valueRange: ValueRange? { get }
    /// The keys of the bounds a definition may write as expressions (nil: none may be).
    var boundKeys: BoundKeys? { get }
    /// What `{"score": ...}` reads of its answers (empty: it has no scores).
    var scores: ScoreTable { get }
    /// The choices its answers select from, in order (nil: it is not answered by choosing), and
    /// whether more than one may be selected.
    var choiceOptions: [ChoiceOption]? { get }
    var allowsMultipleChoices: Bool { get }
    /// Whether its choices are shown in the session's seeded order (`shuffle`).
    var isShuffled: Bool { get }
    /// Where its choices come from when an earlier answer gives them (`choicesFrom`).
    var choiceSource: ChoiceSource? { get }
    /// The unit written next to numeric results ("years", "cm"), if any.
    var unit: String? { get }
    /// Every setting this format applies when the definition leaves it out (a bound, a unit, a
    /// step, a style), under the definition's own keys, each handed to `add` in order. The
    /// state's answer format carries them (`AnswerFormat.presentation`), so no host repeats an
    /// engine default. Handed over rather than returned as an object: an object made for each
    /// format compiled, then merged, cost more than the rest of the merge.
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void)
    /// Bounds the definition gives as expressions, under their keys (`AnswerBounds` compiles
    /// them once every step is known); the format itself leaves them out of its own checks.
    var boundExpressions: JSONObject { get }
    /// The rules themselves when they are a repeating block's (nil for every other format):
    /// asked once per format compiled, where `as? RepeatingFormat` was a runtime cast.
    var repeatingRules: RepeatingFormat? { get }
    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON?
    /// Why `answer` (as kept, not "don't know") is outside the bounds once those written as
    /// expressions are evaluated: `minimum`/`maximum` nil where the bound is the definition's
    /// literal one, `.null` where the expression gives no bound. nil: it is within them.
    func boundRejection(_ answer: JSON, minimum: ExpressionValue?, maximum: ExpressionValue?) -> AnswerRejection?
}

extension AnswerFormatRules {
    var expressionType: ExpressionType? { resultType.expressionType }
    var valueRange: ValueRange? { nil }
    var boundKeys: BoundKeys? { nil }
    var scores: ScoreTable { ScoreTable() }
    var choiceOptions: [ChoiceOption]? { nil }
    var allowsMultipleChoices: Bool { false }
    var isShuffled: Bool { false }
    var choiceSource: ChoiceSource? { nil }
    func boundRejection(_ answer: JSON, minimum: ExpressionValue?, maximum: ExpressionValue?) -> AnswerRejection? { nil }
    var unit: String? { nil }
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) {}
    var boundExpressions: JSONObject { JSONObject() }
    var repeatingRules: RepeatingFormat? { nil }

    /// The keys among `keys` whose value is an object: a bound written as an expression, marked
    /// as read.
    static func expressionBounds(_ r: FieldReader, _ keys: [String]) -> JSONObject {
        var found = JSONObject()
        for key in keys {
            if case .object = r.object[key], let value = r.value(key) { found[key] = value }
        }
        return found
    }

    /// Reports `key` (a default: where the host's picker starts) when it is not a valid answer
    /// of this format. Defaults are checked when the task is compiled, not kept as answers.
    func checkDefault(_ key: String, in r: FieldReader) {
        guard let value = r.value(key) else { return }
        do throws(AnswerRejection) { _ = try validate(value, previous: nil) } catch {
            r.diagnostics.error("defaultOutOfRange", "\"\(key)\" is not a valid answer: " + error.message, at: r.path.key(key))
        }
    }
}

/// A compiled answer format: its rules plus what every format shares.
///
/// A class, immutable, for the reason `Step` is one: a step's content is read on every call
/// (validating, checking what is required, evaluating `visibleWhen`), and as a struct each read
/// copied the type, the rules' existential, the personal-data field and the presentation,
/// retaining and releasing each; now it is one reference.
final class AnswerFormat: Sendable {
    /// `customDontKnowButtonText` when the definition leaves it out.
    static let dontKnowLabel = "I don't know"

    let type: String
    let rules: any AnswerFormatRules
    /// `showDontKnowButton`: whether `{"dontKnow": true}` is an answer.
    let allowsDontKnow: Bool
    /// `personalData`: the field of the host's personal data (ResearchKit reads HealthKit) that
    /// prefills the question.
    let personalData: String?
    /// The format as the host should present it: its definition with every default the engine
    /// applies filled in (`AnswerFormatRules.defaults`, `showDontKnowButton`).
    let presentation: JSONObject
    /// `rules.resultType`, read once: predicates read it on every evaluation, and through the
    /// existential each read was a witness call.
    let resultType: ResultType
    /// `rules.validate`, bound once: called through the stored existential, it copied the rules
    /// out of the class and destroyed the copy again on every answer validated.
    private let validateRules: @Sendable (JSON, JSON?) throws(AnswerRejection) -> JSON?
    /// The rules when they are a repeating block's, read once: what a step requires asks it of
    /// every step on every move, and `rules as? RepeatingFormat` was a runtime cast each time.
    let repeating: RepeatingFormat?

    init(type: String, rules: any AnswerFormatRules, allowsDontKnow: Bool, personalData: String?, presentation: JSONObject) {
        self.type = type
        self.rules = rules
        self.resultType = rules.resultType
        self.validateRules = { (answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? in
            try rules.validate(answer, previous: previous)
        }
        self.repeating = rules.repeatingRules
        self.allowsDontKnow = allowsDontKnow
        self.personalData = personalData
        self.presentation = presentation
    }

    static let personalDataFields = ["biologicalSex", "bloodType", "dateOfBirth", "fitzpatrickSkinType",
                                     "wheelchairUse", "height", "bodyMass"]

    static let dontKnow: JSON = .object(["dontKnow": .bool(true)])

    /// Whether `value` is `dontKnow`, read in place: comparing with the shared value went
    /// through its lazy initialisation and a whole-value comparison, on every answer read.
    static func isDontKnow(_ value: JSON?) -> Bool {
        guard case .object(let object)? = value, object.count == 1, case .bool(true)? = object["dontKnow"] else { return false }
        return true
    }

    /// Checks `answer` and returns what to keep (`nil`: no answer).
    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        if answer.isNull { return nil }
        if case .object(let object) = answer, object["dontKnow"] != nil {
            guard allowsDontKnow else {
                throw AnswerRejection("dontKnowNotAllowed", "dontKnow.notAllowed")
            }
            guard object.count == 1, object["dontKnow"] == .bool(true) else {
                throw AnswerRejection("wrongType", "dontKnow.wrongType")
            }
            return AnswerFormat.dontKnow
        }
        return try validateRules(answer, AnswerFormat.isDontKnow(previous) ? nil : previous)
    }

    /// Every answer format type the compiler knows, and how to read each.
    private static let parsers: [String: @Sendable (FieldReader) -> (any AnswerFormatRules)?] = [
        "boolean": BooleanFormat.parse,
        "scale": ScaleFormat.parse,
        "continuousScale": ContinuousScaleFormat.parse,
        "textScale": { ChoiceFormat.parse($0, kind: .textScale) },
        "textChoice": { ChoiceFormat.parse($0, kind: .textChoice) },
        "imageChoice": { ChoiceFormat.parse($0, kind: .imageChoice) },
        "valuePicker": { ChoiceFormat.parse($0, kind: .valuePicker) },
        "multipleValuePicker": MultipleValuePickerFormat.parse,
        "numeric": NumericFormat.parse,
        "height": { MeasurementFormat.parse($0, kind: .height) },
        "weight": { MeasurementFormat.parse($0, kind: .weight) },
        "age": AgeFormat.parse,
        "ses": SESFormat.parse,
        "timeInterval": TimeIntervalFormat.parse,
        "text": TextFormat.parse,
        "email": EmailFormat.parse,
        "confirmText": ConfirmTextFormat.parse,
        "date": DateFormat.parse,
        "timeOfDay": TimeOfDayFormat.parse,
        "location": LocationFormat.parse,
    ]

    static var typeNames: [String] { parsers.keys.sorted() }

    /// Compiles the answer format at `path`, reporting its problems; nil when it has any.
    static func compile(_ value: JSON, at path: JSONPath, _ diagnostics: Diagnostics) -> AnswerFormat? {
        guard let reader = FieldReader(value, at: path, diagnostics, what: "an answer format") else { return nil }
        let before = diagnostics.problems.count
        guard let type = reader.string("type", required: true) else { return nil }
        guard let parse = parsers[type] else {
            diagnostics.error("unknownAnswerFormat",
                              "Unknown answer format type \"\(type)\"; expected one of: " + typeNames.joined(separator: ", ") + ".",
                              at: path.key("type"))
            return nil
        }
        let allowsDontKnow = reader.bool("showDontKnowButton") ?? false
        _ = reader.string("customDontKnowButtonText")
        let personalData = reader.choice("personalData", of: personalDataFields)
        let rules = parse(reader)
        reader.finish()
        guard let rules, diagnostics.problems.count == before else { return nil }
        var presentation = reader.object
        // The format's defaults, then whether "don't know" is offered and, for the formats that
        // offer it, its label (ResearchKit's text), each where the definition left it out: added
        // straight to the presentation, grown once to its final size (a dictionary of defaults
        // made first and merged was a fifth of compiling a format: `benchmarks/README.md`).
        let addsShowButton = presentation["showDontKnowButton"] == nil
        let addsLabel = allowsDontKnow && presentation["customDontKnowButtonText"] == nil
        var missing = (addsShowButton ? 1 : 0) + (addsLabel ? 1 : 0)
        rules.defaults { key, _ in if presentation[key] == nil { missing += 1 } }
        if missing > 0 {
            presentation.reserveCapacity(presentation.count + missing)
            rules.defaults { key, value in if presentation[key] == nil { presentation.appendNew(key, value) } }
            if addsShowButton { presentation.appendNew("showDontKnowButton", .bool(allowsDontKnow)) }
            if addsLabel { presentation.appendNew("customDontKnowButtonText", .string(AnswerFormat.dontKnowLabel)) }
        }
        return AnswerFormat(type: type, rules: rules, allowsDontKnow: allowsDontKnow, personalData: personalData,
                            presentation: presentation)
    }
}

extension RepeatingFormat {
    var repeatingRules: RepeatingFormat? { self }
}
