import CacheCore

/// The seeded generator of every randomized test (SplitMix64): the same seed gives the same
/// sequence on every machine, so a failing seed reproduces.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    public mutating func next() -> UInt64 { generator.next() }

    /// True `percent` times in a hundred.
    public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    /// One of `items` (not empty).
    public mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &self)! }
}
