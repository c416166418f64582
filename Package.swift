// swift-tools-version:6.0
// StepKit: a headless research-task engine with a C ABI. See README.md and docs/architecture.md.
import PackageDescription

let package = Package(
    name: "StepKit",
    products: [
        // libstepkit.so: the C ABI declared in include/stepkit.h.
        .library(name: "stepkit", type: .dynamic, targets: ["StepKit"]),
    ],
    targets: [
        // jansson, through pkg-config; Debian's libjansson-dev provides it.
        .systemLibrary(
            name: "CJansson",
            path: "Sources/CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        // OpenSSL's libcrypto's headers (Debian's libssl-dev, in /usr/include): SHA-256 and
        // HMAC-SHA256 for the integrity check of restoration data. Not linked: the engine loads
        // libcrypto when it first needs a digest (Sources/StepKitBase/Integrity/LibCrypto.swift), so
        // no pkg-config here, whose flags would link it.
        .systemLibrary(
            name: "CCrypto",
            path: "Sources/CCrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // PCRE2 (8-bit), through pkg-config (Debian's libpcre2-dev): the regular expressions of
        // definitions, matched with a bound on every match (Sources/StepKitBase/Regex/).
        .systemLibrary(
            name: "CPCRE2",
            path: "Sources/CPCRE2",
            pkgConfig: "libpcre2-8",
            providers: [.apt(["libpcre2-dev"])]
        ),
        // The public header as a Clang module, so `@c @implementation` checks every export
        // against its declaration.
        .systemLibrary(name: "CStepKit", path: "Sources/CStepKit"),
        // The engine in three layers, each a module, so a use that goes up or sideways does not
        // compile (docs/architecture.md, "Layers and folders"). A name one layer gives the next
        // is `package`; everything else stays internal to its layer.
        //
        // StepKitBase: the only code that touches jansson, PCRE2 and libcrypto (JSON/, Regex/,
        // Integrity/), and the vocabulary every layer shares (Errors/, Time/, Support/).
        .target(
            name: "StepKitBase",
            dependencies: ["CJansson", "CCrypto", "CPCRE2"],
            path: "Sources/StepKitBase"
        ),
        // StepKitCore: the engine (Model/, Rules/, Expressions/, Checker/, FHIR/, Results/,
        // Session/, Files/); it knows no C beyond libc's file calls, and nothing of the ABI.
        .target(
            name: "StepKitCore",
            dependencies: ["StepKitBase"],
            path: "Sources/StepKitCore"
        ),
        // StepKit: the exported library, ABI/ only: the `@c @implementation` exports of
        // include/stepkit.h, handles, the last error.
        .target(
            name: "StepKit",
            dependencies: ["StepKitCore", "StepKitBase", "CStepKit"],
            path: "Sources/StepKit"
        ),
        .testTarget(
            name: "StepKitTests",
            dependencies: ["StepKit", "StepKitCore", "StepKitBase"],
            path: "Tests/StepKitTests"
        ),
    ]
)
