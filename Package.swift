// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "cachesh",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CacheCore", targets: ["CacheCore"]),
        .library(name: "CacheServer", targets: ["CacheServer"]),
        .library(name: "CacheShell", targets: ["CacheShell"]),
        .library(name: "CacheStore", targets: ["CacheStore"]),
        .executable(name: "cachesh", targets: ["cachesh"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(
            name: "CacheCore",
            dependencies: [
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(name: "CacheServer", dependencies: ["CacheCore"]),
        .target(name: "CacheShell", dependencies: ["CacheCore", "CacheServer"]),
        .target(
            name: "CacheStore",
            dependencies: [
                "CacheCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C interface, which the store binds its rows through.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .systemLibrary(
            name: "CLibedit",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),
        .executableTarget(
            name: "cachesh",
            dependencies: [
                "CacheShell",
                "CacheStore",
                "CLibedit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "TestSupport", dependencies: ["CacheCore", "CacheShell"], path: "Tests/TestSupport"),
        .testTarget(name: "CacheCoreTests", dependencies: ["CacheCore", "CacheServer", "TestSupport"]),
        .testTarget(name: "CacheShellTests", dependencies: ["CacheShell", "CacheServer", "TestSupport"]),
        .testTarget(
            name: "CacheStoreTests",
            dependencies: ["CacheStore", "CacheShell", "CacheServer", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "cacheshTests", dependencies: ["CacheShell", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
