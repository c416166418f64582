import CJansson
import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The direct writer must give exactly the bytes jansson's json_dumps gave (saved restoration
/// data and task fingerprints are digests of this text): compared here with a reference that
/// builds the jansson tree and dumps it, as the engine used to, over many generated documents.
@Suite struct JSONWriterTests {
    private func reference(_ value: JSON) -> String {
        var digits = 1
        let root = build(value, &digits)
        defer { sk_json_decref(root) }
        let flags = sk_json_flag_compact() | sk_json_flag_encode_any() | sk_json_real_precision(Int32(digits))
        guard let text = json_dumps(root, flags) else { return "?" }
        defer { free(text) }
        return String(cString: text)
    }

    private func build(_ value: JSON, _ digits: inout Int) -> UnsafeMutablePointer<json_t>? {
        switch value {
        case .null: return json_null()
        case .bool(let b): return b ? json_true() : json_false()
        case .int(let i): return json_integer(json_int_t(i))
        case .double(let d):
            guard d.isFinite else { return json_null() }
            digits = max(digits, JSONWriter.significantDigits(d))
            return json_real(d)
        case .string(let s):
            var s = s
            return s.withUTF8 { b in b.withMemoryRebound(to: CChar.self) { json_stringn_nocheck($0.baseAddress, $0.count) } }
        case .array(let items):
            let a = json_array()
            for item in items { json_array_append_new(a, build(item, &digits)) }
            return a
        case .object(let object):
            let o = json_object()
            for (key, item) in object.entries {
                var key = key
                _ = key.withUTF8 { b in b.withMemoryRebound(to: CChar.self) { json_object_setn_new_nocheck(o, $0.baseAddress, $0.count, build(item, &digits)) } }
            }
            return o
        }
    }

    /// The arithmetic count of a real's significant digits agrees with the count read from its
    /// shortest text wherever it answers, and it answers for the usual short decimals.
    @Test func significantDigitsByArithmeticAgreeWithTheShortestText() {
        var g = Generator(state: 0x5EED_D161_7500_0001)
        var answered = 0
        for i in 0..<200_000 {
            let d: Double
            switch i % 4 {
            case 0: d = Double(g.below(2_000_000_000)) / [1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9][g.below(10)]
            case 1: d = Double(bitPattern: g.next())
            case 2: d = Double(g.below(1 << 30)) * [1e-12, 1e-9, 1e3, 1e9, 1e14][g.below(5)]
            default: d = -Double(g.below(100_000)) / 8
            }
            guard d.isFinite else { continue }
            if let fast = JSONWriter.shortDecimalDigits(d) {
                answered += 1
                #expect(fast == JSONWriter.describedDigits(d), "\(d)")
            }
        }
        #expect(answered > 100_000)
        for d in [47.1, 0.1, 0.25, 100.0, 1200.0, 123456789012345.0, 0.00000001, 1.5e-8, 5e-324, 0.0, -0.0, 1e15, 0.30000000000000004] {
            #expect(JSONWriter.significantDigits(d) == JSONWriter.describedDigits(d), "\(d)")
        }
    }

    /// A deterministic generator (xorshift), so a failure is reproducible.
    private struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

        mutating func real() -> Double {
            switch below(8) {
            case 0: return Double(below(1000)) / 10
            case 1: return Double(bitPattern: next())
            case 2: return Double(below(100_000)) * 1e20
            case 3: return Double(below(100_000)) * 1e-20
            case 4: return -Double(below(1000)) - 0.5
            case 5: return [0.1, 0.2, 1.0 / 3, 1e21, 1e-7, 123456789012345678, -0.0, 5e-324, 1.7976931348623157e308][below(9)]
            case 6: return Double(below(1 << 20))
            default: return Double(below(1000)) / 1000
            }
        }

        mutating func string() -> String {
            let pieces = ["a", "é", "\"", "\\", "\n", "\t", "\u{1}", "\u{1F}", "\u{7F}", "/", "\u{2028}", "日本", "😀", "\u{8}", "\u{C}", "\r", " "]
            return (0..<below(8)).map { _ in pieces[below(pieces.count)] }.joined()
        }

        mutating func value(_ depth: Int) -> JSON {
            switch below(depth > 4 ? 6 : 8) {
            case 0: return .null
            case 1: return .bool(below(2) == 0)
            case 2: return .int(Int64(bitPattern: next()) >> Int64(below(64)))
            case 3: return .double(real())
            case 4, 5: return .string(string())
            case 6: return .array((0..<below(5)).map { _ in value(depth + 1) })
            default:
                var o = JSONObject()
                for _ in 0..<below(5) { o[string()] = value(depth + 1) }
                return .object(o)
            }
        }
    }

    @Test func sameBytesAsJansson() {
        var g = Generator(state: 0x9E37_79B9_7F4A_7C15)
        for _ in 0..<5000 {
            let value = g.value(0)
            #expect(JSONWriter.string(value) == reference(value))
        }
        for d in [0.1, 1e21, 1e-7, 100.0, -0.0, 5e-324, 1.7976931348623157e308, 2.5e-5, 1e100] {
            #expect(JSONWriter.string(.array([.double(d)])) == reference(.array([.double(d)])))
        }
        #expect(JSONWriter.string(.double(.nan)) == "null")
    }
}

/// JSONObject across its small (compared) and large (indexed) forms.
@Suite struct JSONObjectTests {
    @Test func keepsOrderAndFindsKeysAtEverySize() {
        var o = JSONObject()
        for i in 0..<20 { o["k\(i)"] = .int(Int64(i)) }
        #expect(Array(o.keys) == (0..<20).map { "k\($0)" })
        for i in 0..<20 { #expect(o["k\(i)"] == .int(Int64(i))) }
        o["k3"] = .string("three")
        #expect(o["k3"] == .string("three") && o.count == 20)
        for i in stride(from: 19, through: 0, by: -2) { o["k\(i)"] = nil }
        #expect(Array(o.keys) == stride(from: 0, to: 20, by: 2).map { "k\($0)" })
        for i in 0..<20 { #expect(o["k\(i)"] == (i % 2 == 0 ? (i == 3 ? .string("three") : .int(Int64(i))) : nil)) }
        o["new"] = .bool(true)
        #expect(o.keys.last == "new" && o["new"] == .bool(true) && o["k2"] == .int(2))
        var small = JSONObject()
        small["a"] = .int(1); small["b"] = .int(2); small["a"] = nil
        #expect(Array(small.keys) == ["b"] && small["a"] == nil && small["b"] == .int(2))
        #expect(JSONObject(["x": .int(1), "y": .int(2)]) == JSONObject(["x": .int(1), "y": .int(2)]))
        #expect(JSONObject(["x": .int(1), "y": .int(2)]) != JSONObject(["y": .int(2), "x": .int(1)]))
    }
}
