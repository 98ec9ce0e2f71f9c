import SyncProtocol

/// A setting's value as one source gives it: the text of a flag (one for each time a repeatable flag is given) or of
/// an environment variable, or a member of the configuration file. Its readers turn it into the setting's type, and
/// their errors name the source (`--port`, `TABLESYNC_SERVER_DATABASE`, `server.json: "port"`).
struct SettingInput: Sendable {
    /// The value as the source holds it.
    enum Given: Sendable {
        /// What the command line or the environment says.
        case texts([String])
        /// A member of the configuration file at `path`.
        case json(JSONValue, path: String)
    }

    /// The value as the source holds it.
    let given: Given
    /// The flag, environment variable or file member, as errors name it.
    let source: String

    init(_ given: Given, source: String) {
        self.given = given
        self.source = source
    }

    /// A string: the text given last, or a JSON string.
    func text() throws(ConfigurationError) -> String {
        switch given {
        case .texts(let texts): return texts.last ?? ""
        case .json(let value, _):
            guard let text = value.stringValue else { throw ConfigurationError("\(source) must be a string") }
            return text
        }
    }

    /// A whole number: a flag's text in digits, or a JSON integer.
    func wholeNumber() throws(ConfigurationError) -> Int {
        switch given {
        case .texts:
            let text = try text()
            guard let number = Int(text) else {
                throw ConfigurationError("\(source) must be a whole number, not '\(text)'")
            }
            return number
        case .json(let value, _):
            guard let number = value.integerValue else {
                throw ConfigurationError("\(source) must be a whole number")
            }
            return Int(number)
        }
    }

    /// A number of seconds, whole or not.
    func seconds() throws(ConfigurationError) -> Double {
        switch given {
        case .texts:
            let text = try text()
            guard let seconds = Double(text) else {
                throw ConfigurationError("\(source) must be a number of seconds, not '\(text)'")
            }
            return seconds
        case .json(let value, _):
            guard let seconds = value.doubleValue else {
                throw ConfigurationError("\(source) must be a number of seconds")
            }
            return seconds
        }
    }

    /// A number of seconds from 0 to a day, as a duration.
    func secondsUpToADay() throws(ConfigurationError) -> Duration {
        let seconds = try seconds()
        let longest = ServerConfiguration.longestTimeout.components.seconds
        guard seconds.isFinite, (0...Double(longest)).contains(seconds) else {
            throw ConfigurationError("\(source) must be from 0 to \(longest) seconds, not \(seconds)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// `true` or `false`.
    func boolean() throws(ConfigurationError) -> Bool {
        switch given {
        case .texts:
            let text = try text()
            guard let flag = Bool(text) else {
                throw ConfigurationError("\(source) must be true or false, not '\(text)'")
            }
            return flag
        case .json(let value, _):
            guard let flag = value.boolValue else { throw ConfigurationError("\(source) must be true or false") }
            return flag
        }
    }

    /// Tables: a `--table` text each time the flag is given, or the file's array of texts and objects.
    func tables() throws(ConfigurationError) -> [TableOptions] {
        switch given {
        case .texts(let texts):
            var tables: [TableOptions] = []
            for text in texts { tables.append(try TableOptions.parse(text)) }
            return tables
        case .json(let value, let path):
            guard case .array(let entries) = value else { throw ConfigurationError("\(source) must be an array") }
            var tables: [TableOptions] = []
            for entry in entries { tables.append(try ServerConfigurationFile.table(entry, path: path)) }
            return tables
        }
    }
}
