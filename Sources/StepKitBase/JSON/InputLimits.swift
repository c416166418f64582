/// Bounds on what a host (or an attacker posing as one) may hand the library, so no input can
/// exhaust memory or the stack: the size of the text, the nesting depth, the length of any one
/// string. `PlainJSON` reads a text only within them (it leaves a text past any of them, and
/// reads no further than the size limit); any other text is checked before jansson parses it
/// (`checkText`: all three, exactly, in one pass over the text), which names the limit passed.
/// Debug builds assert on the parsed value that it holds (`fits`).
package struct InputLimits: Sendable, Equatable {
    var maxBytes: Int
    var maxDepth: Int
    var maxStringBytes: Int

    /// Task definitions: 32 MiB (a 100,000-step task of varied questions and forms is about
    /// 30 MiB), 64 levels, 1 MiB strings. Compiling costs about 13 to 25 times the text at its
    /// peak (docs/reliability.md, section 8), so the default keeps a compile under about 450 MiB.
    package static let definition = InputLimits(maxBytes: 32 << 20, maxDepth: 64, maxStringBytes: 1 << 20)
    /// FHIR Questionnaires: as definitions, but 128 levels. The importer's own limit is 32
    /// levels of items (`FHIRItem.maxDepth`, docs/fhir.md), and each level of items is two of
    /// JSON (an `item` array and an object): 32 levels take 65 under the resource, and an item's
    /// own content (an answerOption's valueCoding's extension …) more. At 64 the text's depth
    /// limit refused a Questionnaire of 31 levels before the importer's check could (issue 26);
    /// at 128 every Questionnaire of 32 levels reads, and one nested deeper meets that check,
    /// which names the item, unless it is nested so deep (about 60 levels) that this limit
    /// refuses the text first.
    package static let questionnaire = InputLimits(maxBytes: 32 << 20, maxDepth: 128, maxStringBytes: 1 << 20)
    /// The options of compiling and importing (`CompileOptions`, `FHIRImportOptions`): a
    /// definition's defaults, since they carry definition content (a FHIR import's value sets)
    /// and the limits a definition is read within, which cannot raise their own.
    package static let compileOptions = definition
    /// Answers: 1 MiB, 32 levels, 1 MiB strings.
    package static let answer = InputLimits(maxBytes: 1 << 20, maxDepth: 32, maxStringBytes: 1 << 20)
    /// One batch of recorder samples: 16 MiB.
    package static let samples = InputLimits(maxBytes: 16 << 20, maxDepth: 32, maxStringBytes: 1 << 20)
    /// Submissions to verify (`stepkit_task_verify_result`: a task result or a
    /// QuestionnaireResponse): 32 MiB, 1 MiB strings, and 128 levels, a Questionnaire's, since a
    /// response nests its items as deep as the Questionnaire does.
    package static let submission = questionnaire
    /// Session options (which may carry earlier results) and restoration data: 256 MiB.
    package static let document = InputLimits(maxBytes: 256 << 20, maxDepth: 128, maxStringBytes: 16 << 20)

    /// The deepest nesting a host may allow: what the recursive walks (jansson's parser, the
    /// conversion, predicates, the checker) fit in a 256 KiB thread stack with room to spare;
    /// the catalogue runs at this depth on such a thread (hardening/catalogue.c).
    static let maxDepthCap = 256

    /// Checks the text before it is parsed, in one pass that stops at the first limit passed:
    /// its size, how deep its arrays and objects nest and how long (in decoded UTF-8 bytes) each
    /// string is. So nothing recursive (jansson's parser, the conversion, the walks after it)
    /// ever sees more nesting than `maxDepth`, and a 100 MB string is refused after reading
    /// `maxStringBytes` of it, not after parsing it. Brackets are counted outside strings only;
    /// a number that is not zero but would read as 0 is refused (`VanishingNumber`: jansson
    /// would take it as 0); anything else wrong with the text is left to the parser.
    package func checkText(_ text: TextBytes, argument: String) throws(StepKitError) {
        try checkText(text.cString, argument: argument)
    }

    func checkText(_ text: UnsafePointer<CChar>, argument: String) throws(StepKitError) {
        let limit = maxBytes
        try text.withMemoryRebound(to: UInt8.self, capacity: 1) { (bytes: UnsafePointer<UInt8>) throws(StepKitError) in
            var n = 0
            var depth = 0
            var inString = false
            var stringBytes = 0
            // Where the last number checked for vanishing ends: each is checked once.
            var checkedNumbers = 0
            while true {
                let byte = bytes[n]
                if byte == 0 { return }
                n += 1
                if n > limit {
                    throw StepKitError(.invalidArgument, code: "tooLarge",
                                       message: "\(argument) is larger than the limit of \(maxBytes) bytes.")
                }
                if inString {
                    switch byte {
                    case UInt8(ascii: "\""):
                        inString = false
                        continue
                    case UInt8(ascii: "\\"):
                        let escaped = bytes[n]
                        if escaped == 0 { return }
                        n += 1
                        if escaped == UInt8(ascii: "u") {
                            let (decoded, digits) = InputLimits.unicodeEscape(bytes + n)
                            stringBytes += decoded
                            n += digits
                        } else {
                            stringBytes += 1
                        }
                        if n > limit {
                            throw StepKitError(.invalidArgument, code: "tooLarge",
                                               message: "\(argument) is larger than the limit of \(maxBytes) bytes.")
                        }
                    default:
                        stringBytes += 1
                    }
                    if stringBytes > maxStringBytes {
                        throw StepKitError(.invalidArgument, code: "stringTooLong",
                                           message: "A string in \(argument) is longer than the limit of \(maxStringBytes) bytes.")
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                    stringBytes = 0
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                    if depth > maxDepth {
                        throw StepKitError(.invalidArgument, code: "tooDeep",
                                           message: "\(argument) nests deeper than the limit of \(NumberText.count(maxDepth, "level")).")
                    }
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth -= 1
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                    // A number's fraction or exponent (the e of `true` and `false` follows a
                    // letter): one that would read as 0 although it is not is refused here,
                    // since jansson reads it as 0 (`VanishingNumber`).
                    if n - 1 >= checkedNumbers, n >= 2, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[n - 2]) {
                        checkedNumbers = try VanishingNumber.check(bytes, at: n - 1, limit: limit)
                    }
                default:
                    break
                }
            }
        }
    }

    /// The UTF-8 bytes a `\\uXXXX` escape stands for (its hex digits start at `hex`): 1 to 3;
    /// a high surrogate counts the 4 bytes of its pair, the low one none. And how many hex digits
    /// it has. Malformed escapes count 1 and are the parser's to refuse; digits are read only up
    /// to the first byte that is not one (the text's terminating NUL included).
    private static func unicodeEscape(_ hex: UnsafePointer<UInt8>) -> (bytes: Int, digits: Int) {
        (escapedBytes(hex), (0..<4).first { !isHexDigit(hex[$0]) } ?? 4)
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(c)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(c)
    }

    private static func escapedBytes(_ hex: UnsafePointer<UInt8>) -> Int {
        var value = 0
        for i in 0..<4 {
            let c = hex[i]
            let digit: Int
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = Int(c - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = Int(c - UInt8(ascii: "A")) + 10
            default: return 1
            }
            value = value * 16 + digit
        }
        switch value {
        case 0..<0x80: return 1
        case 0x80..<0x800: return 2
        case 0xD800..<0xDC00: return 4
        case 0xDC00..<0xE000: return 0
        default: return 3
        }
    }

    /// Whether a parsed document keeps to the depth and string limits. `checkText` decides both
    /// exactly before parsing (brackets outside strings, decoded string bytes), so a document it
    /// passed always fits: the boundary asserts this in debug builds instead of walking every
    /// parsed value again (which cost 7 % of a compile).
    package func fits(_ value: JSON, depth: Int = 1) -> Bool {
        switch value {
        case .string(let s):
            return s.utf8.count <= maxStringBytes
        case .array(let items):
            guard depth <= maxDepth else { return false }
            for item in items where !fits(item, depth: depth + 1) { return false }
            return true
        case .object(let object):
            guard depth <= maxDepth else { return false }
            for key in object.keys {
                guard key.utf8.count <= maxStringBytes, let item = object[key], fits(item, depth: depth + 1) else { return false }
            }
            return true
        default:
            return true
        }
    }

    /// Reads `{"maxBytes", "maxDepth", "maxStringBytes"}`-style overrides from an options object.
    package func overridden(by r: FieldReader?, bytesKey: String, depthKey: String, stringKey: String) -> InputLimits {
        guard let r else { return self }
        var limits = self
        if let v = r.integer(bytesKey, in: 1...(1 << 40)) { limits.maxBytes = v }
        if let v = r.integer(depthKey, in: 1...InputLimits.maxDepthCap) { limits.maxDepth = v }
        if let v = r.integer(stringKey, in: 1...(1 << 40)) { limits.maxStringBytes = v }
        return limits
    }
}
