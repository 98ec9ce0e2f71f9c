import Foundation

/// Reads static tokens: from a file, one per line as `TOKEN [NAME]` (blank lines and lines starting with `#`
/// ignored), or from an environment variable, separated by commas or whitespace (unnamed).
///
/// A line with the token alone, as tokens files held before names, still means that token; its log name is
/// its line number. A name (``StaticToken/isValidName(_:)``) is what the log shows and the user the token
/// stands for in per-user tables.
package enum TokenList {
    /// The environment variable that may hold the tokens.
    package static let environmentVariable = "TABLESYNC_SERVER_TOKENS"

    /// The tokens of a tokens file's text; `file` names it in errors.
    package static func parse(
        fileContents: String, file: String = "the tokens file"
    ) throws(ConfigurationError) -> [StaticToken] {
        var tokens: [StaticToken] = []
        var names: Set<String> = []
        for (index, line) in fileContents.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }
        ).enumerated() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let secret = fields.first, !secret.hasPrefix("#") else { continue }
            let lineNumber = index + 1
            guard fields.count <= 2 else {
                throw ConfigurationError(
                    "\(file), line \(lineNumber): expected TOKEN or TOKEN NAME, found \(fields.count) words")
            }
            let name = fields.count == 2 ? fields[1] : nil
            if let name {
                guard StaticToken.isValidName(name) else {
                    throw ConfigurationError(
                        "\(file), line \(lineNumber): a token's name is 1–64 letters, digits, '.', '_', '-' or '@'")
                }
                guard names.insert(name).inserted else {
                    throw ConfigurationError("\(file), line \(lineNumber): the name '\(name)' is given twice")
                }
            }
            tokens.append(StaticToken(secret: secret, name: name, origin: "line \(lineNumber)"))
        }
        return tokens
    }

    /// The tokens of ``environmentVariable``'s value, unnamed.
    package static func parse(environmentValue: String) -> [StaticToken] {
        environmentValue.split(whereSeparator: { $0 == "," || $0.isWhitespace }).enumerated().map { index, secret in
            StaticToken(secret: String(secret), origin: "\(environmentVariable) entry \(index + 1)")
        }
    }

    /// The tokens of `file`; throws when it cannot be read, holds no token or a line is malformed.
    package static func load(file: String) throws(ConfigurationError) -> [StaticToken] {
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8)
        else {
            throw ConfigurationError("cannot read the tokens file \(file)")
        }
        let tokens = try parse(fileContents: text, file: file)
        guard !tokens.isEmpty else {
            throw ConfigurationError("the tokens file \(file) holds no token (one per line: TOKEN [NAME])")
        }
        return tokens
    }
}
