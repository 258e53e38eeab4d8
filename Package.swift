// swift-tools-version:6.1
import PackageDescription

/// One settings array for every Swift target, so the whole package speaks one dialect.
let swiftSettings: [SwiftSetting] = [
    // Existential types are spelled `any P`: the cost of dynamic dispatch stays visible.
    .enableUpcomingFeature("ExistentialAny"),
    // A file sees only the modules it imports itself, not its neighbours' imports.
    .enableUpcomingFeature("MemberImportVisibility"),
    // Imports are internal unless marked `public import`: what a module re-exports is a choice.
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "reachd",
    products: [
        .executable(name: "reachd", targets: ["reachd"]),
        .library(name: "Reachable", targets: ["Reachable"]),
        .library(name: "ReachableServer", targets: ["ReachableServer"]),
        .library(name: "Probes", targets: ["Probes"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The probe engine's timers: a heap (10,000 targets' timers are not scanned per wake-up).
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // C stays in these import targets: module maps plus a shim for what Swift cannot call.
        .systemLibrary(
            name: "CMnl",
            pkgConfig: "libmnl",
            providers: [.apt(["libmnl-dev"])]
        ),
        // eventfd(2) for `WakeUpEvent`: a header Glibc's module map leaves out (nothing to link).
        .systemLibrary(name: "CEventFD"),
        .systemLibrary(name: "CEpoll"),
        // signalfd(2) for `SignalReader`: a header Glibc's module map leaves out (nothing to link).
        .systemLibrary(name: "CSignalFD"),
        // ICMP headers and the socket error queue for `icmp://` probes (nothing to link).
        .systemLibrary(name: "CICMP"),
        // mallopt(3) and malloc_trim(3) for `LargeDocuments`: a header Glibc's
        // module map leaves out (nothing to link).
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // TLS (what libmicrohttpd's HTTPS runs on) and bcrypt (libxcrypt's crypt_r) for the web config.
        .systemLibrary(
            name: "CGnuTLS",
            pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"])]
        ),
        .systemLibrary(
            name: "CCrypt",
            pkgConfig: "libcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        // zlib for the large changes `/changes` keeps (`KeptChange`).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // libyaml's parser for the web config's YAML (see its shim for why not Yams).
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // Outbound probes: libcurl's multi interface for TCP/HTTP/HTTPS, c-ares for DNS with real
        // error codes and per-query timeouts. Both are driven from one thread (see `Probes`).
        // libcurl and c-ares, loaded with dlopen on first use (a reachd without probes pays
        // nothing for them); only the loader is C. See its header for why.
        .target(name: "CProbeLibraries"),
        // Where `TwoHalves`' second thread starts: the cpu_set_t macros are C only.
        .target(name: "CThreads"),
        .target(
            name: "Reachable",
            dependencies: ["CMnl", "CEventFD", "CThreads", "CMalloc"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ReachableServer",
            dependencies: [
                "CMicroHTTPD",
                "CGnuTLS",
                "CCrypt",
                "CYAML",
                "CZlib",
                "Reachable",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The page at `/` as ordinary files, compiled in as bytes (no bundle to find at run time).
            resources: [
                .embedInCode("Page/page.html"), .embedInCode("Page/page.css"), .embedInCode("Page/page.js"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Probes",
            dependencies: [
                "CProbeLibraries", "CICMP", "CEpoll", "CEventFD", "Reachable",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // The app's assembly (`buildApplication`): monitor, probes and server as services, used by
        // `reachd serve`, `reachd wait` and the tests.
        .target(
            name: "ReachdApp",
            dependencies: [
                "CSignalFD",
                "Reachable",
                "Probes",
                "ReachableServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the client commands read: the HTTP answer, the SSE stream, the status lines.
        .target(
            name: "ReachdClient",
            dependencies: ["Reachable", "CGnuTLS"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "reachd",
            dependencies: [
                "Reachable",
                "ReachdClient",
                "ReachableServer",
                "Probes",
                "ReachdApp",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // What several test targets share: a child process that is always ended and reaped.
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReachableTests",
            dependencies: ["Reachable", "CMnl", "CThreads", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReachableServerTests",
            dependencies: [
                "ReachableServer",
                "Reachable",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReachdClientTests",
            dependencies: ["ReachdClient", "Reachable"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReachdAppTests",
            dependencies: [
                "ReachdApp",
                "Reachable",
                "ReachableServer",
                "Probes",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ProbesTests",
            dependencies: ["Probes", "Reachable", "TestSupport"],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Fuzz targets (`make fuzz`, `Fuzz/`): libFuzzer executables, declared only when REACHD_FUZZ is
// set. They link only with `-sanitize=fuzzer` (libFuzzer brings the driver they call), so the
// ordinary build and `swift test` never see them. `scripts/fuzz.sh` builds and runs them.
if Context.environment["REACHD_FUZZ"] != nil {
    func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
        .executableTarget(
            name: name, dependencies: ["FuzzSupport"] + dependencies, path: "Fuzz/Sources/\(name)",
            swiftSettings: swiftSettings
        )
    }
    package.targets += [
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/Sources/CLibFuzzer"),
        .target(
            name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/Sources/FuzzSupport",
            swiftSettings: swiftSettings),
        fuzzTarget("FuzzNetlink", ["Reachable", "CMnl"]),
        fuzzTarget("FuzzClient", ["ReachdClient", "Reachable"]),
        fuzzTarget("FuzzTargetSpec", ["Probes", "Reachable"]),
        fuzzTarget("FuzzWebConfig", ["ReachableServer"]),
        fuzzTarget(
            "FuzzRequestRouter",
            ["ReachableServer", "Reachable", .product(name: "Logging", package: "swift-log")]
        ),
    ]
}
