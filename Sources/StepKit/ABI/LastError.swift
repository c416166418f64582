import Glibc
import StepKitBase
import StepKitCore

/// The error JSON of the last failing call, one per thread (`stepkit_last_error`).
enum LastError {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    static func set(_ error: StepKitError) {
        let text = JSONWriter.mallocString(error.json)
        let old = pthread_getspecific(key)
        pthread_setspecific(key, text.map { UnsafeRawPointer($0) })
        free(old)
    }

    static var current: UnsafePointer<CChar>? {
        pthread_getspecific(key).map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
    }
}
