import CPCRE2

/// A regular expression compiled once by PCRE2, matched with a bound on the work of every match.
///
/// Why the wrapping: PCRE2 counts its match limit per starting position and does not count the
/// characters a repeat scans, so a search for `[0-9]+z` over a long run of digits is quadratic
/// whatever the limit. The pattern is therefore compiled as `(?s:.*?)(?:PATTERN)` and matched
/// anchored, with automatic possessification off: one match attempt whose every step forward
/// (the lazy prefix trying the next start, a repeat giving back a character) is a counted
/// backtrack, so the match limit bounds the whole search. The limit grows with the subject
/// (`baseMatchLimit + matchLimitPerByte` per byte), so a simple pattern still fails cleanly on
/// a long answer, while no answer costs more than a bounded, linear amount of work. A pattern
/// anchored at the start needs no wrapping: PCRE2 tries it at one start only.
///
/// The compiled code and match context are never changed after `init`, which PCRE2 allows to be
/// shared between threads; each match creates its own match data.
package final class RegularExpression: @unchecked Sendable {
    /// What one match found.
    package enum Outcome: Sendable, Equatable {
        case match
        case noMatch
        /// The match would take more than its bound (match, depth or heap limit).
        case tooComplex
    }

    /// Why a pattern did not compile: PCRE2's message and the byte offset it names.
    package struct CompileError: Error, Sendable {
        package var message: String
    }

    /// Longest pattern accepted, in bytes: a validation pattern is a line, not a program, and a
    /// short pattern keeps the unbounded part of each step (comparing a literal) small.
    static let maxPatternBytes = 4096
    /// Counted steps (backtracks) every match may take, plus `matchLimitPerByte` per byte of
    /// the subject: about 2 ms, then linear in the answer's size.
    static let baseMatchLimit: UInt32 = 20_000
    static let matchLimitPerByte: UInt32 = 2
    /// Backtracking depth and the memory it may use (KiB) for one match.
    static let depthLimit: UInt32 = 100_000
    static let heapLimitKiB: UInt32 = 16 * 1024
    /// Nesting of parentheses in a pattern (PCRE2 compiles nested groups recursively).
    static let parenthesesNestLimit: UInt32 = 64

    let source: String
    private let code: OpaquePointer
    private let matchContext: OpaquePointer

    init(_ source: String) throws(CompileError) {
        guard source.utf8.count <= RegularExpression.maxPatternBytes else {
            throw CompileError(message: "is longer than the limit of \(RegularExpression.maxPatternBytes) bytes")
        }
        guard let compileContext = pcre2_compile_context_create_8(nil) else {
            throw CompileError(message: "could not be compiled (out of memory)")
        }
        defer { pcre2_compile_context_free_8(compileContext) }
        pcre2_set_newline_8(compileContext, sk_pcre2_newline_any())
        pcre2_set_parens_nest_limit_8(compileContext, RegularExpression.parenthesesNestLimit)
        let options = sk_pcre2_option_utf() | sk_pcre2_option_ucp() | sk_pcre2_option_no_utf_check()
            | sk_pcre2_option_never_backslash_c() | sk_pcre2_option_no_auto_possess()
        // The pattern as written first, so its own mistakes are reported at their own offsets.
        let plain = try RegularExpression.compile(source, options: options, context: compileContext)
        // Anchored at the start already (`^…`, `\A…` in every alternative): PCRE2 tries one
        // start only, so the pattern as written is bounded as it is. Otherwise it is matched as
        // one anchored attempt that counts every step.
        let code: OpaquePointer
        if RegularExpression.isAnchored(plain) {
            code = plain
        } else {
            defer { pcre2_code_free_8(plain) }
            let wrapped: OpaquePointer
            do {
                wrapped = try RegularExpression.compile("(?s:.*?)(?:" + source + ")", options: options, context: compileContext)
            } catch {
                throw CompileError(message: "must not end inside a comment or a \\Q quotation, nor use PCRE2's (*VERB) options")
            }
            guard RegularExpression.captureCount(plain) == RegularExpression.captureCount(wrapped) else {
                pcre2_code_free_8(wrapped)
                throw CompileError(message: "uses a construct StepKit cannot bound")
            }
            code = wrapped
        }
        guard let context = pcre2_match_context_create_8(nil) else {
            pcre2_code_free_8(code)
            throw CompileError(message: "could not be compiled (out of memory)")
        }
        pcre2_set_depth_limit_8(context, RegularExpression.depthLimit)
        pcre2_set_heap_limit_8(context, RegularExpression.heapLimitKiB)
        self.source = source
        self.code = code
        self.matchContext = context
    }

    deinit {
        pcre2_match_context_free_8(matchContext)
        pcre2_code_free_8(code)
    }

    /// Whether the pattern matches somewhere in `text` (as `NSRegularExpression` finds a first
    /// match), within the bound. The match limit is set per call on a private copy of the
    /// context, since it depends on the subject's length.
    func firstMatch(in text: String) -> Outcome {
        var text = text
        return text.withUTF8 { bytes -> Outcome in
            guard let context = pcre2_match_context_copy_8(matchContext) else { return .tooComplex }
            defer { pcre2_match_context_free_8(context) }
            let perByte = UInt64(RegularExpression.matchLimitPerByte) * UInt64(bytes.count)
            let limit = min(UInt64(RegularExpression.baseMatchLimit) + perByte, UInt64(UInt32.max))
            pcre2_set_match_limit_8(context, UInt32(limit))
            guard let data = pcre2_match_data_create_from_pattern_8(code, nil) else { return .tooComplex }
            defer { pcre2_match_data_free_8(data) }
            // Swift strings are valid UTF-8: PCRE2 need not check again.
            let options = sk_pcre2_option_anchored() | sk_pcre2_option_no_utf_check()
            let empty: UInt8 = 0
            let rc = withUnsafePointer(to: empty) { emptyPointer in
                pcre2_match_8(code, bytes.baseAddress ?? emptyPointer, bytes.count, 0, options, data, context)
            }
            if rc >= 0 { return .match }
            if rc == sk_pcre2_error_nomatch() { return .noMatch }
            return .tooComplex
        }
    }

    private static func compile(_ pattern: String, options: UInt32, context: OpaquePointer) throws(CompileError) -> OpaquePointer {
        var errorCode: Int32 = 0
        var errorOffset = 0
        var pattern = pattern
        let code = pattern.withUTF8 { bytes -> OpaquePointer? in
            let empty: UInt8 = 0
            return withUnsafePointer(to: empty) { emptyPointer in
                pcre2_compile_8(bytes.baseAddress ?? emptyPointer, bytes.count, options, &errorCode, &errorOffset, context)
            }
        }
        guard let code else {
            throw CompileError(message: "has an error at offset \(errorOffset): \(message(errorCode))")
        }
        return code
    }

    private static func isAnchored(_ code: OpaquePointer) -> Bool {
        var options: UInt32 = 0
        guard pcre2_pattern_info_8(code, sk_pcre2_info_alloptions(), &options) == 0 else { return false }
        return options & sk_pcre2_option_anchored() != 0
    }

    private static func captureCount(_ code: OpaquePointer) -> UInt32 {
        var count: UInt32 = 0
        _ = pcre2_pattern_info_8(code, sk_pcre2_info_capturecount(), &count)
        return count
    }

    /// PCRE2's text for an error code.
    private static func message(_ code: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBufferPointer { pcre2_get_error_message_8(code, $0.baseAddress, $0.count) }
        guard n > 0 else { return "error \(code)" }
        return String(decoding: buffer.prefix(Int(n)), as: UTF8.self)
    }
}
