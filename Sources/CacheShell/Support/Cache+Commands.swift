import CacheCore

// The shell's verbs over the core's general API: the core knows units of work and external
// timers, the shell knows commands.
extension Cache {
    /// Starts a shell command: the runaway limit (SPEC §7) counts the scheduled items of one
    /// command (the top-level command; a `source`d file's or an `at` command's run inside it).
    func beginCommand() { resetRunawayCount() }
}
