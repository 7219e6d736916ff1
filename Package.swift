// swift-tools-version:6.1
import PackageDescription

// The shipped build (`make release`) sets CACHESH_STATIC_LIBS to a folder of static archives
// (scripts/static-libs.sh): the executable then links SQLite, libedit (with tinfo, libbsd, libmd)
// and libstdc++ from them and exports no symbols. Start-up is then mostly cachesh's own work: no
// shared library to find, map and bind. It stays position-independent, so the executable is
// placed at a random address like every other program on the system (cachesh opens stores and
// runs transcripts from strangers); its relative relocations are packed (DT_RELR), which halves
// the cost of applying them (lld, which the Swift toolchain ships). Benchmarks/README.md has the figures; the SQLite code is the same release, linked in.
let staticLibraries = Context.environment["CACHESH_STATIC_LIBS"].flatMap { $0.isEmpty ? nil : $0 }
let shippedLinkerSettings: [LinkerSetting] = staticLibraries.map { folder in
    [.unsafeFlags([
        "-L", folder,
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        "-Xlinker", "--no-export-dynamic",
        "-Xlinker", "-ltinfo", "-Xlinker", "-lbsd", "-Xlinker", "-lmd",
        // GCC's unwinder linked in too: one shared library less to load at every start.
        "-Xclang-linker", "-static-libgcc",
        // The functions a start runs, next to each other (scripts/startup-order.sh writes the
        // list): fewer pages of code to fault in.
        "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/startup-order.txt",
        "-Xlinker", "--no-warn-symbol-ordering",
    ])]
} ?? []
// The shipped build reaches the metadata of a generic type with concrete arguments
// (`[String: Int32]`'s storage) through a function that passes its conformances along, not
// through its mangled name: the runtime then has no name to demangle and no conformance to look
// up by scanning every conformance record of the binary (about 0.36 M instructions for the first
// lookup, paid at every start).
let shippedSwiftSettings: [SwiftSetting] = staticLibraries == nil ? [] : [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]),
]

let package = Package(
    name: "cachesh",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CacheCore", targets: ["CacheCore"]),
        .library(name: "CacheReplay", targets: ["CacheReplay"]),
        .library(name: "CacheServer", targets: ["CacheServer"]),
        .library(name: "CacheShell", targets: ["CacheShell"]),
        .library(name: "CacheStore", targets: ["CacheStore"]),
        .library(name: "CacheInspector", targets: ["CacheInspector"]),
        .executable(name: "cachesh", targets: ["cachesh"]),
        // `cachesh proxy`, which `cachesh` execs: installed beside it (Sources/cachesh-proxy).
        .executable(name: "cachesh-proxy", targets: ["cachesh-proxy"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // FileDescriptor: reads and writes that retry an interrupted call themselves.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // `cachesh proxy` only (CacheProxy): HTTP/1.1 codecs for its server and its upstream client.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // `cachesh proxy` only (CacheProxy): TLS to an https:// upstream (BoringSSL, built from source).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .target(
            name: "CacheCore",
            dependencies: [
                "CPrefetch",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: shippedSwiftSettings
        ),
        // A processor's prefetch hint, for the engine's evictions (Sources/CPrefetch/shim.h): a
        // header only, nothing to link.
        .systemLibrary(name: "CPrefetch"),
        // Trace replay (`replay`): scratch simulations of eviction policies, apart from the engine;
        // of the core it uses only its eviction names, time texts and file checks. HAR logs (Sources/CacheReplay/HAR)
        // are read here too, as a stream, for the HTTP replay.
        .target(
            name: "CacheReplay",
            dependencies: [
                "CacheCore",
                "CZlib",
                "CZstd",
                .product(name: "SystemPackage", package: "swift-system"),
                // HAR logs: entries out of time order wait in a heap (HAROrdering).
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: shippedSwiftSettings
        ),
        // zlib, through which replay reads a gzip-compressed trace as a stream (linked from its
        // static archive in the shipped build, as CLibedit is).
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // libzstd, through which replay reads a zstd-compressed trace (libCacheSim's corpora come
        // as .zst) as a stream; linked from its static archive in the shipped build too.
        .systemLibrary(
            name: "CZstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .target(name: "CacheServer", dependencies: ["CacheCore"], swiftSettings: shippedSwiftSettings),
        // `cachesh proxy` (docs/SPEC.md §8, Proxy): a caching reverse proxy over a live `Cache` on
        // SwiftNIO's HTTP/1.1 codecs, TLS to its upstream through swift-nio-ssl. Its own module, so
        // that CacheCore (and an app embedding `Cache`) never links SwiftNIO or BoringSSL.
        .target(
            name: "CacheProxy",
            dependencies: [
                "CacheCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: shippedSwiftSettings
        ),
        .target(
            name: "CacheShell",
            dependencies: ["CacheCore", "CacheServer", "CacheReplay", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: shippedSwiftSettings
        ),
        // The server of `cachesh attach` (SPEC §9), which an app links in debug builds: plain
        // POSIX sockets; the attached shell's commands run through CacheShell, in the app.
        .target(name: "CacheInspector", dependencies: ["CacheCore", "CacheShell"], swiftSettings: shippedSwiftSettings),
        // An app that embeds a live Cache with CacheInspector started, for the attach tests.
        .executableTarget(name: "inspected-app", dependencies: ["CacheCore", "CacheInspector"], path: "Tests/InspectedApp"),
        // The app of Benchmarks/attach-bench.py (`make bench-attach`): a live Cache with or without
        // CacheInspector, on a synchronous main (callgrind counts its instructions).
        .executableTarget(name: "attach-bench-app", dependencies: ["CacheCore", "CacheInspector"], path: "Benchmarks/AttachApp"),
        .target(
            name: "CacheStore",
            dependencies: [
                "CacheCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C interface, which the store binds its rows through.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: shippedSwiftSettings
        ),
        // Found in the compiler's own search paths (no pkg-config: its -L of the system's library
        // folder would come before CACHESH_STATIC_LIBS and make the shipped build load libedit.so).
        .systemLibrary(
            name: "CLibedit",
            providers: [.apt(["libedit-dev"])]
        ),
        // glibc's malloc.h (mallopt), which the Glibc module does not export: the cachesh process
        // gives freed large blocks back to the system (Sources/CMalloc/shim.h).
        .systemLibrary(name: "CMalloc"),
        .executableTarget(
            name: "cachesh",
            dependencies: [
                "CacheShell",
                "CMalloc",
                "CacheStore",
                "CLibedit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: shippedSwiftSettings,
            linkerSettings: shippedLinkerSettings
        ),
        // `cachesh proxy ...` runs this executable in its place (exec), found beside `cachesh`:
        // SwiftNIO, swift-nio-ssl (BoringSSL) and the inspector the proxy starts live here, so a
        // start of `cachesh` maps and relocates none of them (Benchmarks/README.md, "Start-up of
        // the shipped build").
        .executableTarget(
            name: "cachesh-proxy",
            dependencies: [
                "CacheCore",
                "CacheShell",
                "CacheProxy",
                "CacheInspector",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: shippedSwiftSettings,
            linkerSettings: shippedLinkerSettings
        ),
        .target(name: "TestSupport", dependencies: ["CacheCore", "CacheShell"], path: "Tests/TestSupport"),
        .testTarget(name: "CacheCoreTests", dependencies: ["CacheCore", "CacheReplay", "CacheServer", "TestSupport"]),
        .testTarget(name: "CacheShellTests", dependencies: ["CacheShell", "CacheServer", "CacheReplay", "TestSupport"]),
        .testTarget(
            name: "CacheStoreTests",
            dependencies: ["CacheStore", "CacheShell", "CacheServer", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "cacheshTests",
            // The executable's module too: CommandLineReadingTests reads command lines as it does.
            dependencies: ["cachesh", "CacheShell", "TestSupport", .product(name: "SystemPackage", package: "swift-system")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
