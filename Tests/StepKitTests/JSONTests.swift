import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

@Suite struct JSONTests {
    @Test func roundTripKeepsTypesOrderAndText() throws {
        let text = #"{"b":1,"a":[true,false,null,2.5,"h\u00e9llo \"q\""],"z":{"y":-0.1,"x":5.0}}"#
        let value = try json(text)
        #expect(JSONWriter.string(value) == #"{"b":1,"a":[true,false,null,2.5,"héllo \"q\""],"z":{"y":-0.1,"x":5.0}}"#)
    }

    @Test func realsAreWrittenShortestButExact() throws {
        for d in [0.1, 1.0 / 3.0, 123456.789, 1e-7, 2.5e300, -0.000123] {
            let text = JSONWriter.string(.array([.double(d), .double(0.1)]))
            let back = try json(text)
            #expect(back == .array([.double(d), .double(0.1)]), "\(text)")
        }
        #expect(JSONWriter.string(.double(0.1)) == "0.1")
    }

    @Test func strictParsing() {
        for bad in ["{", "[1,]", "{\"a\":1,\"a\":2}", "1e400", "\"\\u0000\"", "{} x", "NaN", "Infinity"] {
            #expect(throws: StepKitError.self, "\(bad)") { try json(bad) }
        }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: StepKitError.self) { try json(deep) }
    }

    @Test func pathsReadAsHostsWriteThem() {
        let path = JSONPath.root.key("steps").index(3).key("answerFormat").key("minimum")
        #expect(path.description == "steps[3].answerFormat.minimum")
        #expect(JSONPath.root.key("odd key").description == #"["odd key"]"#)
    }

    @Test func numbersCompareByValue() {
        #expect(JSON.int(1).sameValue(as: .double(1.0)))
        #expect(!JSON.int(1).sameValue(as: .string("1")))
    }
}

@Suite struct TimeTests {
    @Test func iso8601Formatting() {
        #expect(CivilTime.iso8601(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(CivilTime.iso8601(milliseconds: 1_767_225_600_000) == "2026-01-01T00:00:00.000Z")
        #expect(CivilTime.iso8601(milliseconds: 951_782_400_123) == "2000-02-29T00:00:00.123Z")
        #expect(CivilTime.iso8601(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }

    @Test func parsingDatesAndDateTimes() {
        #expect(CalendarValue.parse("2026-01-01") == .date(day: 20454))
        #expect(CalendarValue.parse("2026-01-01T00:00:00Z") == .dateTime(milliseconds: 1_767_225_600_000))
        #expect(CalendarValue.parse("2026-01-01T02:00+02:00") == .dateTime(milliseconds: 1_767_225_600_000))
        #expect(CalendarValue.parse("2026-01-01T00:00:00.5Z") == .dateTime(milliseconds: 1_767_225_600_500))
        for bad in ["2026-02-29", "2026-13-01", "2026-1-01", "2026-01-01T25:00Z", "2026-01-01T10:00", "2026-01-01T10:00Zx", "", "2026-01-01T10:00:00.1234567890Z"] {
            #expect(CalendarValue.parse(bad) == nil, "\(bad)")
        }
        #expect(TimeOfDay.minutes("08:30") == 510)
        #expect(TimeOfDay.minutes("24:00") == nil)
    }

    @Test func uuids() {
        let a = UUIDText.random(), b = UUIDText.random()
        #expect(a != b)
        #expect(UUIDText.normalized(a) == a)
        #expect(Array(a)[14] == "4")
        // Version 4 and variant 10 in every one, and every hexadecimal digit turning up in the
        // random places.
        var seen = Set<Character>()
        for _ in 0..<200 {
            let u = Array(UUIDText.random())
            #expect(u.count == 36 && UUIDText.normalized(String(u)) == String(u))
            #expect(u[8] == "-" && u[13] == "-" && u[18] == "-" && u[23] == "-")
            #expect(u[14] == "4" && "89AB".contains(u[19]), "\(String(u))")
            seen.formUnion(u.filter { $0 != "-" })
        }
        #expect(seen.count == 16)
        #expect(UUIDText.normalized("not-a-uuid") == nil)
        #expect(UUIDText.normalized("0a2b3c4d-1111-4222-8333-444455556666") == "0A2B3C4D-1111-4222-8333-444455556666")
    }
}

@Suite struct PlainJSONTests {
    /// jansson's reading of `text` (nil when it refuses it).
    private func jansson(_ text: String) -> JSON? {
        text.withCString { try? JSONParser.parseWithJansson(cString: $0) }
    }

    private func plain(_ text: String) -> JSON? {
        text.withCString { PlainJSON.parse($0) }
    }

    /// Whatever the plain reader reads, jansson reads the same, to the bit for doubles.
    private func agree(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let mine = plain(text) else { return false }
        let theirs = jansson(text)
        #expect(theirs.map { identical(mine, $0) } == true, "\(text.prefix(200))", sourceLocation: sourceLocation)
        return true
    }

    /// Equal, and doubles equal bit for bit (`==` takes 0.0 for -0.0).
    private func identical(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case (.object(let x), .object(let y)):
            return x.keys == y.keys && x.keys.indices.allSatisfy { i in
                x.value(at: i).flatMap { v in y.value(at: i).map { identical(v, $0) } } ?? false
            }
        default: return a == b
        }
    }

    @Test func readsWhatHostsAndTheEngineWrite() {
        #expect(plain("42") == .int(42))
        #expect(plain("-7") == .int(-7))
        #expect(plain("0") == .int(0))
        #expect(plain("999999999999999999") == .int(999_999_999_999_999_999))
        #expect(plain(" true ") == .bool(true))
        #expect(plain("null") == .null)
        #expect(plain(#""2026-01-01""#) == .string("2026-01-01"))
        #expect(plain(#"[ "a", "b" ]"#) == .array([.string("a"), .string("b")]))
        #expect(plain("[]") == .array([]) && plain("{}") == .object(JSONObject()))
        #expect(plain(#"{"weight": 72.5, "smoker": false, "drinks": ["beer", "wine"], "since": "2020-01-01"}"#)
            == .object(JSONObject(["weight": .double(72.5), "smoker": .bool(false), "drinks": .array([.string("beer"), .string("wine")]),
                                   "since": .string("2020-01-01")])))
        #expect(plain(#"{"a": {"b": [[1, {"c": null}]]}}"#) == jansson(#"{"a": {"b": [[1, {"c": null}]]}}"#))
        #expect(plain("1e3") == .double(1000) && plain("-2.5E-3") == .double(-0.0025))
        #expect(plain(#""line\nnext \"q\" \\ \/ \t""#) == .string("line\nnext \"q\" \\ / \t"))
        #expect(plain(#""\u00e9t\u00E9 \ud83d\ude00""#) == .string("été 😀"))
        #expect(plain("\"héllo\"") == .string("héllo"))
    }

    @Test func leavesTheRestToJansson() {
        let nested = String(repeating: "[", count: PlainJSON.maxDepth + 1) + String(repeating: "]", count: PlainJSON.maxDepth + 1)
        for text in ["-0", "01", "00.5", "1.", ".5", "1e", "1e+", "1234567890123456789", "1.0000000000000000000000000000001",
                     "1e400", "-1e400", #""\u0000""#, #""\ud800""#, #""\udc00 x""#, #""\ud800\u0041""#, #""\x""#, #""\u12G4""#,
                     "\"tab\there\"", #"{"a":1,"a":2}"#, #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{,}"#, #"{1:2}"#, "[1,]",
                     "[,1]", "[1 2]", "tru", "truex", "nul", "", " ", "\"abc", "1 2", "-", "[", "[1", "{\"a\":1", nested] {
            #expect(plain(text) == nil, "\(text.prefix(80))")
        }
        // Invalid UTF-8 (a lone continuation byte, an overlong form, a surrogate) is jansson's to refuse.
        for bytes: [UInt8] in [[0x22, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22]] {
            let read = (bytes + [0]).withUnsafeBufferPointer { b in
                b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { PlainJSON.parse($0) }
            }
            #expect(read == nil, "\(bytes)")
        }
    }

    /// Within limits, the reader takes a text at each limit exactly and leaves one past any of
    /// them (for `InputLimits.checkText` to name), reading no further than the size limit.
    @Test func limitsAreTheCheckersToName() {
        let limits = InputLimits(maxBytes: 16, maxDepth: 2, maxStringBytes: 4)
        func read(_ text: String) -> JSON? { text.withCString { PlainJSON.parse($0, within: limits) } }
        #expect(read(#"[["abcd"]]"#) == .array([.array([.string("abcd")])]))
        #expect(read(#"[[["a"]]]"#) == nil)                       // 3 deep
        #expect(read(#""abcde""#) == nil)                          // a 5-byte string
        #expect(read(#""ab\u00e9""#) == .string("abé") && read(#""abc\u00e9""#) == nil)  // 4 and 5 decoded bytes
        #expect(read("[1,2,3,4,5,6,77]") == .array((1...6).map { .int(Int64($0)) } + [.int(77)]))  // 16 bytes
        #expect(read("[1,2,3,4,5,6,777]") == nil)                 // 17
        #expect(read("[1,2,3,4,5,6,7]  ") == nil)                 // 17, spaces past the limit
        #expect(read("true            x") == nil)
        #expect(read("[1,2,3,4,5,6,7] ") != nil)                  // 16
        for text in [#"[[["a"]]]"#, #""abcde""#, "[1,2,3,4,5,6,777]"] {
            #expect(throws: StepKitError.self) { try text.withCString { try JSONParser.parse(cString: $0, within: limits, argument: "x") } }
        }
    }

    /// Decimals of every length the reader takes, from a fixed sequence: the same double as
    /// jansson's `strtod`, to the bit.
    @Test func numbersReadAsJanssonReadsThem() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        func digits(_ n: Int) -> String { String((0..<n).map { _ in Character(String(next(10))) }) }
        var read = 0
        for _ in 0..<4000 {
            var text = (next(2) == 0 ? "-" : "") + (next(4) == 0 ? "0" : String(next(9) + 1) + digits(next(17)))
            if next(3) > 0 { text += "." + digits(next(13) + 1) }
            if next(3) == 0 { text += ["e", "E"][next(2)] + ["", "+", "-"][next(3)] + String(next(330)) }
            if agree(text) { read += 1 }
        }
        #expect(read > 3000)
    }

    /// The decimals the reader computes itself (at most 15 digits, scaled by at most 10^22, no
    /// string made): bit for bit what jansson's `strtod` reads, at the edges of that range and
    /// on random ones inside it.
    @Test func shortDecimalsReadAsJanssonReadsThem() {
        for text in ["0.0", "-0.0", "0.1", "47.1", "-112.6", "1e22", "1e-22", "-1E+22", "999999999999999e22",
                     "999999999999999e-22", "0.000000000000001", "123456789012345e7", "9.99999999999999e-7",
                     "0.3e1", "5e-1", "1.7976931348623e-5", "8.9884656743115e10", "2.2250738585072e-8"] {
            #expect(agree(text))
            #expect(plain(text) != nil, "\(text) is read without jansson")
        }
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<20_000 {
            let whole = next(8), fraction = next(16 - max(whole, 1)) + 1
            var text = (next(2) == 0 ? "-" : "") + (whole == 0 ? "0" : String(next(9) + 1) + String((1..<whole).map { _ in Character(String(next(10))) }))
            text += "." + String((0..<fraction).map { _ in Character(String(next(10))) })
            if next(2) == 0 { text += "e" + String(next(45) - 22) }
            #expect(agree(text))
        }
    }

    /// Every text of up to four characters over the characters that matter, and every `{"a":…}`
    /// with up to five inside: whatever the plain reader reads, jansson reads the same.
    @Test func plainReaderAgreesWithJanssonOnEveryShortText() {
        let alphabet: [Character] = ["0", "1", "9", "-", "+", ".", "e", "\"", "a", "\\", "u", "[", "]", ",", " ", "t", "n", "\u{7F}",
                                     "{", "}", ":", "é"]
        var texts: [String] = [""]
        var frontier: [String] = [""]
        for _ in 0..<4 {
            frontier = frontier.flatMap { prefix in alphabet.map { prefix + String($0) } }
            texts += frontier
        }
        let inner: [Character] = ["\"", "a", "b", ":", ",", "1", "[", "]", "{", "}", " ", "\\"]
        frontier = [""]
        for _ in 0..<5 {
            frontier = frontier.flatMap { prefix in inner.map { prefix + String($0) } }
            texts += frontier.map { "{\"a\":" + $0 + "}" }
        }
        let read = texts.filter { agree($0) }.count
        #expect(read > 2000)
    }

    /// Every JSON document in the repository (tasks, FHIR Questionnaires, schemas, test data), and
    /// the published Questionnaires beside it when they are there; then each with bytes changed at
    /// random (a fixed sequence): the plain reader reads each as jansson does, or leaves it.
    @Test func documentsAndTheirMutationsReadAsJanssonReadsThem() throws {
        let root = String(repositoryRoot.dropLast())
        var files: [String] = []
        for dir in ["examples", "schema", "benchmarks", "bindings", "../shared/fhir/q"] { jsonFiles(root + "/" + dir, into: &files) }
        #expect(files.count >= 20)
        var read = 0
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let replacements: [UInt8] = Array(#"{}[]:,"\u0-.e "#.utf8) + [0x80, 0xC3, 0x0A]
        for file in files {
            guard let text = readFile(file) else { continue }
            if agree(text) { read += 1 }
            var bytes = Array(text.utf8)
            guard !bytes.isEmpty else { continue }
            for _ in 0..<20 {
                let saved = bytes
                bytes[next(bytes.count)] = replacements[next(replacements.count)]
                _ = agree(String(decoding: bytes, as: UTF8.self))
                bytes = saved
            }
        }
        #expect(read >= 20)
    }

    /// The reader recurses once a level, up to `maxDepth`: the deepest text it reads (objects
    /// and arrays alternating, escaped strings at the bottom) fits half of the 256 KiB thread
    /// stack hosts are promised, in a debug build.
    @Test func deepestTextFitsHalfASmallStack() {
        final class Box: @unchecked Sendable { var text = ""; var read: JSON? }
        let box = Box()
        let levels = PlainJSON.maxDepth
        box.text = (0..<levels).map { $0 % 2 == 0 ? #"{"k\u00e9y": "# : "[1, " }.joined() + #""\ud83d\ude00 \n""#
            + (0..<levels).reversed().map { $0 % 2 == 0 ? "}" : "]" }.joined()
        #expect(onThread(stack: 128 << 10) { box.read = box.text.withCString { PlainJSON.parse($0) } })
        #expect(box.read != nil && box.read == jansson(box.text))
    }

    private func jsonFiles(_ path: String, into files: inout [String]) {
        guard let dir = opendir(path) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(".") { continue }
            let full = path + "/" + name
            if entry.pointee.d_type == UInt8(DT_DIR) {
                jsonFiles(full, into: &files)
            } else if name.hasSuffix(".json") {
                files.append(full)
            }
        }
    }
}
