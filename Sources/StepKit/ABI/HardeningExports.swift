import StepKitBase
import StepKitCore

// Functions for the hardening harnesses only (hardening/fuzz/), compiled in when the library is
// built with `-Xswiftc -DSTEPKIT_HARDENING` (hardening/fuzz/run does). They are not part of the
// C ABI: include/stepkit.h does not declare them, a library built otherwise (the CMake build, the
// release) does not export them (bindings/c/tests/check_exports.sh), and the harness declares
// them itself (hardening/fuzz/fuzz_common.h).
#if STEPKIT_HARDENING

/// `int stepkit_hardening_session_copy(stepkit_session *session, stepkit_session **out_session)`:
/// a new session handle holding a copy of `session` as it is — the same run, clock and options,
/// without its event callback and autosave file — that goes on independently. The fuzz target
/// `answers` starts each input from a copy of a starting point made once, instead of restoring
/// the starting point's restoration data for every input (a fifth of its time).
@_cdecl("stepkit_hardening_session_copy")
public func stepkit_hardening_session_copy(_ session: OpaquePointer?, _ out_session: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    Boundary.create(out_session, argument: "out_session") { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        return try SessionHandle(handle.store.read { (s: borrowing Session) in copy s }, options: SessionOptions.parse(nil))
    }
}

#endif
