import Testing
@testable import StepKit

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

    @Test func readsTheAnswersHostsSendMost() {
        #expect(plain("42") == .int(42))
        #expect(plain("-7") == .int(-7))
        #expect(plain("0") == .int(0))
        #expect(plain("999999999999999999") == .int(999_999_999_999_999_999))
        #expect(plain(" true ") == .bool(true))
        #expect(plain("false") == .bool(false))
        #expect(plain("null") == .null)
        #expect(plain(#""2026-01-01""#) == .string("2026-01-01"))
        #expect(plain(#""""#) == .string(""))
        #expect(plain(#"[ "a", "b" ]"#) == .array([.string("a"), .string("b")]))
        #expect(plain("[]") == .array([]))
        #expect(plain("[1,true,null]") == .array([.int(1), .bool(true), .null]))
        #expect(plain(#"{"weight": 72, "smoker": false, "drinks": ["beer", "wine"], "since": "2020-01-01"}"#)
            == .object(JSONObject(["weight": .int(72), "smoker": .bool(false), "drinks": .array([.string("beer"), .string("wine")]),
                                   "since": .string("2020-01-01")])))
        #expect(plain("{}") == .object(JSONObject()))
        #expect(plain("72.5") == .double(72.5))
        #expect(plain("-0.1") == .double(-0.1))
        #expect(plain("0.30000000000000004") == .double(0.30000000000000004))
    }

    @Test func leavesEverythingElseToJansson() {
        for text in ["1e3", "1.5e3", "1.", ".5", "-0", "01", "00.5", "1.0000000000000000000000000000001", "1234567890123456789", #""\n""#, #""é""#, #"{"a":{}}"#, #"{"a":1,"a":2}"#,
                     #"{"a":[[1]]}"#, #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{,}"#, #"{1:2}"#, #"[{}]"#, #"{"a":1"#,
                     "[[1]]", "[1,]", "[,1]", "[1 2]", "tru", "truex", "nul", "", " ", "\"abc", "1 2", "-", "[", "[1",
                     "\"a\u{7F}\""] {
            #expect(plain(text) == nil, "\(text)")
        }
    }

    /// Decimals of every length the reader takes, from a fixed sequence: the same double as
    /// jansson's `strtod`, to the bit.
    @Test func decimalsReadAsJanssonReadsThem() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<3000 {
            let whole = String(next(9) + 1) + String((0..<next(17)).map { _ in Character(String(next(10))) })
            let fraction = String((0..<(next(13) + 1)).map { _ in Character(String(next(10))) })
            let text = (next(2) == 0 ? "-" : "") + (next(4) == 0 ? "0" : whole) + "." + fraction
            guard let value = plain(text) else { continue }
            guard case .double(let mine) = value, case .double(let theirs)? = jansson(text) else {
                Issue.record("\(text) is not a double both ways")
                continue
            }
            #expect(mine.bitPattern == theirs.bitPattern, "\(text)")
        }
    }

    /// Every text of up to four characters over an alphabet of the characters the plain reader
    /// looks at: whatever it reads, jansson reads the same, so which one ran is never visible.
    @Test func plainReaderAgreesWithJansson() {
        let alphabet: [Character] = ["0", "1", "9", "-", ".", "e", "\"", "a", "\\", "[", "]", ",", " ", "t", "n", "\u{7F}",
                                     "{", "}", ":"]
        var texts: [String] = [""]
        var frontier: [String] = [""]
        for _ in 0..<4 {
            frontier = frontier.flatMap { prefix in alphabet.map { prefix + String($0) } }
            texts += frontier
        }
        // Objects need more characters: every `{…}` with up to five inside, over fewer.
        let inner: [Character] = ["\"", "a", "b", ":", ",", "1", "[", "]", "{", "}", " "]
        frontier = [""]
        for _ in 0..<5 {
            frontier = frontier.flatMap { prefix in inner.map { prefix + String($0) } }
            texts += frontier.map { "{\"a\":" + $0 + "}" }
        }
        var read = 0
        for text in texts {
            guard let value = plain(text) else { continue }
            read += 1
            #expect(jansson(text) == value, "\(text)")
        }
        #expect(read > 1000)
        for text in ["true", "false", "null", " [ true , false , null ] ", "\t-123456789012345678\r\n", "[\"x y\",\"~\"]", "0.1", "-0.0", "123456789012345678.5", "2.2250738585072011",
                     #"{"a":1,"b":[1,"x"],"c":null}"#] {
            #expect(plain(text) != nil && plain(text) == jansson(text), "\(text)")
        }
    }
}
