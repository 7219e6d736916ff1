// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "cachesh",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CacheCore", targets: ["CacheCore"]),
        .library(name: "CacheShell", targets: ["CacheShell"]),
        .executable(name: "cachesh", targets: ["cachesh"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .target(
            name: "CacheCore",
            dependencies: [
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(name: "CacheShell", dependencies: ["CacheCore"]),
        .systemLibrary(
            name: "CLibedit",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),
        .executableTarget(
            name: "cachesh",
            dependencies: [
                "CacheShell",
                "CLibedit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "CacheCoreTests", dependencies: ["CacheCore"]),
        .testTarget(name: "CacheShellTests", dependencies: ["CacheShell"]),
        .testTarget(name: "cacheshTests", dependencies: ["CacheShell"]),
    ],
    swiftLanguageModes: [.v6]
)
