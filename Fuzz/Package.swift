// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for the cachesh language (ScriptFuzzer) and for transcripts and snapshots
// (TranscriptFuzzer), separate from the root package so that
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
        .executableTarget(
            name: "TranscriptFuzzer",
            dependencies: [.product(name: "CacheShell", package: "cachesh")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
