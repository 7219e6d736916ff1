import CacheShell
enum Interactive { static func run(session: Session, terminal: Terminal, environment: ProcessEnvironment) -> Int32 { 2 } }
