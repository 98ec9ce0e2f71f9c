import ArgumentParser
import TableSyncServer

/// The flags of every ``ServerSetting``, made from the declarations at run time: `--help` lists each with its help
/// and default, and the argument parser refuses an unknown flag or a missing value as for any other option.
///
/// The argument parser finds a command's options by reflecting an instance of it; this type's `customMirror` hands
/// it one option for each setting, and `init(from:)` reads them back by the same names. Values stay text here:
/// ``ServerSettingSources`` reads them as it reads the configuration file's and the environment's, with the same
/// errors.
struct SettingFlags: ParsableArguments, CustomReflectable {
    /// The text of each flag given, by ``ServerSetting/flag``; `"false"` for a switch (`--no-batch`).
    private(set) var given: [String: [String]] = [:]

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: SettingKey.self)
        for setting in ServerSetting.all {
            let key = SettingKey(stringValue: setting.flag)
            switch setting.form {
            case .value:
                if let text = try container.decode(Option<String?>.self, forKey: key).wrappedValue {
                    given[setting.flag] = [text]
                }
            case .repeatedValue:
                let texts = try container.decode(Option<[String]>.self, forKey: key).wrappedValue
                if !texts.isEmpty { given[setting.flag] = texts }
            case .switchOff:
                if try container.decode(Flag<Bool>.self, forKey: key).wrappedValue { given[setting.flag] = ["false"] }
            }
        }
    }

    var customMirror: Mirror {
        Mirror(
            self,
            children: ServerSetting.all.map { setting -> Mirror.Child in (setting.flag, Self.argument(for: setting)) })
    }

    /// The option or flag that stands for `setting` on the command line.
    private static func argument(for setting: ServerSetting) -> Any {
        let name = NameSpecification.customLong(setting.flag)
        let text = "\(setting.help) Default: \(setting.defaultValue)."
        switch setting.form {
        case .value(let valueName):
            return Option<String?>(name: name, help: ArgumentHelp(text, valueName: valueName))
        case .repeatedValue(let valueName):
            return Option<[String]>(wrappedValue: [], name: name, help: ArgumentHelp(text, valueName: valueName))
        case .switchOff:
            return Flag(wrappedValue: false, name: name, help: ArgumentHelp(text))
        }
    }

    /// A setting's flag as the key the argument parser decodes it by.
    private struct SettingKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
