/// A string or a number as a dictionary key, equal to another exactly when `JSON.sameValue` says
/// the two values are the same: strings by their text, numbers by value (`1` is `1.0`), a string
/// never a number (`"1"` is not `1`).
///
/// Choice lists are checked for values that repeat, and a list may hold tens of thousands of
/// choices (a code list, a FHIR value set); comparing each new value with every earlier one made
/// compiling such a list quadratic (80,000 choices took 36 s, issue 26). A set of keys finds a
/// repeat in one probe.
package enum ScalarKey: Hashable, Sendable {
    case string(String)
    case number(Double)

    /// The key of a string or number; nil for any other value, which is no choice's value.
    package init?(_ value: JSON) {
        switch value {
        case .string(let s): self = .string(s)
        // `sameValue` compares numbers as their `numericValue`s; so does the key (Swift hashes
        // 0.0 and -0.0 alike, as `==` equates them).
        case .int(let i): self = .number(Double(i))
        case .double(let d): self = .number(d)
        default: return nil
        }
    }
}
