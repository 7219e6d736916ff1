import CacheCore
enum SnapshotCommands {
    static func snapshot(_ session: Session, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply { throw ShellError("snapshot: not yet", at: command.offset) }
    static func restore(_ session: Session, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply { throw ShellError("restore: not yet", at: command.offset) }
}
enum RecordCommands {
    static func record(_ session: Session, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply { throw ShellError("record: not yet", at: command.offset) }
}
enum HelpCommands {
    static func help(_ session: Session, _ command: RawCommand, _ source: SourceFile) throws(ShellError) -> Reply { throw ShellError("help: not yet", at: command.offset) }
}
final class Recording { func append(command: String, output: String) {} }
