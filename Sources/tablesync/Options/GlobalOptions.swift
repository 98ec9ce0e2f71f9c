import ArgumentParser

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .customShort("C"), help: ArgumentHelp("Run as if started in STORE (default: the current directory or the nearest parent that is a store).", valueName: "STORE"))
    var store: String = "."

    @Flag(help: "Print one JSON document instead of text.")
    var json = false
}

extension GlobalOptions {
    /// `arguments` with a leading `-C STORE` (or `-CSTORE`) moved behind the subcommand's own arguments
    /// (before a `--` if there is one), where the subcommand's ``GlobalOptions`` parse it.
    static func movingStoreOption(_ arguments: [String]) -> [String] {
        var rest = arguments
        var moved: [String] = []
        while let first = rest.first, first.hasPrefix("-C") {
            if first == "-C" {
                guard rest.count >= 2 else { break }
                moved += ["-C", rest[1]]
                rest.removeFirst(2)
            } else {
                moved += ["-C", String(first.dropFirst(2))]
                rest.removeFirst()
            }
        }
        guard !moved.isEmpty else { return arguments }
        if let terminator = rest.firstIndex(of: "--") {
            rest.insert(contentsOf: moved, at: terminator)
        } else {
            rest += moved
        }
        return rest
    }
}
