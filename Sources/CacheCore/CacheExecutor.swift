import Dispatch

/// The executor of every `Cache`: jobs run one at a time on a serial Dispatch queue. Owning the
/// queue lets `Cache.withIsolation` run synchronous code on it from any thread (`queue.sync`),
/// which `checkIsolated` confirms to `assumeIsolated`.
final class CacheExecutor: SerialExecutor {
    let queue = DispatchQueue(label: "cachesh.cache")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    func checkIsolated() { dispatchPrecondition(condition: .onQueue(queue)) }
}
