import Glibc
import StepKitBase
import StepKitCore

/// The shape every exported function shares: check the arguments, run the engine, turn its
/// result into a status code and an output string, and its failure into the thread's last error.
enum Boundary {
    typealias OutString = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

    /// Runs `body` and stores its JSON in `*out`. `*out` is NULL on failure.
    static func output(_ out: OutString?, _ body: () throws(StepKitError) -> JSON) -> Int32 {
        run(out, required: true) { (_: Bool) throws(StepKitError) in JSONWriter.mallocString(try body()) }
    }

    /// Runs `body`, which writes its JSON straight into a `malloc`'d buffer (`JSONOutput`), and
    /// stores it in `*out`.
    static func outputWritten(_ out: OutString?, _ body: () throws(StepKitError) -> UnsafeMutablePointer<CChar>) -> Int32 {
        run(out, required: true) { (_: Bool) throws(StepKitError) in try body() }
    }

    /// Runs `body` and stores its text (already JSON) in `*out`.
    static func outputText(_ out: OutString?, _ body: () throws(StepKitError) -> String) -> Int32 {
        run(out, required: true) { (_: Bool) throws(StepKitError) in try body().withCString { strdup($0) } }
    }

    /// Runs a call that changes a session and returns its new state in `*out`; `out` may be NULL
    /// when the caller does not want the state, and then no state is built (`body` is told, and
    /// returns the state already written, `SessionHandle.call`, or nil).
    static func change(_ out: OutString?, _ body: (_ wantsState: Bool) throws(StepKitError) -> UnsafeMutablePointer<CChar>?) -> Int32 {
        run(out, required: false) { (wantsState: Bool) throws(StepKitError) in try body(wantsState) }
    }

    /// The shared shape of the three: `*out` is NULL unless the call succeeds; `body` gets whether
    /// the caller wants output and returns it as a `malloc`'d string (NULL: out of memory).
    private static func run(_ out: OutString?, required: Bool,
                            _ body: (_ wantsOutput: Bool) throws(StepKitError) -> UnsafeMutablePointer<CChar>?) -> Int32 {
        if required && out == nil {
            return fail(.nullArgument("out"))
        }
        out?.pointee = nil
        do throws(StepKitError) {
            let text = try body(out != nil)
            guard let out else { return 0 }
            guard let text else {
                throw StepKitError(.internal, code: "outOfMemory", message: "The output could not be written.")
            }
            out.pointee = text
            return 0
        } catch {
            return fail(error)
        }
    }

    /// Runs `body`, which returns nothing to the caller but its status.
    static func status(_ body: () throws(StepKitError) -> Void) -> Int32 {
        do throws(StepKitError) {
            try body()
            return 0
        } catch {
            return fail(error)
        }
    }

    /// Runs a call that creates a handle (a task, a session): `*out_handle` is NULL unless `body`
    /// succeeds, and then it is the new object, registered (`HandleRegistry`). A NULL
    /// `out_handle` is an invalid argument named `argument`.
    static func create<Object: AnyObject & Sendable>(_ out_handle: UnsafeMutablePointer<OpaquePointer?>?, argument: String,
                                                     _ body: () throws(StepKitError) -> Object) -> Int32 {
        guard let out_handle else {
            return fail(.nullArgument(argument))
        }
        out_handle.pointee = nil
        return status { () throws(StepKitError) in
            out_handle.pointee = HandleRegistry.register(try body())
        }
    }

    static func fail(_ error: StepKitError) -> Int32 {
        LastError.set(error)
        return error.status.rawValue
    }

    /// Parses a borrowed JSON argument within `limits`; NULL is an invalid argument named
    /// `argument`.
    static func json(_ text: UnsafePointer<CChar>?, argument: String, limits: InputLimits) throws(StepKitError) -> JSON {
        guard let text else {
            throw .nullArgument(argument)
        }
        let value = try JSONParser.parse(cString: text, within: limits, argument: argument)
        assert(limits.fits(value), "\(argument) was parsed, and passes a limit")
        return value
    }

    /// Decodes an enum-like string argument (a finish reason, an active operation): NULL is
    /// `nullArgument`; a text that names no case is `code`, its message listing every name.
    static func choice<Choice: RawRepresentable & CaseIterable>(_ text: UnsafePointer<CChar>?, argument: String,
                                                                 code: String, what: String) throws(StepKitError) -> Choice
    where Choice.RawValue == String {
        guard let text else {
            throw .nullArgument(argument)
        }
        guard let value = Choice(rawValue: shortText(text)) else {
            let names = Choice.allCases.map { "\"" + $0.rawValue + "\"" }.joined(separator: ", ")
            throw StepKitError(.invalidArgument, code: code, message: "Unknown \(what); expected one of: \(names).")
        }
        return value
    }
}

extension StepKitError {
    /// A NULL pointer where the call needs one: `EINVAL nullArgument`, naming the parameter.
    static func nullArgument(_ argument: String) -> StepKitError {
        StepKitError(.invalidArgument, code: "nullArgument", message: "\(argument) is NULL.")
    }
}

/// A short C string argument (a reason, an operation, an identifier) as text, read no further
/// than `limit` bytes so a missing NUL cannot run away.
func shortText(_ text: UnsafePointer<CChar>, limit: Int = 256) -> String {
    var n = 0
    while n < limit && text[n] != 0 { n += 1 }
    return String(decoding: UnsafeRawBufferPointer(start: text, count: n), as: UTF8.self)
}
