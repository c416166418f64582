/// `boolean`: yes or no (ResearchKit's `ORKBooleanAnswerFormat`).
struct BooleanFormat: AnswerFormatRules {
    var resultType: ResultType { .boolean }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        r.accept(strings: ["yesString", "noString"])
        return BooleanFormat()
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .bool = answer else { throw AnswerRejection("wrongType", "Answer yes (true) or no (false).") }
        return answer
    }
}
