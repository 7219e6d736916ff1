// swift-tools-version:6.1
import PackageDescription

/// Benchmarks of the cache core, a separate package so the root package never builds them.
/// Run in release: `swift run -c release CoreBenchmarks` (see README.md).
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "cachesh", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "CoreBenchmarks",
            dependencies: [.product(name: "CacheCore", package: "cachesh"), .product(name: "CacheServer", package: "cachesh")]
        ),
        // Reads a HAR log with the streaming reader (har-bench.py).
        .executableTarget(
            name: "HARBenchmark",
            dependencies: [.product(name: "CacheCore", package: "cachesh"), .product(name: "CacheReplay", package: "cachesh")]
        ),
        .executableTarget(
            name: "SnapshotBenchmarks",
            dependencies: [.product(name: "CacheCore", package: "cachesh"), .product(name: "CacheServer", package: "cachesh")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
