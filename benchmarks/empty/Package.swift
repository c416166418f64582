// swift-tools-version:6.0
// The floor of the load figure (benchmarks/load.c): a Swift shared library with one exported C
// function and nothing else, built exactly as libstepkit.so ships (release, -static-stdlib), so
// dlopen + first call of it is what any Swift library costs to load.
import PackageDescription

let package = Package(
    name: "Empty",
    products: [.library(name: "empty", type: .dynamic, targets: ["Empty"])],
    targets: [.target(name: "Empty", path: "Sources/Empty")]
)
