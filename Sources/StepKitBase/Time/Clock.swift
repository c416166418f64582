import Glibc

/// Where a session reads the time: milliseconds since the Unix epoch.
///
/// The system clock by default; a host function (`stepkit_session_set_clock`) for tests and
/// replays. The engine never sleeps; it only asks. `public` with `nowMilliseconds` `@inlinable`:
/// every step reads the time (see `IndexTable`).
public struct Clock: @unchecked Sendable {
    /// A host clock: a C function and its context, both owned by the host.
    public typealias HostFunction = @convention(c) (UnsafeMutableRawPointer?) -> Int64

    @usableFromInline let function: HostFunction?
    @usableFromInline let context: UnsafeMutableRawPointer?

    package static let system = Clock(function: nil, context: nil)

    package static func host(_ function: @escaping HostFunction, context: UnsafeMutableRawPointer?) -> Clock {
        Clock(function: function, context: context)
    }

    @inlinable package var nowMilliseconds: Int64 {
        if let function { return function(context) }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec).multipliedSaturated(by: 1000).addingSaturated(Int64(ts.tv_nsec / 1_000_000))
    }
}
