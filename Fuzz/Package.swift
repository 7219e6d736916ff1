// swift-tools-version:6.1
import PackageDescription

// A libFuzzer target for the cachesh language, separate from the root package so that
// `swift build` and `swift test` there never see it. See README.md for how to run it.
let package = Package(
    name: "CacheshFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "cachesh", path: "..")],
    targets: [
        .executableTarget(
            name: "ScriptFuzzer",
            dependencies: [.product(name: "CacheShell", package: "cachesh")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
