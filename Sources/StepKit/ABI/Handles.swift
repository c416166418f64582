import Glibc
import StepKitBase
import StepKitCore
import Synchronization

/// What a `stepkit_task *` points to.
final class TaskHandle: Sendable {
    let task: Task
    init(_ task: Task) { self.task = task }
}

/// What a `stepkit_session *` points to: the session's store (its lock, autosave and saved
/// texts: `Session/SessionStore.swift`) with what only the C boundary needs — the bounds on
/// argument sizes and the host's event callback.
final class SessionHandle: Sendable {
    let store: SessionStore
    /// The session's options, the object the session holds (`FixedOptions`): read without the
    /// session's lock, for the bounds on arguments parsed before a call takes it.
    private let options: FixedOptions
    /// The bounds on this session's answers and samples (session option "limits").
    var limits: SessionLimits { options.options.limits }
    private let callback = Locked<EventCallback?>(nil)
    /// Whether `callback` holds one, readable without its lock: every call asks, and locking
    /// (and retaining the callback) to find out cost about a hundred instructions a call.
    private let hasCallback = Atomic<Bool>(false)

    /// A handle on a new store for `session` (opened or restored with `options`): with autosave,
    /// the path is claimed and the first save written before the handle exists (`SessionStore`).
    init(_ session: Session, options: SessionOptions) throws(StepKitError) {
        self.store = try SessionStore(session, autosavePath: options.autosavePath)
        self.options = session.fixed
    }

    /// The state as it is, as a `malloc`'d C string, changing nothing: no events are handed out
    /// and nothing is autosaved.
    func state() -> UnsafeMutablePointer<CChar> {
        store.state()
    }

    /// Runs a call on the session: `body` under the lock, then the new state (written straight to
    /// a `malloc`'d C string, nil when `wantsState` is false) with the events the call produced
    /// (and any still queued); the events go to the event callback after the lock is
    /// released, so the callback may call back into the library. A call that wants no state, on a
    /// session with no callback, builds no events (they would be dropped unseen).
    func call(wantsState: Bool = true, _ body: (inout Session) throws(StepKitError) -> Void) throws(StepKitError) -> UnsafeMutablePointer<CChar>? {
        let heard = wantsState || hasCallback.load(ordering: .acquiring)
        let (state, events) = try store.call(recordingEvents: heard, wantsState: wantsState, body)
        deliver(events)
        return state
    }

    /// Replaces the event callback. The old one's user data is released once nothing uses it
    /// any more: at once, or after the delivery under way on this or another thread.
    func setCallback(_ new: EventCallback?) {
        let old = callback.withLock { stored -> EventCallback? in
            let old = stored
            stored = new
            hasCallback.store(new != nil, ordering: .releasing)
            return old
        }
        _ = old
    }

    /// Hands the events to the callback, one by one. The callback is looked up again before each
    /// event, so one that removes or replaces itself (or frees the session) hears nothing more,
    /// and the reference held during a call keeps its user data alive until the call returns.
    private func deliver(_ events: [JSON]) {
        guard !events.isEmpty else { return }
        for event in events {
            guard let target = callback.withLock({ $0 }) else { return }
            guard let text = JSONWriter.mallocString(event) else { continue }
            target.function(text, target.userData)
            free(text)
        }
    }
}

/// The handles the library has given out and not yet taken back.
///
/// Every call checks its handle here first, so a handle that was freed, or a pointer that was
/// never a handle, gets `STEPKIT_EINVAL` instead of undefined behaviour; a double free is
/// a no-op. The check and the retain happen under one lock, so a handle cannot be freed
/// between them.
enum HandleRegistry {
    /// Live handle addresses and the type each points to, and the handle resolved last.
    private struct Live {
        /// The addresses are the library's own objects', so they are hashed by `IndexKey`'s fixed
        /// mix, not SipHash.
        var table: [IndexKey: ObjectIdentifier] = [:]
        /// The handle `resolve` found last and its type (0: none), checked before the table: a
        /// host calls one session many times in a row, and the table's look-up was about 80
        /// instructions a call (`benchmarks/README.md`, "Wave 6: the no-output step"). It is
        /// always a live entry of `table`: `release` clears it with the entry.
        var lastAddress = 0
        var lastType: ObjectIdentifier?
    }

    private static let live = Locked(Live())

    static func register<T: AnyObject & Sendable>(_ object: T) -> OpaquePointer {
        let pointer = Unmanaged.passRetained(object).toOpaque()
        live.withLock { $0.table[IndexKey(Int(bitPattern: pointer))] = ObjectIdentifier(T.self) }
        return OpaquePointer(pointer)
    }

    /// The object behind a live handle of type `T`, retained for the caller.
    static func resolve<T: AnyObject & Sendable>(_ handle: OpaquePointer?, as type: T.Type, argument: String) throws(StepKitError) -> T {
        guard let handle else {
            throw .nullArgument(argument)
        }
        let address = Int(bitPattern: UnsafeRawPointer(handle))
        let object: T? = live.withLock { live in
            if live.lastAddress != address || live.lastType != ObjectIdentifier(T.self) {
                guard live.table[IndexKey(address)] == ObjectIdentifier(T.self) else { return nil }
                live.lastAddress = address
                live.lastType = ObjectIdentifier(T.self)
            }
            return Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
        }
        guard let object else {
            let name = T.self == TaskHandle.self ? "stepkit_task" : "stepkit_session"
            throw StepKitError(.invalidArgument, code: "invalidHandle",
                               message: "\(argument) is not a live \(name) handle (freed, or never created by StepKit).")
        }
        return object
    }

    /// Takes a handle of type `T` back and releases the library's reference; a handle that is not
    /// live (already freed, or of the other type) is ignored.
    static func release<T: AnyObject & Sendable>(_ handle: OpaquePointer?, as type: T.Type) {
        guard let handle else { return }
        let address = Int(bitPattern: UnsafeRawPointer(handle))
        let removed = live.withLock { live in
            guard live.table[IndexKey(address)] == ObjectIdentifier(T.self) else { return false }
            live.table[IndexKey(address)] = nil
            if live.lastAddress == address {
                live.lastAddress = 0
                live.lastType = nil
            }
            return true
        }
        if removed { Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).release() }
    }
}

/// A host's event callback and its user data (`stepkit_session_set_event_callback`). A class,
/// so that the user data is released when the last reference goes: a delivery under way holds
/// one, and the release waits for it.
final class EventCallback: @unchecked Sendable {
    typealias Function = @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void
    typealias Release = @convention(c) (UnsafeMutableRawPointer?) -> Void

    // The host owns what these point to; the library only calls them.
    let function: Function
    let userData: UnsafeMutableRawPointer?
    let releaseUserData: Release?

    init(function: @escaping Function, userData: UnsafeMutableRawPointer?, releaseUserData: Release?) {
        self.function = function
        self.userData = userData
        self.releaseUserData = releaseUserData
    }

    deinit { releaseUserData?(userData) }
}
