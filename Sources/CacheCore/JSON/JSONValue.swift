/// A JSON value as the cache stores it.
///
/// Numbers keep their exactness: an integer that fits in 64 bits is `.int`,
/// anything else (a fraction, an exponent, a huge integer) is `.double`. So
/// `42` and `42.0` are different values, as SPEC §1.1 needs for entity ids.
/// Objects are unordered; every printer writes their keys sorted.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}
