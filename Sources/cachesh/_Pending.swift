import CacheShell
enum Verify { static func run(files: [String], update: Bool, environment: ProcessEnvironment) -> Int32 { 2 } }
enum Interactive { static func run(session: Session, terminal: Terminal, environment: ProcessEnvironment) -> Int32 { 2 } }
