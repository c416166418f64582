import Glibc

/// A value behind a pthread mutex: the session lock, the handle registry, the fingerprint cache.
///
/// The standard library's `Synchronization.Mutex` would do, but ThreadSanitizer cannot see it on
/// this toolchain (its futex-based lock is invisible to TSan's interceptors, so every access under
/// it is reported as a race); a pthread mutex is what TSan understands, so the stress run under
/// TSan can tell real races from none (docs/reliability.md).
///
/// `public` only so that `withLock`'s body reaches the modules above (see `IndexTable`).
public final class Locked<Value>: @unchecked Sendable {
    // Allocated once and never moved: a pthread mutex must not change address while in use.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // The value lives behind a pointer rather than in a stored `var`: the mutex already makes
    // every access exclusive, and a class's `var` would be checked again at run time on each
    // one (`swift_beginAccess`, several per call on the registry and the session's lock).
    @usableFromInline let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        self.value = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value, the lock held for exactly the call. `@inlinable`: generic, so
    /// the modules above get it specialized for their value.
    @inlinable package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
