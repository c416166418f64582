import Testing
@testable import StepKitBase

/// A message's template filled byte by byte (ASCII templates, `Message.fill`) must read exactly as
/// the `Character` by `Character` fill it replaced: every form of every shipped catalogue, with
/// each placeholder given every kind of argument, and templates made to reach the edges
/// (braces without a name, names with digits and `_`, unknown names, line breaks).
@Suite struct MessageFillTests {
    /// A message with `names` as arguments: texts, counts, nested messages, clauses and lists in turn.
    func message(_ names: [String], variant: Int) -> Message {
        let nested = Message("answerRequired")
        var built: [(name: String, value: Message.Argument)] = []
        for (i, name) in names.enumerated() {
            switch (i + variant) % 5 {
            case 0: built.append((name, .text("v\"{x}\" é \(i)")))
            case 1: built.append((name, .count(i + variant)))
            case 2: built.append((name, .message(nested)))
            case 3: built.append((name, .clause(nested)))
            default: built.append((name, .list([nested, Message.author("an author's text.")])))
            }
        }
        return Message(key: "test", arguments: built)
    }

    @Test func asciiFillReadsAsTheCharacterFill() {
        var templates: [String] = []
        for (_, catalogue) in MessageCatalogue.shipped.sorted(by: { $0.key < $1.key }) {
            for key in catalogue.entries.keys.sorted() { templates += catalogue.entries[key]?.forms ?? [] }
        }
        #expect(templates.count > 50)
        let ascii = templates.filter { $0.utf8.allSatisfy { $0 < 0x80 } }
        #expect(ascii.count > 20, "the byte path is reached")
        templates += ["", "{", "}", "{}", "{a", "a}", "{a}{b}", "x{a_1}y{B2}.", "{a b}", "{é}", "\r\n{a}\r\n", "{{a}}", "{a}}", "{_}", "{unknown}"]
        for catalogue in [MessageCatalogue.english] + MessageCatalogue.shipped.values.sorted(by: { $0.language < $1.language }) {
            for template in templates {
                let names = Array(MessageCatalogue.argumentNames(template)).sorted() + ["a", "b", "a_1", "B2", "_"]
                for variant in 0..<5 {
                    let m = message(names, variant: variant)
                    #expect(m.fill(template, catalogue, byCharacters: false) == m.fill(template, catalogue, byCharacters: true), "\(template)")
                }
                let bare = Message("test")
                #expect(bare.fill(template, catalogue, byCharacters: false) == bare.fill(template, catalogue, byCharacters: true), "\(template)")
            }
        }
    }
}
