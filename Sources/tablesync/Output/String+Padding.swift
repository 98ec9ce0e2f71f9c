extension String {
    /// The string padded with spaces to `width` characters, or followed by one space when it is as wide or wider:
    /// a column of `status` and `log` text that always stays apart from the next one.
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
