import CacheCore

/// A configuration file's cache settings (SPEC §5.1) for a program that has no session:
/// `cachesh proxy --config FILE`.
public enum ConfigurationFile {
    /// The namespaces, push rules and id field `text` configures; throws the message of the first
    /// problem (with its JSON path) when it is refused. Its `server` part is not used.
    public static func cacheConfiguration(text: String) throws(CacheError) -> CacheConfiguration {
        do { return try ParsedConfiguration(text: text).cache } catch { throw CacheError(error.message) }
    }
}
