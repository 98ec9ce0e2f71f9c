import ArgumentParser
import SyncProtocol
import TableSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Printing results and errors the same way in every command.
enum CommandOutput {
    /// Prints `value` as canonical JSON on standard output.
    static func printJSON(_ value: JSONValue) {
        print(CanonicalJSON.string(value), terminator: "")
    }

    /// Prints a line on standard error.
    static func printError(_ line: String, newline: Bool = true) {
        var text = newline ? line + "\n" : line
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// Runs `body`, turning any error into one sentence (or one JSON document) and the right exit code.
    static func run(json: Bool, _ body: () async throws -> ExitStatus) async throws {
        let status: ExitStatus
        do {
            status = try await body()
        } catch let error as CategorizedError {
            report(error.description, status: ExitStatus(error.kind), json: json)
            throw ExitCode(ExitStatus(error.kind).rawValue)
        } catch let error as ExitCode {
            throw error
        } catch let error as ValidationError {
            throw error
        } catch {
            report("\(error)", status: .failure, json: json)
            throw ExitCode(ExitStatus.failure.rawValue)
        }
        if status != .done { throw ExitCode(status.rawValue) }
    }

    private static func report(_ message: String, status: ExitStatus, json: Bool) {
        if json {
            printJSON(["error": .string(message), "exitCode": .integer(Int64(status.rawValue))])
        } else {
            printError("tablesync: \(message)")
        }
    }
}
