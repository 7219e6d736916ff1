/// What observers watch (B15): keys, namespaces or everything. The engine reports a change to its
/// delegate when its key is in a watched scope.
///
/// Invariants (`invariantViolations()`):
/// - a watched key is in its printed form (`home`, never `default:home`), so it matches the key
///   of the entry it names.
struct Observers {
    /// The scopes watched (`CacheEngine.watchedScopes`, sorted).
    private(set) var scopes: Set<WatchScope> = []

    init() {}

    /// The watches of a snapshot (its keys checked when it was decoded).
    init(restoring scopes: Set<WatchScope>) { self.scopes = scopes }

    /// Nothing is watched: no change needs reporting.
    var isEmpty: Bool { scopes.isEmpty }

    /// Everything is watched (pushes are reported only then).
    var watchesAll: Bool { scopes.contains(.all) }

    /// Starts watching a scope; a key is watched in its printed form.
    /// - Complexity: O(1).
    mutating func watch(_ scope: WatchScope) {
        if case .key(let key) = scope { scopes.insert(.key(KeyName.canonical(key))) } else { scopes.insert(scope) }
    }

    /// Stops watching a scope, or everything when nil.
    /// - Returns: whether something was being watched.
    /// - Complexity: O(1); O(scopes) to stop watching everything.
    mutating func unwatch(_ scope: WatchScope?) -> Bool {
        guard let scope else {
            defer { scopes.removeAll() }
            return !scopes.isEmpty
        }
        if case .key(let key) = scope { return scopes.remove(.key(KeyName.canonical(key))) != nil }
        return scopes.remove(scope) != nil
    }

    /// Whether a change of `key`, in namespace `namespace`, is reported.
    /// - Complexity: O(1) (three set lookups).
    func isWatched(_ key: String, namespace: String) -> Bool {
        scopes.contains(.all) || scopes.contains(.key(key)) || scopes.contains(.namespace(namespace))
    }
}

// MARK: - Invariants

extension Observers {
    /// What is wrong with the scopes, one message per broken rule (see the type's invariants);
    /// empty when they are sound.
    /// - Complexity: O(scopes).
    func invariantViolations() -> [String] {
        var v: [String] = []
        for case .key(let key) in scopes where KeyName.canonical(key) != key {
            v.append("observers: watched key \(key) is not in its printed form")
        }
        return v
    }

    /// Stops the process with the violations, if any.
    func checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "Observers invariants broken:\n" + violations.joined(separator: "\n"))
    }
}
