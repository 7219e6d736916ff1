@_spi(Engine) import CacheCore
import CacheServer
import Foundation

/// Memory per cached entry for a small object with an id, `{"id":i,"likes":n}` (goal: at most
/// 300 bytes), against a plain `Dictionary<String, String>` of the same keys to the same values'
/// compact text, filled in the same run (about the least any map of these keys and texts holds).
enum MemoryBenchmarks {
    /// Resident bytes of the process (`/proc/self/statm`); nil where there is no such file.
    static func heapInUse() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func run(n: Int) {
        Report.section("memory per entry: \(n) entries of {\"id\":i,\"likes\":n}")
        guard heapInUse() != nil else {
            print("heap statistics not available on this platform")
            return
        }
        let keys = (0..<n).map { "feed:\($0)" }
        let afterKeys = heapInUse()!

        let before = afterKeys
        let engine = CacheEngine(origin: SimulatedServer())
        for (i, key) in keys.enumerated() {
            engine.put(key, .object(["id": .int(Int64(i)), "likes": .int(Int64(i % 97))]))
        }
        let perEntry = Double(heapInUse()! - before) / Double(n)
        // The id index is built by the first entity event or mutation, which the puts are not.
        Report.line("CacheEngine.put (id index on \"id\" not built)", "\(Int(perEntry)) bytes",
                    "goal <= 300 bytes")
        let beforeEvent = heapInUse()!
        let likes = try! Patch(.object(["likes": .int(1)]))
        precondition((try? engine.event(entity: "0", patch: likes)) == ["feed:0"])
        let index = Double(heapInUse()! - beforeEvent) / Double(n)
        Report.line("then one entity event (the id index built)", "\(Int(perEntry + index)) bytes",
                    "the index \(Int(index)) bytes an entry")
        // Measured second, while the cache stays alive, so it reuses none of the cache's pages.
        let beforeBaseline = heapInUse()!
        var texts = [String: String](minimumCapacity: 0)
        for (i, key) in keys.enumerated() { texts[key] = "{\"id\":\(i),\"likes\":\(i % 97)}" }
        let baseline = Double(heapInUse()! - beforeBaseline) / Double(n)
        Report.line("Dictionary<String, String> of compact texts (baseline)", "\(Int(baseline)) bytes",
                    "the cache is \(Report.ratio(perEntry / baseline)) this")
        precondition(texts.count == n)

        precondition(engine.count == n)
    }
}
