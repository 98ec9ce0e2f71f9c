/// One setting of `tablesync-server`, declared once in ``all``: its flag, its key in the configuration file, the
/// environment variable it is also read from, its default and its help, how a value becomes part of a
/// ``ServerConfiguration``, and the range a server starts with. The flags, the file's parser, its unknown-key
/// message, ``ServerConfiguration/validate()`` and the settings table of docs/server.md all come from these.
package struct ServerSetting: Sendable {
    /// How the setting is given on the command line.
    package enum Form: Sendable, Equatable {
        /// `--flag VALUE`; `valueName` stands for the value in the help.
        case value(valueName: String)
        /// `--flag VALUE`, repeatable; the file's values come first, then the flags'.
        case repeatedValue(valueName: String)
        /// `--flag` alone, which sets the setting to `false` (`--no-batch` for `batch`).
        case switchOff
    }

    /// The long flag, without its dashes: `max-filter-growth`.
    package let flag: String
    /// The configuration file's key; a dot separates an object's key from its member's (`jwt.issuer`).
    package let key: String
    /// The environment variable read when no flag gives the setting, over the file.
    package let environmentVariable: String?
    package let form: Form
    /// The value when no source gives one, as a person reads it.
    package let defaultValue: String
    /// What the setting does, in a sentence or two.
    package let help: String
    /// Reads an input and sets the configuration's part with it.
    let apply: @Sendable (SettingInput, inout ServerConfiguration) throws(ConfigurationError) -> Void
    /// Reads an input without using it: the file's parser checks each member's type with it.
    let read: @Sendable (SettingInput) throws(ConfigurationError) -> Void
    /// The refusal of a configuration whose value is out of the setting's range, or `nil`.
    let check: @Sendable (ServerConfiguration) -> ConfigurationError?

    init<Value>(
        flag: String, key: String, environmentVariable: String? = nil, form: Form, default defaultValue: String,
        help: String, read: @escaping @Sendable (SettingInput) throws(ConfigurationError) -> Value,
        apply: @escaping @Sendable (Value, inout ServerConfiguration) throws(ConfigurationError) -> Void,
        check: @escaping @Sendable (ServerConfiguration) -> ConfigurationError? = { _ in nil }
    ) {
        self.flag = flag
        self.key = key
        self.environmentVariable = environmentVariable
        self.form = form
        self.defaultValue = defaultValue
        self.help = help
        self.read = { (input: SettingInput) throws(ConfigurationError) in _ = try read(input) }
        self.apply = { (input: SettingInput, configuration: inout ServerConfiguration) throws(ConfigurationError) in
            try apply(try read(input), &configuration)
        }
        self.check = check
    }

    /// The flag as it is typed: `--max-filter-growth`.
    package var dashedFlag: String { "--\(flag)" }

    /// A whole number kept at `setting` and refused outside `range`, with `unit` after the range in the refusal.
    static func wholeNumber(
        _ flag: String, key: String, valueName: String = "N", default defaultValue: String, help: String,
        _ setting: WritableKeyPath<ServerConfiguration, Int> & Sendable, range: ClosedRange<Int>, unit: String = ""
    ) -> ServerSetting {
        ServerSetting(
            flag: flag, key: key, form: .value(valueName: valueName), default: defaultValue, help: help,
            read: { (input: SettingInput) throws(ConfigurationError) in try input.wholeNumber() },
            apply: { $1[keyPath: setting] = $0 },
            check: { configuration in
                let value = configuration[keyPath: setting]
                guard !range.contains(value) else { return nil }
                return ConfigurationError(
                    "--\(flag) must be from \(range.lowerBound) to \(range.upperBound)\(unit), not \(value)")
            })
    }

    /// A time limit in seconds kept at `setting`: more than 0 and at most a day.
    static func timeLimit(
        _ flag: String, key: String, default defaultValue: String, help: String,
        _ setting: WritableKeyPath<ServerConfiguration, Duration> & Sendable
    ) -> ServerSetting {
        ServerSetting(
            flag: flag, key: key, form: .value(valueName: "SECONDS"), default: defaultValue, help: help,
            read: { (input: SettingInput) throws(ConfigurationError) in
                try ServerConfiguration.timeLimit(seconds: try input.seconds(), setting: input.source)
            },
            apply: { $1[keyPath: setting] = $0 },
            check: { configuration in
                let value = configuration[keyPath: setting]
                guard value <= .zero || value > ServerConfiguration.longestTimeout else { return nil }
                return ServerConfiguration.timeLimitError(setting: "--\(flag)", value: "\(value)")
            })
    }

    /// The settings whose keys lie directly under `prefix` (`""` for the file's top level, `"jwt"` for its `jwt`
    /// object): each one's next key component, in declaration order, once.
    static func keys(under prefix: String) -> [String] {
        var keys: [String] = []
        for setting in all {
            let components = setting.key.split(separator: ".").map(String.init)
            let depth = prefix.isEmpty ? 0 : prefix.split(separator: ".").count
            guard components.count > depth, components.prefix(depth).joined(separator: ".") == prefix else {
                continue
            }
            if !keys.contains(components[depth]) { keys.append(components[depth]) }
        }
        return keys
    }
}
