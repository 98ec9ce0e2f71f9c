import Foundation

/// An HTTP/1.1 message as the loopback servers handle it: head lines and a whole body.
struct HTTPMessage: Sendable {
    /// The start line, then `Name: value` lines.
    var head: [String]
    var body: [UInt8]

    var status: Int { Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0 }

    var expectsContinue: Bool { header("expect")?.lowercased() == "100-continue" }

    func header(_ name: String) -> String? {
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    mutating func removeHeader(_ name: String) {
        head =
            [head[0]]
            + head.dropFirst().filter { line in
                guard let colon = line.firstIndex(of: ":") else { return true }
                return line[..<colon].lowercased() != name
            }
    }

    /// The message with a `Content-Length` body and `Connection: close`.
    func encoded() -> [UInt8] {
        var copy = self
        for name in ["content-length", "connection", "transfer-encoding", "keep-alive"] { copy.removeHeader(name) }
        let isRequest = !(head.first ?? "").hasPrefix("HTTP/")
        if !isRequest || !body.isEmpty
            || ["POST", "PUT", "PATCH"].contains(head.first?.split(separator: " ").first ?? "")
        {
            copy.head.append("Content-Length: \(body.count)")
        }
        copy.head.append("Connection: close")
        return Array((copy.head.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    static func decodeResponse(_ bytes: [UInt8]) -> HTTPMessage? {
        guard let end = headEnd(bytes), var message = parseHead(Array(bytes[0..<end])) else { return nil }
        message.body = Array(bytes[(end + 4)...])
        return message
    }

    static func parseHead(_ bytes: [UInt8]) -> HTTPMessage? {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        guard let first = lines.first, !first.isEmpty else { return nil }
        return HTTPMessage(head: lines, body: [])
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func lineEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= start + 2 else { return nil }
        for index in start...(bytes.count - 2) where bytes[index] == 13 && bytes[index + 1] == 10 { return index }
        return nil
    }
}
