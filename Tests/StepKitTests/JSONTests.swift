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
    }

    @Test func leavesEverythingElseToJansson() {
        for text in ["1.5", "1e3", "-0", "01", "1234567890123456789", #""\n""#, #""é""#, "{}", #"{"a":1}"#,
                     "[[1]]", "[1,]", "[,1]", "[1 2]", "tru", "truex", "nul", "", " ", "\"abc", "1 2", "-", "[", "[1",
                     "\"a\u{7F}\""] {
            #expect(plain(text) == nil, "\(text)")
        }
    }

    /// Every text of up to four characters over an alphabet of the characters the plain reader
    /// looks at: whatever it reads, jansson reads the same, so which one ran is never visible.
    @Test func plainReaderAgreesWithJansson() {
        let alphabet: [Character] = ["0", "1", "9", "-", ".", "e", "\"", "a", "\\", "[", "]", ",", " ", "t", "n", "\u{7F}"]
        var texts: [String] = [""]
        var frontier: [String] = [""]
        for _ in 0..<4 {
            frontier = frontier.flatMap { prefix in alphabet.map { prefix + String($0) } }
            texts += frontier
        }
        var read = 0
        for text in texts {
            guard let value = plain(text) else { continue }
            read += 1
            #expect(jansson(text) == value, "\(text)")
        }
        #expect(read > 400)
        for text in ["true", "false", "null", " [ true , false , null ] ", "\t-123456789012345678\r\n", "[\"x y\",\"~\"]"] {
            #expect(plain(text) != nil && plain(text) == jansson(text), "\(text)")
        }
    }
}
