/// Follows the framing of a chunked request body as its bytes arrive, for the one thing NIO's decoder does not tell:
/// the size each chunk announces. A size over what any body may hold is refused before its bytes are awaited (the
/// decoder would wait for them until the body timeout). Everything else about the framing is the decoder's to judge:
/// what the scan does not follow it leaves alone (``Verdict/leftToDecoder``).
struct ChunkedBodyScan: Sendable, Equatable {
    /// What the bytes scanned so far say.
    enum Verdict: Sendable, Equatable {
        /// The body goes on.
        case reading
        /// The body ended `consumed` bytes into the bytes just scanned; the rest belongs to the next request.
        case ended(consumed: Int)
        /// A chunk size has more hexadecimal digits than a count of bytes can hold (`overflow`), or takes the
        /// body's chunks past the limit.
        case tooLarge(overflow: Bool)
        /// Bytes the scan does not follow (a bare LF, a chunk without its CRLF): the decoder reports them.
        case leftToDecoder
    }

    /// The most hexadecimal digits a chunk size may have: 15 hold sizes up to 2⁶⁰ − 1, far over any limit, and
    /// cannot overflow a 64-bit count.
    static let maximumSizeDigits = 15

    private enum State: Sendable, Equatable {
        case size(digits: Int, value: Int)
        case sizeExtension(value: Int)
        case sizeLineFeed(value: Int)
        case data(remaining: Int)
        case dataCarriageReturn
        case dataLineFeed
        case trailerLineStart
        case trailerLine
        case trailerLineFeed
        case lastLineFeed
    }

    /// The most bytes the body's chunks may announce together.
    let limit: Int
    private var state = State.size(digits: 0, value: 0)
    private var announced = 0

    init(limit: Int) { self.limit = limit }

    /// Scans the next bytes of the body. After any verdict but ``Verdict/reading`` the scan is over.
    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        var index = 0
        while index < bytes.count {
            if case .data(let remaining) = state {
                // The chunk's bytes are skipped, not looked at.
                let taken = min(remaining, bytes.count - index)
                index += taken
                state = remaining == taken ? .dataCarriageReturn : .data(remaining: remaining - taken)
                continue
            }
            let byte = bytes[index]
            index += 1
            switch step(byte) {
            case .reading: continue
            case .ended: return .ended(consumed: index)
            case let verdict: return verdict
            }
        }
        return .reading
    }

    /// Moves the state on by one `byte` outside a chunk's data: `.reading` to go on, `.ended` (its count unset)
    /// when the byte ends the body, or the verdict that ends the scan.
    private mutating func step(_ byte: UInt8) -> Verdict {
        let carriageReturn = UInt8(ascii: "\r")
        let lineFeed = UInt8(ascii: "\n")
        switch state {
        case .size(let digits, let value):
            return sizeDigit(byte, digits: digits, value: value)
        case .sizeExtension(let value):
            if byte == carriageReturn { state = .sizeLineFeed(value: value) }
            return byte == lineFeed ? .leftToDecoder : .reading
        case .sizeLineFeed(let value):
            guard byte == lineFeed else { return .leftToDecoder }
            announced += value
            state = value == 0 ? .trailerLineStart : .data(remaining: value)
        case .data:
            preconditionFailure("a chunk's data is skipped, not stepped through")
        case .dataCarriageReturn:
            guard byte == carriageReturn else { return .leftToDecoder }
            state = .dataLineFeed
        case .dataLineFeed:
            guard byte == lineFeed else { return .leftToDecoder }
            state = .size(digits: 0, value: 0)
        case .trailerLineStart:
            guard byte != lineFeed else { return .leftToDecoder }
            state = byte == carriageReturn ? .lastLineFeed : .trailerLine
        case .trailerLine:
            if byte == carriageReturn { state = .trailerLineFeed }
            return byte == lineFeed ? .leftToDecoder : .reading
        case .trailerLineFeed:
            guard byte == lineFeed else { return .leftToDecoder }
            state = .trailerLineStart
        case .lastLineFeed:
            return byte == lineFeed ? .ended(consumed: 0) : .leftToDecoder
        }
        return .reading
    }

    /// One `byte` of a chunk's size line, after `digits` hexadecimal digits worth `value`.
    private mutating func sizeDigit(_ byte: UInt8, digits: Int, value: Int) -> Verdict {
        if let digit = QueryString.hexValue(byte) {
            guard digits < Self.maximumSizeDigits else { return .tooLarge(overflow: true) }
            state = .size(digits: digits + 1, value: value << 4 | Int(digit))
            return .reading
        }
        let carriageReturn = UInt8(ascii: "\r")
        guard digits > 0, byte == carriageReturn || byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == 9
        else { return .leftToDecoder }
        // The size is whole: judged before its line's end, which a client may hold back.
        guard announced + value <= limit else { return .tooLarge(overflow: false) }
        state = byte == carriageReturn ? .sizeLineFeed(value: value) : .sizeExtension(value: value)
        return .reading
    }
}
