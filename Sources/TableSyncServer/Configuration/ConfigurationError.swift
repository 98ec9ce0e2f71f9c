/// A configuration the server cannot start with, said as one sentence a person can act on.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The sentence.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    /// The sentence, as logs and the command line print it.
    public var description: String { message }
}
