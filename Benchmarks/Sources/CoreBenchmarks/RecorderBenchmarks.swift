import CacheCore
import Foundation

/// What recording costs per call on the `Cache` actor: the same calls with the recorder off (the
/// baseline), recording in memory, and recording to a file, whose records are encoded as JSON
/// lines on the file's own queue (that work is timed apart, up to `stopRecording()`).
enum RecorderBenchmarks {
    enum Mode { case off, memory, file(String) }

    static func run(calls: Int = 200_000, rounds: Int = 7) {
        Report.section("recorder: a put of a new key then a get hit, \(calls) calls inside the Cache actor")
        let keys = (0..<calls / 2).map { "feed:\($0)" }
        let value: JSONValue = ["id": 1, "likes": 3, "title": "First light"]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cachesh-bench-\(getpid()).recording").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        /// The best ns per call of the calls themselves, and of stopping (the file's encoding left).
        func measure(_ mode: Mode) -> (calls: Double, stop: Double) {
            var best = (calls: Double.infinity, stop: Double.infinity)
            for _ in 0..<rounds {
                let cache = Cache()
                let (loop, stop, checksum) = cache.withIsolation { cache in
                    switch mode {
                    case .off: break
                    case .memory: cache.startRecording()
                    case .file(let path): try! cache.startRecording(to: path)
                    }
                    var checksum = 0
                    let loop = Timing.clock.measure {
                        for key in keys {
                            checksum &+= cache.put(key, value).count
                            checksum &+= (try! cache.read(key)).tags.count + 1
                        }
                    }
                    let stop = Timing.clock.measure {
                        if case .off = mode {} else { checksum &+= (try! cache.stopRecording()).records.count }
                    }
                    return (loop, stop, checksum)
                }
                Timing.consume(checksum)
                best.calls = min(best.calls, Timing.nanoseconds(loop) / Double(calls))
                best.stop = min(best.stop, Timing.nanoseconds(stop) / Double(calls))
            }
            return best
        }
        let off = measure(.off)
        let memory = measure(.memory)
        let file = measure(.file(path))
        Report.line("recording off (baseline)", Report.ns(off.calls))
        Report.line("recording in memory", Report.ns(memory.calls), "+\(Report.ns(memory.calls - off.calls)) per call, "
                    + Report.ratio(memory.calls / off.calls))
        Report.line("recording to a file: on the actor", Report.ns(file.calls), "+\(Report.ns(file.calls - off.calls)) per call, "
                    + Report.ratio(file.calls / off.calls))
        Report.line("recording to a file: encoding left at stop", Report.ns(file.stop), "per call, on the file's queue")
    }
}
