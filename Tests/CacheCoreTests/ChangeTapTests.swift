import CacheCore
import Synchronization
import Testing

/// The inspector's hook (SPEC §9): `setChangeTap` hands every change with its cause to the tap,
/// watched or not, leaves what the delegate hears alone, and is gone when removed.
@Suite struct ChangeTapTests {
    /// Notes what the delegate hears of every change (`noted`).
    final class Delegate: CacheDelegate, Sendable {
        let noted = Mutex<[String]>([])
        func cache(_ cache: isolated Cache, observed event: CacheEvent) {}
        func cache(_ cache: isolated Cache, validated result: ValidationResult) {}
        func cache(_ cache: isolated Cache, runScheduled token: Int) {}
        func cache(_ cache: isolated Cache, noted event: CacheEvent) {
            noted.withLock { $0.append("\(event.cause.rawValue) \(event.key)") }
        }
    }

    @Test func theTapHearsEveryChangeWithItsCauseAndTheDelegateOnlyWhatItAskedFor() {
        let cache = Cache()
        let delegate = Delegate()
        let tapped = Mutex<[String]>([])
        let (before, during, after) = cache.withIsolation { cache -> (Bool, Bool, Bool) in
            cache.setDelegate(delegate)
            cache.put("feed:home", .int(1))
            cache.setChangeTap { event in tapped.withLock { $0.append("\(event.cause.rawValue) \(event.key) \(event.state.rawValue)") } }
            let during = cache.reportsAllChanges
            cache.invalidate(.key("feed:home"))
            cache.evict("feed:home")
            cache.setChangeTap(nil)
            cache.put("feed:other", .int(2))
            return (cache.hasChangeTap, during, cache.reportsAllChanges)
        }
        #expect(tapped.withLock { $0 } == ["invalidated feed:home stale", "evicted feed:home absent"])
        #expect(!before && !during && !after)
        // The app never asked for every change: its delegate heard none, tap or not.
        #expect(delegate.noted.withLock { $0 }.isEmpty)
    }

    @Test func aDelegateThatAskedForEveryChangeKeepsHearingThemWhenTheTapGoes() {
        let cache = Cache()
        let delegate = Delegate()
        cache.withIsolation { cache in
            cache.setDelegate(delegate)
            cache.reportsAllChanges = true
            cache.setChangeTap { _ in }
            cache.put("a:1", .int(1))
            cache.setChangeTap(nil)
            cache.put("a:2", .int(2))
        }
        #expect(delegate.noted.withLock { $0 } == ["stored a:1", "stored a:2"])
    }
}
