import Testing
@testable import CacheCore

@Suite("Patches: RFC 7396 merge patch with $inc, $push, $pull")
struct PatchTests {
    private func patch(_ text: String) throws -> Patch {
        try Patch(try JSONValue(parsing: text))
    }

    @Test("merge patch follows RFC 7396: replace, add, remove with null, merge nested objects")
    func mergePatch() throws {
        let value: JSONValue = ["title": "Hello", "author": ["name": "Ann", "email": "a@x"], "tags": ["a"]]
        let result = try patch(#"{"title":"Hi","author":{"email":null},"tags":["b"],"new":1}"#).apply(to: value)
        #expect(result == ["title": "Hi", "author": ["name": "Ann"], "tags": ["b"], "new": 1])
        // A patch that is not an object replaces the whole value.
        #expect(try patch("[1,2]").apply(to: value) == [1, 2])
        // Merging into a non-object starts from an empty object.
        #expect(try patch(#"{"a":1}"#).apply(to: "text") == ["a": 1])
    }

    @Test("$inc adds to integers and doubles and creates a missing field")
    func increment() throws {
        let post: JSONValue = ["likes": 3, "score": 1.5]
        #expect(try patch(#"{"likes":{"$inc":1},"score":{"$inc":1}}"#).apply(to: post) == ["likes": 4, "score": 2.5])
        #expect(try patch(#"{"comments":{"$inc":2}}"#).apply(to: post) == ["likes": 3, "score": 1.5, "comments": 2])
        #expect(try patch(#"{"likes":{"$inc":-3}}"#).apply(to: post) == ["likes": 0, "score": 1.5])
        #expect(try patch(#"{"$inc":5}"#).apply(to: 10) == 15)
    }

    @Test("$push appends one element, $pull removes every equal element")
    func pushPull() throws {
        let value: JSONValue = ["tags": ["a", "b", "a"]]
        #expect(try patch(#"{"tags":{"$push":["c"]}}"#).apply(to: value) == ["tags": ["a", "b", "a", ["c"]]])
        #expect(try patch(#"{"tags":{"$pull":"a"}}"#).apply(to: value) == ["tags": ["b"]])
        #expect(try patch(#"{"list":{"$push":1}}"#).apply(to: value) == ["tags": ["a", "b", "a"], "list": [1]])
        #expect(try patch(#"{"list":{"$pull":1}}"#).apply(to: value) == value)
    }

    @Test("operators nested inside objects name their path in errors")
    func nestedErrors() throws {
        let value: JSONValue = ["post": ["likes": "many", "tags": 3]]
        #expect(throws: PatchError("cannot $inc at post.likes: it is a string, not a number")) {
            try patch(#"{"post":{"likes":{"$inc":1}}}"#).apply(to: value)
        }
        #expect(throws: PatchError("cannot $push at post.tags: it is a number, not an array")) {
            try patch(#"{"post":{"tags":{"$push":1}}}"#).apply(to: value)
        }
        #expect(throws: PatchError("cannot $pull at post.tags: it is a number, not an array")) {
            try patch(#"{"post":{"tags":{"$pull":1}}}"#).apply(to: value)
        }
        #expect(throws: PatchError("$inc at n overflows a 64-bit integer")) {
            try patch(#"{"n":{"$inc":1}}"#).apply(to: ["n": .int(.max)])
        }
    }

    @Test("bad operators are refused when the patch is read, before anything applies")
    func refusedPatches() throws {
        #expect(throws: PatchError("unknown patch operator $set at a (use $inc, $push or $pull)")) { try patch(#"{"a":{"$set":1}}"#) }
        #expect(throws: PatchError("$inc at a needs a number, not a string")) { try patch(#"{"a":{"$inc":"1"}}"#) }
        #expect(throws: PatchError("operator $inc at a must be alone in its object")) { try patch(#"{"a":{"$inc":1,"b":2}}"#) }
    }

    @Test("entity patches reach every object with the id, at any depth; 42 matches \"42\" but not 42.0")
    func entities() throws {
        let feed: JSONValue = [
            "posts": [["id": 42, "likes": 1], ["id": "42", "likes": 5], ["id": 42.0, "likes": 9], ["id": 7, "likes": 0]],
            "pinned": ["id": 42, "author": ["id": 7, "likes": 2]],
        ]
        let (value, matches) = try feed.patchingEntities(id: "42", idField: "id", with: try patch(#"{"likes":{"$inc":1}}"#))
        #expect(matches == 3)
        #expect(value == [
            "posts": [["id": 42, "likes": 2], ["id": "42", "likes": 6], ["id": 42.0, "likes": 9], ["id": 7, "likes": 0]],
            "pinned": ["id": 42, "author": ["id": 7, "likes": 2], "likes": 1],
        ])
        var ids = Set<String>()
        feed.collectEntityIDs(idField: "id", into: &ids)
        #expect(ids == ["42", "7"])
    }

    @Test("an entity patch that fails on one object fails whole")
    func entityAllOrNothing() throws {
        let value: JSONValue = [["id": 1, "n": 1], ["id": 1, "n": "x"]]
        #expect(throws: PatchError.self) {
            try value.patchingEntities(id: "1", idField: "id", with: try patch(#"{"n":{"$inc":1}}"#))
        }
    }
}
