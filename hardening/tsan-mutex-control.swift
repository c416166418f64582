// Control for the ThreadSanitizer run (hardening/sanitize): four threads update a dictionary
// only inside Synchronization.Mutex.withLock. There is no race. If TSan reports one here, it
// cannot see Mutex's synchronization on this toolchain (the prebuilt Synchronization module is
// not instrumented and the lock waits with raw futex syscalls), and reports on Mutex-guarded
// state in StepKit are false positives of the same kind.
import Glibc
import Synchronization

final class Box: @unchecked Sendable { let m = Mutex<[Int: Int]>([:]) }
let box = Box()
var threads: [pthread_t] = []
for _ in 0..<4 {
    var th = pthread_t()
    pthread_create(&th, nil, { _ in
        for i in 0..<2000 { box.m.withLock { $0[i % 50] = i } }
        return nil
    }, nil)
    threads.append(th)
}
for th in threads { pthread_join(th, nil) }
print("control done:", box.m.withLock { $0.count })
