import StepKitBase

/// `boolean`: yes or no (ResearchKit's `ORKBooleanAnswerFormat`).
struct BooleanFormat: AnswerFormatRules {
    /// `yesScore`/`noScore`: what `{"score": SEL}` reads for each answer.
    var yesScore: Double?
    var noScore: Double?

    var resultType: ResultType { .boolean }
    var scores: ScoreTable { ScoreTable(yes: yesScore, no: noScore) }

    /// The labels of the two answers, ResearchKit's, so no host keeps its own "Yes" and "No".
    var defaults: JSONObject { JSONObject(["yesString": .string("Yes"), "noString": .string("No")]) }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        r.accept(strings: ["yesString", "noString"])
        let yes = r.number("yesScore"), no = r.number("noScore")
        return BooleanFormat(yesScore: yes, noScore: no)
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .bool = answer else { throw AnswerRejection("wrongType", "boolean.wrongType") }
        return answer
    }
}
