/// Git's conflict markers: written around what a merge could not settle, and recognised in a file a person has
/// not settled yet, so that `status` can show both sides instead of a JSON syntax error.
package enum ConflictMarkers {
    static let ours = "<<<<<<< ours"
    static let separator = "======="
    static let theirs = ">>>>>>> theirs"

    /// The two texts, lines they share at the start and the end written once and the rest between markers (the
    /// two are canonical JSON of the same record, so what differs is the conflicting properties).
    package static func render(ours: String, theirs: String) -> String {
        let oursLines = ours.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let theirsLines = theirs.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var prefix = 0
        while prefix < min(oursLines.count, theirsLines.count), oursLines[prefix] == theirsLines[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < min(oursLines.count, theirsLines.count) - prefix,
            oursLines[oursLines.count - 1 - suffix] == theirsLines[theirsLines.count - 1 - suffix]
        { suffix += 1 }
        var lines = Array(oursLines[..<prefix])
        lines.append(Self.ours)
        lines += oursLines[prefix..<(oursLines.count - suffix)]
        lines.append(Self.separator)
        lines += theirsLines[prefix..<(theirsLines.count - suffix)]
        lines.append(Self.theirs)
        lines += oursLines[(oursLines.count - suffix)...]
        return lines.joined(separator: "\n")
    }

    /// The first unsettled conflict in `text`: the line of its opening marker and each side's lines; `nil` when
    /// `text` has no opening marker at the start of a line.
    static func firstConflict(in text: String) -> (line: Int, ours: [String], theirs: [String])? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("<<<<<<<") }) else { return nil }
        enum Section { case ours, base, theirs }
        var ours: [String] = []
        var theirs: [String] = []
        var section = Section.ours
        for line in lines[(start + 1)...] {
            if line.hasPrefix(">>>>>>>") { break }
            // diff3 style: the base, between ||||||| and =======, belongs to neither side.
            if line.hasPrefix("|||||||") {
                section = .base
                continue
            }
            if line.hasPrefix("=======") {
                section = .theirs
                continue
            }
            switch section {
            case .ours: ours.append(String(line))
            case .base: break
            case .theirs: theirs.append(String(line))
            }
        }
        return (start + 1, ours, theirs)
    }
}
