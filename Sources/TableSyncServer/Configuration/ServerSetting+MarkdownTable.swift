import Foundation
extension ServerSetting {
    /// The settings as the markdown table of docs/server.md ("Configuration file"), which a test holds equal to this:
    /// `tablesync-server --settings-table` prints it.
    package static var markdownTable: String {
        var lines = ["| flag | file key | environment variable | default | meaning |", "|---|---|---|---|---|"]
        for setting in all {
            let flag =
                switch setting.form {
                case .value(let valueName), .repeatedValue(let valueName): "\(setting.dashedFlag) \(valueName)"
                case .switchOff: setting.dashedFlag
                }
            let cells = [
                code(flag), code(setting.key), setting.environmentVariable.map(code) ?? "",
                escaped(setting.defaultValue), escaped(setting.help)
            ]
            lines.append("| \(cells.joined(separator: " | ")) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as code in a table cell.
    private static func code(_ text: String) -> String { "`\(escaped(text))`" }

    /// `text` with the pipes that would end its table cell escaped.
    private static func escaped(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
}
