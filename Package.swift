// swift-tools-version:6.1
import PackageDescription

/// One settings list for every target: Swift 6 language mode (strict concurrency is implied).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// Linux has no SwiftUI: the views of docs/client.md compile against a stand-in of the few
/// declarations they use (module SwiftUI, Tests/SwiftUIStandIn); elsewhere against SwiftUI itself.
#if os(Linux)
let swiftUIStandIn: [Target] = [.target(name: "SwiftUI", path: "Tests/SwiftUIStandIn", swiftSettings: swiftSettings)]
#else
let swiftUIStandIn: [Target] = []
#endif

let package = Package(
    name: "taksi-server",
    // iOS for the TaksiSchema product (Foundation only), which an app can use; see docs/client.md.
    platforms: [.macOS(.v14), .iOS(.v14)],
    products: [
        .library(name: "TaksiSchema", targets: ["TaksiSchema"]),
        // For apps: loads, submits and deep links against taksi-server. Foundation only; see docs/client.md.
        .library(name: "TaksiServerClient", targets: ["TaksiServerClient"]),
        .library(name: "TaksiScreens", targets: ["TaksiScreens"]),
        .library(name: "TaksiServer", targets: ["TaksiServer"]),
        .executable(name: "taksi-server", targets: ["taksi-server"]),
        // For a team's own package: validates its Screens/ (and config.json) during swift build.
        .plugin(name: "ValidateScreens", targets: ["ValidateScreens"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // SHA-256, which names a published bundle by its content (MemoryFleetStore).
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // OTLP over HTTP only: the gRPC exporter would add gRPC and HTTP/2 to every build.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        // The fleet's shared store (optional): PostgreSQL, and TLS to it.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // The documentation of the app side's library (TaksiServerClient): `swift package generate-documentation`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
    ],
    targets: [
        // The wire contract. Foundation only, so an iOS app can depend on it too.
        .target(name: "TaksiSchema", swiftSettings: swiftSettings),
        // The app side's library: requests, revisions and their 412, submits, deep links. Foundation
        // only and no dependency, so an app builds this target alone (docs/client.md says what it resolves).
        .target(name: "TaksiServerClient", swiftSettings: swiftSettings),
        // The screen-definition format: load, validate and compile a screen set. No networking.
        .target(
            name: "TaksiScreens", dependencies: ["TaksiSchema", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        // What the C heap holds, to count what a kept screen set really costs (glibc's mallinfo2).
        .target(name: "CTaksiHeap"),
        // The commit a release build was made from (scripts/install.sh and release.sh pass it).
        .target(name: "CTaksiBuild"),
        // The running service: HTTP server, router, screen store, data resolution, configuration.
        .target(
            name: "TaksiServer",
            dependencies: [
                "TaksiSchema",
                "TaksiScreens",
                "CTaksiHeap",
                "CTaksiBuild",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            // The live preview's page, compiled into the binary: nothing to install or fetch.
            resources: [
                .embedInCode("Preview/Assets/preview.html"), .embedInCode("Preview/Assets/preview.js"),
                .embedInCode("Preview/Assets/preview.css"),
                // docs/openapi.yaml, through a link: the document readers and tools find in docs/ is the one served.
                .embedInCode("OpenAPI/openapi.yaml"),
            ],
            swiftSettings: swiftSettings
        ),
        // The fleet's shared store on PostgreSQL (``FleetStore`` in TaksiServer is the seam): what
        // replicas share when `store` is set. A target of its own, so the server's library does
        // not build a database driver for a team that embeds it without one.
        .target(
            name: "TaksiPostgres",
            dependencies: [
                "TaksiServer",
                "TaksiScreens",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "taksi-server",
            dependencies: [
                "TaksiServer",
                "TaksiPostgres",
                "TaksiScreens",
                "TaksiSchema",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // The git calls of `compat` (a base at a revision).
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["ValidateScreens"]
        ),
        // The validator the plugin runs: checks Screens/ and fails the build on any error.
        .executableTarget(name: "taksi-validate", dependencies: ["TaksiScreens"], swiftSettings: swiftSettings),
        // Runs taksi-validate over Screens/ during `swift build`, so an invalid screen fails the build.
        .plugin(name: "ValidateScreens", capability: .buildTool(), dependencies: ["taksi-validate"]),
        // What the test targets share: the repository's root, tools, raw connections, the test
        // upstream and clock, and the test client.
        .target(
            name: "TaksiTestSupport",
            dependencies: [
                "TaksiServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/TaksiTestSupport",
            swiftSettings: swiftSettings
        ),
        // The app code docs/client.md gives app teams (docs/client-snippets), compiled against a
        // stand-in for the Taksi client's public API written from its published sources (module
        // Taksi, Tests/ClientStandIn); ClientDocTests checks the document shows exactly these files.
        // Swift 5 language mode, as the client (Swift 5.8 tools) builds.
        .target(
            name: "Taksi", dependencies: swiftUIStandIn.map { .target(name: $0.name) }, path: "Tests/ClientStandIn",
            swiftSettings: swiftSettings + [.swiftLanguageMode(.v5)]),
        // Swift 6 language mode, with the client imported `@preconcurrency` (it predates strict
        // concurrency), as an app built with Xcode 16 or later compiles it.
        .target(
            name: "ClientSnippets", dependencies: ["Taksi", "TaksiServerClient"], path: "docs/client-snippets",
            swiftSettings: swiftSettings
        ),
        // The sample app (Examples/ShopApp.swiftpm, which Xcode opens with the real client), its
        // sources compiled here against the same stand-ins.
        .target(
            name: "ShopApp", dependencies: ["Taksi", "TaksiServerClient"], path: "Examples/ShopApp.swiftpm/Sources/ShopApp",
            swiftSettings: swiftSettings
        ),
    ] + swiftUIStandIn + [
        .testTarget(name: "TaksiSchemaTests", dependencies: ["TaksiSchema"], swiftSettings: swiftSettings),
        // The app side's library against the real server: `taksi-server` processes over sockets.
        .testTarget(
            name: "TaksiServerClientTests", dependencies: ["TaksiServerClient", "TaksiTestSupport", "taksi-server"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TaksiScreensTests", dependencies: ["TaksiScreens", "TaksiTestSupport"], exclude: ["Golden"], swiftSettings: swiftSettings
        ),
        // In process: the responder and endpoints (through TestClient's `.router`), the connection's
        // state machine and handler over embedded channels, configuration. Its server is never
        // bound and it starts no process; the upstreams its endpoints call are real ones on
        // loopback (TestUpstream).
        .testTarget(
            name: "TaksiServerTests",
            dependencies: [
                "TaksiServer",
                "TaksiTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The real server over sockets, the built binaries as processes (serve, validate, init,
        // the build plugin), and Python's independent validators.
        // Test-only: a `pthread_mutex_lock` over the C library's that records which mutexes a
        // thread takes, for the test that no lock is shared between event loops on a request's way.
        .target(name: "LockCensus", path: "Tests/LockCensus"),
        .testTarget(
            name: "TaksiServerEndToEndTests",
            dependencies: [
                "LockCensus",
                "TaksiServer",
                "TaksiPostgres",
                "TaksiTestSupport",
                "taksi-server",
                "taksi-validate",
                // Built with the tests, so that CI compiles them: docs/client.md's code and the sample app.
                "ClientSnippets",
                "ShopApp",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
