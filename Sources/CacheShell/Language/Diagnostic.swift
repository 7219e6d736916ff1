import CacheCore

/// The shell's name for the one error value: a problem with a command, at a byte of its source.
public typealias ShellError = Diagnostic
