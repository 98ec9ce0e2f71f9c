import ArgumentParser

/// Options every command takes: the store (`-C STORE`) and `--json`.
///
/// The root command declares them, so `tablesync --help` lists them and they may stand before the subcommand, as
/// with git (`tablesync -C STORE status`), or after it (`tablesync status -C STORE`): the argument parser reads a
/// root command's options anywhere on the command line. Every subcommand declares them too, for its own `--help`;
/// an `@OptionGroup` of a type the root already decoded receives the root's values instead of parsing again.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .customShort("C", allowingJoined: true),
        help: ArgumentHelp(
            "Run as if started in STORE (default: the current directory or the nearest parent that is a store).",
            valueName: "STORE"))
    var store: String = "."

    @Flag(help: "Print one JSON document on standard output instead of text, errors included.")
    var json = false

    /// Whether `arguments` ask for JSON output, for printing an error before (or without) parsing them: `--json`
    /// anywhere before a `--`, which is where the parser takes it too (it never takes `--json` as an option's value).
    static func asksForJSON(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }
}
