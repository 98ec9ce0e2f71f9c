/// A configuration the server cannot start with, said as one sentence a person can act on.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
