extension StringProtocol {
    /// Without leading and trailing spaces, tabs and carriage returns (HTTP's optional whitespace,
    /// the spaces around comma-separated option items, a targets file written on Windows): the
    /// one trimming rule of every module.
    package var trimmed: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
