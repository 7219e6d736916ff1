#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What kind of file a `stat` describes, in the words cachesh's errors use.
public enum FileKind {
    /// Whether a file's permission bits leave no one this process could be allowed to write it
    /// as: no write bit at all, or none for its owner when this process is the owner. Root may
    /// write such a file (the kernel does not check its bits), but cachesh does not: a file made
    /// read-only stays so for every user. (For another user, what the kernel lets it do is the same.)
    public static func permissionBitsForbidWriting(_ st: stat) -> Bool {
        if st.st_mode & 0o222 == 0 { return true }
        return st.st_uid == geteuid() && st.st_mode & 0o200 == 0
    }

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
