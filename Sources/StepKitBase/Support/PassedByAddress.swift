/// A field that makes the struct holding it address-only, so Swift hands that struct to every
/// function by its address (a borrow), never as a bitwise copy. It holds nothing.
///
/// A large struct that is not address-only is passed to a function that is not inlined as a
/// copy on the stack: a non-mutating method called from a mutating one (reading a session while
/// changing it) copied the whole value each time. An address-only value is read in place by
/// every such call. Swift makes a struct address-only when one of its fields is, and a weak
/// reference is (the runtime tracks it by its address); this one is always nil, costs 8 bytes,
/// and at run time only its copy and destruction with the session's, which go through the
/// runtime's weak-reference calls. `Session` holds one (`docs/architecture.md`, "A session's
/// parts", has the measurement).
package struct PassedByAddress: Sendable {
    private final class Nothing: Sendable {}
    private weak var nothing: Nothing?

    package init() {}
}
