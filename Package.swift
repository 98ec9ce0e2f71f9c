// swift-tools-version:6.0
import PackageDescription

// Layering (DESIGN §1) is one way: executables → libraries → SyncProtocol.
// The client library `TableSync` never imports the server.
let package = Package(
    name: "TableSync",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "SyncProtocol", targets: ["SyncProtocol"]),
        .library(name: "TableSync", targets: ["TableSync"]),
        .executable(name: "tablesync", targets: ["tablesync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "SyncProtocol"),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .target(name: "TableSync", dependencies: ["SyncProtocol", "CZlib"]),
        .executableTarget(
            name: "tablesync",
            dependencies: [
                "TableSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "SyncProtocolTests", dependencies: ["SyncProtocol"]),
        .testTarget(name: "TableSyncTests", dependencies: ["TableSync"]),
    ],
    swiftLanguageModes: [.v6]
)
