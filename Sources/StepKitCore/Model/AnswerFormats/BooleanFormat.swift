import StepKitBase

/// `boolean`: yes or no (ResearchKit's `ORKBooleanAnswerFormat`).
struct BooleanFormat: AnswerFormatRules {
    /// `yesScore`/`noScore`: what `{"score": SEL}` reads for each answer.
    var yesScore: Double?
    var noScore: Double?

    var resultType: ResultType { .boolean }
    var scores: ScoreTable { ScoreTable(yes: yesScore, no: noScore) }

    /// The labels of the two answers, ResearchKit's, so no host keeps its own "Yes" and "No".
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) {
        add("yesString", .string("Yes"))
        add("noString", .string("No"))
    }

    /// Read once, not made per format read (an array literal is allocated on each call).
    private static let labelKeys = ["yesString", "noString"]

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        r.accept(strings: labelKeys)
        let yes = r.number("yesScore"), no = r.number("noScore")
        return BooleanFormat(yesScore: yes, noScore: no)
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .bool = answer else { throw AnswerRejection("wrongType", "boolean.wrongType") }
        return answer
    }
}
