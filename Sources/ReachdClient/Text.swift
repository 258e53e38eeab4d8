extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    package var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
