import CacheCore
import CacheShell
import Testing
import TestSupport

/// `activate` and `deactivate`: active keys apart from watches (`Cache.setActive`,
/// `clearActive`), as a user reads them in both output modes; bad input changes nothing.
@Suite struct ActiveCommandTests {
    /// The commands a user types, watching a namespace, and what is active after each.
    static let session = """
        watch feed:*
        activate
        activate feed:home
        activate default:b
        activate feed:home
        activate
        watch
        deactivate feed:home
        deactivate feed:home
        activate
        activate c
        deactivate
        deactivate
        activate
        watch
        """

    @Test func activeKeysChangeAndWatchesStay() async {
        let shell = await TestShell()
        #expect(await shell.typed(Self.session) == """
            watching feed:*
            active: (nothing)
            feed:home is active
            b is active
            feed:home is active
            active: b feed:home
            watching: feed:*
            active: b feed:home
            feed:home is no longer active
            feed:home was not active
            active: b
            c is active
            nothing is active
            nothing is active
            active: (nothing)
            watching: feed:*

            """)
        #expect(await shell.anyFailed == false)
    }

    @Test func jsonRepliesNameTheKeyAndWhatWasActive() async {
        let shell = await TestShell()
        #expect(await shell.typed("output json\n" + Self.session) == """
            {"command":"output","mode":"json","ok":true}
            {"command":"watch","ok":true,"watching":"feed:*"}
            {"active":[],"command":"activate","ok":true}
            {"active":true,"command":"activate","key":"feed:home","ok":true}
            {"active":true,"command":"activate","key":"b","ok":true}
            {"active":true,"command":"activate","key":"feed:home","ok":true}
            {"active":["b","feed:home"],"command":"activate","ok":true}
            {"active":["b","feed:home"],"command":"watch","ok":true,"watching":["feed:*"]}
            {"command":"deactivate","key":"feed:home","ok":true,"was_active":true}
            {"command":"deactivate","key":"feed:home","ok":true,"was_active":false}
            {"active":["b"],"command":"activate","ok":true}
            {"active":true,"command":"activate","key":"c","ok":true}
            {"command":"deactivate","keys":["b","c"],"ok":true}
            {"command":"deactivate","keys":[],"ok":true}
            {"active":[],"command":"activate","ok":true}
            {"command":"watch","ok":true,"watching":["feed:*"]}

            """)
    }

    /// An active key that is not watched is refetched when invalidated and on focus, and prints
    /// no observer line; `deactivate` stops that.
    @Test func anActiveKeyNotWatchedIsRefetchedSilently() async {
        let shell = await TestShell()
        let printed = await shell.typed("""
            server set feed:home 1
            get feed:home
            activate feed:home
            server set feed:home 2
            invalidate feed:home
            advance 100ms
            peek feed:home
            deactivate feed:home
            invalidate feed:home
            focus
            """)
        #expect(printed.contains("keys: feed:home\nnow:") && printed.contains("value:         2\n"), "\(printed)")
        #expect(!printed.contains("* 2026"), "\(printed)")
        #expect(printed.hasSuffix("feed:home is no longer active\nkeys: feed:home\nkeys: (none)\n"), "\(printed)")
    }

    /// Each bad line: one error naming the script's line, and the session exactly as before.
    @Test(arguments: [
        ("activate a b", #"script.cachesh:1: error: activate takes [KEY]; unexpected "b""#),
        ("deactivate a b", #"script.cachesh:1: error: deactivate takes [KEY]; unexpected "b""#),
        ("activate feed:*", #"script.cachesh:1: error: bad key "feed:*": * is for patterns (keys, NS:*)"#),
        ("deactivate feed:*", #"script.cachesh:1: error: bad key "feed:*": * is for patterns (keys, NS:*)"#),
        (#"activate "feed:two words""#, "script.cachesh:1: error: bad key (a JSON value): keys are NAMESPACE:ID or ID"),
        (#"deactivate "a b""#, "script.cachesh:1: error: bad key (a JSON value): keys are NAMESPACE:ID or ID"),
        ("activate --force", "script.cachesh:1: error: activate has no flag --force"),
        ("deactivate --all", "script.cachesh:1: error: deactivate has no flag --all"),
        ("activate a every=1s", #"script.cachesh:1: error: activate takes [KEY]; unexpected "every=1s""#),
        ("activate :x", #"script.cachesh:1: error: bad key ":x": keys are NAMESPACE:ID or ID"#),
    ])
    func badInputIsOneErrorAndChangesNothing(line: String, error: String) async {
        let shell = await TestShell()
        _ = await shell.typed("watch feed:home\nactivate feed:home\nactivate b")
        let before = await shell.snapshotText()
        let printed = await shell.script(SourceFile(name: "script.cachesh", text: line + "\n"))
        #expect(printed.map(\.text) == [error + "\n"] && printed.allSatisfy(\.isError), "\(printed)")
        #expect(await shell.snapshotText() == before)
        #expect(await shell.typed("activate") == "active: b feed:home\n")
    }

    /// A key made active with `activate` alone is kept by a snapshot: `restore` gives it back
    /// after `deactivate` dropped it.
    @Test func aSnapshotKeepsKeysMadeActiveWithoutAWatch() async {
        let shell = await TestShell()
        _ = await shell.typed("activate feed:home")
        let document = await shell.run { session, cache in session.makeSnapshot(on: cache).compactText }
        #expect(document.contains(#""active":["feed:home"]"#))
        #expect(await shell.typed("deactivate\nactivate\nrestore " + document + "\nactivate\nwatch")
                    .hasSuffix("active: feed:home\nwatching: (nothing)\nactive: feed:home\n"))
    }
}
