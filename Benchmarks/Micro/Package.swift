// swift-tools-version:6.1
import PackageDescription

/// Micro-benchmarks of the cache core on ordo-one/benchmark, with thresholds on allocation and
/// instruction counts (valgrind's) checked in (`Thresholds/`), so a regression fails
/// `swift package benchmark thresholds check`. A package of its own (not the root's, not
/// `Benchmarks/`'s) so neither the root's build nor the comparison scripts pull in the harness.
/// See ../README.md for how to run it.
let package = Package(
    name: "Micro",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "cachesh", path: "../.."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CoreMicro",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CacheCore", package: "cachesh"),
                .product(name: "CacheServer", package: "cachesh"),
                .product(name: "CacheShell", package: "cachesh"),
                "CoreMicroCount",
            ],
            path: "Benchmarks/CoreMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Runs a benchmark's count under valgrind before the harness's main (see its comment).
        .target(name: "CoreMicroCount", path: "Benchmarks/CoreMicroCount"),
    ],
    swiftLanguageModes: [.v6]
)
