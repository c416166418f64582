/// The one function of the empty library: the load benchmark's first call, like
/// `stepkit_version`, returns a static C string.
@_cdecl("empty_version")
public func emptyVersion() -> UnsafePointer<CChar> {
    StaticString("0").utf8Start.withMemoryRebound(to: CChar.self, capacity: 2) { $0 }
}
