/// Where the settings of one start come from, and the rule between them: a flag wins over the setting's environment
/// variable, which wins over the configuration file, which wins over the default. `--table` adds to the file's
/// tables instead, replacing the one of the same name.
package struct ServerSettingSources: Sendable {
    /// The configuration file (`--config`), or an empty one.
    package var file: ServerConfigurationFile
    /// The process's environment.
    package var environment: [String: String]
    /// The flags given, by ``ServerSetting/flag``: the text of each time it is given (`"false"` for a switch).
    package var flags: [String: [String]]

    package init(
        file: ServerConfigurationFile = ServerConfigurationFile(), environment: [String: String] = [:],
        flags: [String: [String]] = [:]
    ) {
        self.file = file
        self.environment = environment
        self.flags = flags
    }

    /// The database served when no source names one: an embedded SQLite file in the working directory.
    package static let defaultDatabase = DatabaseLocation.sqlite(path: "tablesync-server.sqlite")
    /// The table served when no source names one: the Azure Mobile Apps quickstart's.
    package static let defaultTable = "TodoItem"

    /// The setting's inputs in rising precedence: the file's, the environment's, the command line's.
    func inputs(for setting: ServerSetting) -> [SettingInput] {
        var inputs: [SettingInput] = []
        if let input = file.inputs[setting.key] { inputs.append(input) }
        if let name = setting.environmentVariable, let text = environment[name] {
            inputs.append(SettingInput(.texts([text]), source: name))
        }
        if let texts = flags[setting.flag] { inputs.append(SettingInput(.texts(texts), source: setting.dashedFlag)) }
        return inputs
    }

    /// Whether any source gives the setting of `key`.
    package func gives(_ key: String) -> Bool {
        ServerSetting.all.contains { $0.key == key && !inputs(for: $0).isEmpty }
    }

    /// The configuration the sources give, on the defaults; ``ServerConfiguration/validate()`` is the server's.
    package func configuration() throws(ConfigurationError) -> ServerConfiguration {
        var configuration = ServerConfiguration(database: Self.defaultDatabase, tables: [])
        for setting in ServerSetting.all {
            let inputs = inputs(for: setting)
            let applied =
                if case .repeatedValue = setting.form { inputs } else { Array(inputs.suffix(1)) }
            for input in applied { try setting.apply(input, &configuration) }
        }
        if case .postgres(let location) = configuration.database {
            configuration.database = .postgres(try location.filledIn(from: environment))
        }
        if configuration.tables.isEmpty { configuration.tables = [TableOptions(name: Self.defaultTable)] }
        if !gives("tokensFile"), let value = environment[TokenList.environmentVariable] {
            configuration.tokens = TokenList.parse(environmentValue: value)
        }
        if !gives("jwt.hs256KeyFile"), let key = environment[JWTSettings.sharedKeyEnvironmentVariable] {
            var settings = configuration.jwt ?? JWTSettings(issuer: "", audience: "")
            settings.sharedKey = JWTSettings.sharedKey(fileContents: key)
            configuration.jwt = settings
        }
        if let jwt = configuration.jwt, !jwt.namesKeyOrClaims { configuration.jwt = nil }
        return configuration
    }
}

extension JWTSettings {
    /// Whether a key, an issuer or an audience is given: the settings that make a server check JWTs, where the
    /// leeway, the refresh interval and the role claim alone do not.
    var namesKeyOrClaims: Bool { sharedKey != nil || keySet != nil || !issuer.isEmpty || !audience.isEmpty }
}
