#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What kind of file a `stat` describes, in the words cachesh's errors use.
public enum FileKind {
    /// "is a FIFO, not a regular file", or nil for a regular file (the store and the shell's file
    /// reads refuse anything else with this text).
    public static func notRegular(_ st: stat) -> String? {
        switch st.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "is a directory"
        case S_IFIFO: return "is a FIFO, not a regular file"
        case S_IFCHR: return "is a character device, not a regular file"
        case S_IFBLK: return "is a block device, not a regular file"
        case S_IFSOCK: return "is a socket, not a regular file"
        case S_IFLNK: return "is a symbolic link, not a regular file"
        default: return "is not a regular file"
        }
    }
}
