extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace, and the spaces
    /// around comma-separated option items): the one trimming rule of every module.
    package var trimmed: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
