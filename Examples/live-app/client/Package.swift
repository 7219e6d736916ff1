// swift-tools-version:6.1
import PackageDescription

/// The live example's client: an app that embeds the cache in live mode over its HTTP API,
/// starts the inspector (`cachesh attach`) and records a user's session as a transcript. A separate package, so the root build stays light.
let package = Package(
    name: "LiveAppClient",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "cachesh", path: "../../.."),
    ],
    targets: [
        .executableTarget(
            name: "LiveAppClient",
            dependencies: [.product(name: "CacheCore", package: "cachesh"), .product(name: "CacheShell", package: "cachesh"),
                           .product(name: "CacheInspector", package: "cachesh")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
