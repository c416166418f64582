
/// A BCP-47 language tag as StepKit reads one (`en`, `fr-CA`, `zh-Hant-TW`): letters and digits
/// in subtags of 1 to 8 separated by hyphens, the first of 2 to 8 letters. Tags compare without
/// regard to case (BCP-47 says case carries no meaning), so each is kept in its canonical case:
/// the language lower case, a 4-letter script title case, a 2-letter region upper case.
package enum LanguageTag {
    /// The tag in canonical case, or nil if it is not well formed.
    package static func canonical(_ text: String) -> String? {
        let subtags = text.split(separator: "-", omittingEmptySubsequences: false)
        guard !subtags.isEmpty, text.utf8.count <= 64 else { return nil }
        var out: [String] = []
        for (i, subtag) in subtags.enumerated() {
            let scalars = subtag.unicodeScalars
            guard (1...8).contains(scalars.count), scalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }) else {
                return nil
            }
            if i == 0 {
                guard scalars.count >= 2, scalars.allSatisfy({ $0.properties.isAlphabetic }) else { return nil }
                out.append(subtag.lowercased())
            } else if scalars.count == 4, scalars.allSatisfy({ $0.properties.isAlphabetic }) {
                out.append(subtag.prefix(1).uppercased() + subtag.dropFirst().lowercased())
            } else if scalars.count == 2, scalars.allSatisfy({ $0.properties.isAlphabetic }) {
                out.append(subtag.uppercased())
            } else {
                out.append(subtag.lowercased())
            }
        }
        return out.joined(separator: "-")
    }

    /// The tags to try for `tag`, most specific first: `fr-CA` → `fr-CA`, `fr` (BCP-47's lookup,
    /// RFC 4647 section 3.4, which drops the last subtag each time; a single-letter subtag such as
    /// the `x` of a private use part goes with the one after it).
    package static func fallbacks(_ tag: String) -> [String] {
        var parts = tag.split(separator: "-").map(String.init)
        var result: [String] = []
        while !parts.isEmpty {
            result.append(parts.joined(separator: "-"))
            parts.removeLast()
            if let last = parts.last, last.count == 1 { parts.removeLast() }
        }
        return result
    }

    /// The first of `tag`'s fallbacks that `available` holds (available tags in canonical case).
    package static func lookup(_ tag: String, in available: some Collection<String>) -> String? {
        fallbacks(tag).first { available.contains($0) }
    }
}
