import CacheCore
enum RecordCommands {
    static func record(_ session: Session, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply { throw ShellError("record: not yet", at: command.offset) }
}
final class Recording { func append(command: String, output: String) {} }
