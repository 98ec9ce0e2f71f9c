/// A record property that a table's declared columns do not allow, said as a sentence naming the property.
public struct SchemaViolation: Error, Sendable, Equatable, CustomStringConvertible {
    /// The property at fault.
    public let property: String
    /// What is wrong with it, as the rest of the sentence.
    public let problem: String

    public init(property: String, problem: String) {
        self.property = property
        self.problem = problem
    }

    public var description: String { "the property '\(property)' \(problem)" }
}
