/// Hears what happens inside a `Cache` call, synchronously, in order, with the cache isolated:
/// the shell prints events as they happen and runs its `at` commands from here.
public protocol CacheDelegate: AnyObject {
    /// A change in a watched scope (B15).
    func cache(_ cache: isolated Cache, observed event: CacheEvent)
    /// External work scheduled with `schedule(after:token:)` is due.
    func cache(_ cache: isolated Cache, runScheduled token: Int)
    /// A validation answer nobody waited for arrived.
    func cache(_ cache: isolated Cache, validated result: ValidationResult)
    /// A read started with `startRead` that waited for its request finished (default: nothing).
    func cache(_ cache: isolated Cache, finishedRead result: ReadResult)
    /// With `reportsAllChanges`, every change to an entry, watched or not (default: nothing).
    /// The event is the caller's to give away (`consuming`): a delegate that keeps it (the shell's
    /// timeline) stores it with no copy.
    func cache(_ cache: isolated Cache, noted event: consuming CacheEvent)
}

extension CacheDelegate {
    public func cache(_ cache: isolated Cache, finishedRead result: ReadResult) {}
    public func cache(_ cache: isolated Cache, noted event: consuming CacheEvent) {}
}
