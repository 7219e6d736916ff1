/// Entities: JSON objects, at any depth of a value, identified by their id field (SPEC §1.1, B8).
///
/// An id matches by its decimal text or as a string: `42` and `"42"` are the same entity,
/// `42.0` is not an id at all.
extension JSONValue {
    /// The id text of an object's id field, if it has one that counts.
    @inline(__always)
    static func entityID(_ value: JSONValue?) -> String? {
        switch value {
        case .int(let n)?: return String(n)
        case .string(let s)?: return s
        default: return nil
        }
    }

    /// Adds the id of every object in this value, at any depth, to `ids`.
    /// - Complexity: O(size of the value).
    public func collectEntityIDs(idField: String, into ids: inout Set<String>) {
        switch self {
        case .object(let object):
            if let id = Self.entityID(object[idField]) { ids.insert(id) }
            for child in object.values { child.collectEntityIDs(idField: idField, into: &ids) }
        case .array(let array):
            for child in array { child.collectEntityIDs(idField: idField, into: &ids) }
        default:
            break
        }
    }

    /// This value with `patch` applied to every object whose id is `id`, innermost first.
    ///
    /// The patch applies to the object as its nested entities have already been patched.
    /// - Returns: the new value and how many objects matched (0: the value is unchanged).
    /// - Complexity: O(size of the value).
    /// - Throws: `PatchError` if the patch does not apply to one of them; nothing is changed then.
    /// - Throws: `PatchError` too when the result would be larger than `JSONValue.maxBytes`, or
    ///   when the patch applies to so many objects that applying it would take more than
    ///   `JSONValue.maxBytes` bytes of patch (`maxPatchWork`): each object it inserts can match again.
    public func patchingEntities(id: String, idField: String, with patch: Patch) throws(PatchError) -> (value: JSONValue, matches: Int) {
        // What applying the patch once costs, at least 1: a patch of n bytes changes at most
        // that much of an object, and the work is counted before the result is built.
        var work = EntityPatchWork(cost: max(1, patch.document.compactCount(atMost: JSONValue.maxBytes) ?? JSONValue.maxBytes))
        let result = try patchingEntities(id: id, idField: idField, with: patch, patchDepth: patch.document.depth, at: 0, work: &work)
        if result.matches > 0 { try Patch.checkSize(result.value) }
        return result
    }

    /// The patch work of one entity patch, against `JSONValue.maxPatchWork`.
    private struct EntityPatchWork {
        let cost: Int
        var spent = 0
        var matches = 0

        mutating func spend() throws(PatchError) {
            matches += 1
            spent += cost
            guard spent <= JSONValue.maxPatchWork else {
                throw PatchError("the patch applies to more than \(matches - 1) objects of the value, each a copy of its \(cost) bytes: "
                                 + "more than \(JSONValue.maxPatchWork >> 20) MiB of patch work")
            }
        }
    }

    /// The most bytes of patch one entity patch may apply to a value: its size times the
    /// objects it applies to (SPEC §7.1). Bounds the work and the growth of one patch before the
    /// result is measured (`JSONValue.maxBytes`).
    public static let maxPatchWork = 16 << 20

    /// `patchingEntities` of a value nested `level` levels deep in the whole: an entity's patched
    /// result may not take the whole past `JSONValue.maxDepth` (repeated patches at depth would
    /// otherwise grow a value without bound).
    private func patchingEntities(id: String, idField: String, with patch: Patch, patchDepth: Int,
                                  at level: Int, work: inout EntityPatchWork) throws(PatchError) -> (value: JSONValue, matches: Int) {
        switch self {
        case .object(var object):
            var matches = 0
            for (key, child) in object {
                let patched = try child.patchingEntities(id: id, idField: idField, with: patch, patchDepth: patchDepth, at: level + 1, work: &work)
                if patched.matches > 0 {
                    object[key] = patched.value
                    matches += patched.matches
                }
            }
            var result = JSONValue.object(object)
            if Self.entityID(object[idField]) == id {
                try work.spend()
                result = try Patch.merged(result, patch.document)
                // A merge is no deeper than the deeper of the two; only then is the result measured.
                if level + patchDepth > JSONValue.maxDepth && level + result.depth > JSONValue.maxDepth {
                    throw PatchError("the patch would nest the value deeper than \(JSONValue.maxDepth) levels")
                }
                matches += 1
            }
            return (matches > 0 ? result : self, matches)
        case .array(var array):
            var matches = 0
            for index in array.indices {
                let patched = try array[index].patchingEntities(id: id, idField: idField, with: patch, patchDepth: patchDepth, at: level + 1, work: &work)
                if patched.matches > 0 {
                    array[index] = patched.value
                    matches += patched.matches
                }
            }
            return (matches > 0 ? .array(array) : self, matches)
        default:
            return (self, 0)
        }
    }
}
