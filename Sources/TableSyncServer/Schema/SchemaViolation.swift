/// A record property that a table's declared columns do not allow, said as a sentence naming the property.
package struct SchemaViolation: Error, Sendable, Equatable, CustomStringConvertible {
    /// The property at fault.
    package let property: String
    /// What is wrong with it, as the rest of the sentence.
    package let problem: String

    package init(property: String, problem: String) {
        self.property = property
        self.problem = problem
    }

    package var description: String { "the property '\(property)' \(problem)" }
}
