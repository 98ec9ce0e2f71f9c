import ArgumentParser
import TableSync

/// `--conflict-policy manual|server-wins|client-wins`, parsed once by the argument parser and listed in `--help`
/// with what each value does.
///
/// The conformance lives here because the library does not depend on the argument parser. It takes no
/// `@retroactive`: Swift 6.3 refuses that attribute for a type declared in the same package, and does not warn.
extension StoreSettings.ConflictPolicy: ExpressibleByArgument {
    public static var allValueDescriptions: [String: String] {
        Dictionary(
            uniqueKeysWithValues: allCases.map { policy in
                let description =
                    switch policy {
                    case .manual:
                        """
                        keep the refused change and the server's copy under conflicts/ \
                        for `tablesync resolve` (exit 3)
                        """
                    case .serverWins: "take the server's copy and drop the local change"
                    case .clientWins: "send the local change again on top of the server's version"
                    }
                return (policy.rawValue, description)
            })
    }
}
