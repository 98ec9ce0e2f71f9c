// swift-tools-version:6.0
import PackageDescription

// `make package` stamps the release's version and commit into both executables (scripts/package.sh, CBuildStamp);
// a build without them in the environment prints TableSyncVersion.current alone.
let buildStamp: [CSetting] = ["TABLESYNC_BUILD_VERSION", "TABLESYNC_BUILD_COMMIT"].compactMap { name in
    Context.environment[name].map { .define(name, to: "\"\($0)\"") }
}

// Layering (DESIGN §1) is one way: executables → libraries → TableSyncStorage → SyncProtocol.
// The client library `TableSync` never imports the server.
let package = Package(
    name: "TableSync",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "SyncProtocol", targets: ["SyncProtocol"]),
        .library(name: "TableSync", targets: ["TableSync"]),
        .executable(name: "tablesync", targets: ["tablesync"]),
        .library(name: "TableSyncServer", targets: ["TableSyncServer"]),
        .library(name: "GzipCompression", targets: ["GzipCompression"]),
        .executable(name: "tablesync-server", targets: ["tablesync-server"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Hummingbird's own dependency, named here for the server's HTTP/1.1 connection (HTTP1ToHTTPServerCodec).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // Hummingbird's own dependency, named here for the tests' in-process servers (graceful shutdown).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // The server's JSON Web Tokens: HS256, RS256 and ES256 signatures and the registered claims. hummingbird-auth
        // is not used: its middleware wants one authenticator per scheme and an identity type per context, where the
        // server has one credential header for static tokens and JWTs and a 401 that must not say which failed.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        // The server's measurements, each family with its help text, served in Prometheus's text format at /metrics.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation --target TableSync` (the DocC catalogue in Sources/TableSync).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")
    ],
    targets: [
        .target(name: "SyncProtocol"),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // libcurl, the client's HTTP transport on Linux (Sources/CCurl/shim.h wraps its variadic calls for Swift).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "CBuildStamp", cSettings: buildStamp),
        // Linux file-system calls Swift's Glibc module does not import (syncfs, renameat2), declared once.
        .target(name: "CFileSystem"),
        // The client's storage core: record files, the stat index, spare files and durable batches. The sync
        // engine (TableSync) uses its `package` face; its public errors are TableSync's (re-exported).
        .target(
            name: "TableSyncStorage",
            dependencies: [
                "SyncProtocol",
                "CFileSystem",
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        .target(
            name: "TableSync",
            dependencies: [
                "SyncProtocol",
                "TableSyncStorage",
                "CFileSystem",
                "GzipCompression",
                .target(name: "CCurl", condition: .when(platforms: [.linux])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        .executableTarget(
            name: "tablesync",
            dependencies: [
                "TableSync",
                "CBuildStamp",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // gzip over zlib, shared by the server and the client; no Foundation.
        .target(name: "GzipCompression", dependencies: ["CZlib"]),
        .target(
            name: "TableSyncServer",
            dependencies: [
                "SyncProtocol",
                "CFileSystem",
                // tablesync_build_info's version and commit.
                "CBuildStamp",
                "GzipCompression",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's progress handler, where a read's time limit is kept (SQLiteDeadline).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // NIOConnectionError: a refused connection to PostgreSQL, told apart from other failures at the start.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit")
            ]
        ),
        .executableTarget(
            name: "tablesync-server",
            dependencies: [
                "TableSyncServer",
                "CBuildStamp",
                // The process's heap policy (ServerHeapPolicy).
                "CFileSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The seed tutorial's TodoItem app on the public library API alone (examples/TodoApp).
        .executableTarget(name: "todo-example", dependencies: ["TableSync"], path: "examples/TodoApp"),
        // `make bench`: the benchmarks and their same-run baselines, driving the release binaries (scripts/bench.sh).
        .executableTarget(
            name: "tablesync-bench",
            dependencies: [
                "TableSync",
                "CFileSystem",
                "TableSyncServer",
                "SyncProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // Signs the JWTs whose checking A1 measures.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // The server as the tests start it (ServerProcess).
                "TestSupport"
            ]
        ),
        // Helpers every test target shares, and the benchmarks' server process: temporary directories, seeded
        // randomness, processes, a live server.
        .target(
            name: "TestSupport",
            dependencies: [
                "TableSync",
                "GzipCompression",
                "TableSyncServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Tokens signed as an identity provider signs them (TestTokenIssuer).
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto")
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "SyncProtocolTests", dependencies: ["SyncProtocol", "TestSupport"]),
        // One test target for every server test: CI builds from scratch on 2 cores.
        .testTarget(
            name: "TableSyncServerTests",
            dependencies: [
                "TableSyncServer",
                "GzipCompression",
                "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit")
            ]
        ),
        // `tablesync` too: the CLI's pure rules (progress figures) are tested in process.
        .testTarget(
            name: "TableSyncTests",
            dependencies: ["TableSync", "TableSyncStorage", "tablesync", "GzipCompression", "TestSupport"]
        )
    ],
    swiftLanguageModes: [.v6]
)
