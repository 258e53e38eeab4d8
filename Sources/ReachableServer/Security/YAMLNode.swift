import CYAML

/// One node of a YAML document, with the line it starts on (1-based), as libyaml's parser reads
/// it. Only what a web config is made of: scalars, mappings (entries in file order, so a key
/// given twice is seen) and sequences. Anchors and aliases are refused: a web config has no use
/// for them, and an alias is how a tiny file expands into a huge one.
indirect enum YAMLNode {
    /// A scalar's text; `isPlain` when it was written without quotes or a block style (only then
    /// can it mean null).
    case scalar(String, isPlain: Bool, line: Int)
    case mapping([(key: YAMLNode, value: YAMLNode)], line: Int)
    case sequence([YAMLNode], line: Int)

    var line: Int {
        switch self {
        case .scalar(_, _, let line), .mapping(_, let line), .sequence(_, let line): line
        }
    }

    /// `~`, `null`, or nothing at all (YAML's plain null scalars).
    var isNull: Bool {
        guard case .scalar(let text, true, _) = self else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(text)
    }

    /// The first document of `text`, or `nil` for an empty stream; a second document is refused.
    ///
    /// - Throws: `YAMLError` with libyaml's problem and line.
    static func parse(_ text: String) throws(YAMLError) -> YAMLNode? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw YAMLError("the YAML parser could not start", line: nil)
        }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (input) throws(YAMLError) -> YAMLNode? in
            yaml_parser_set_input_string(&parser, input.baseAddress, input.count)
            var composer = Composer()
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    let problem = parser.problem.map { String(cString: $0) } ?? "unreadable"
                    let context = parser.context.map { String(cString: $0) + " " } ?? ""
                    throw YAMLError(context + problem, line: Int(parser.problem_mark.line) + 1)
                }
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { return composer.document }
                try composer.take(event)
            }
        }
    }

    /// Builds nodes from the parser's events with a stack of the collections still open.
    private struct Composer {
        private enum Open {
            case mapping([(key: YAMLNode, value: YAMLNode)], pendingKey: YAMLNode?, line: Int)
            case sequence([YAMLNode], line: Int)
        }

        private var open: [Open] = []
        private(set) var document: YAMLNode?
        private var documents = 0

        mutating func take(_ event: yaml_event_t) throws(YAMLError) {
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                guard documents == 1 else { throw YAMLError("only one YAML document is read", line: line) }
            case YAML_ALIAS_EVENT:
                throw YAMLError("anchors and aliases are not supported", line: line)
            case YAML_SCALAR_EVENT:
                if event.data.scalar.anchor != nil {
                    throw YAMLError("anchors and aliases are not supported", line: line)
                }
                let scalar = event.data.scalar
                let text = String(
                    decoding: UnsafeBufferPointer(start: scalar.value, count: Int(scalar.length)), as: UTF8.self)
                try add(.scalar(text, isPlain: scalar.style == YAML_PLAIN_SCALAR_STYLE, line: line))
            case YAML_MAPPING_START_EVENT:
                if event.data.mapping_start.anchor != nil {
                    throw YAMLError("anchors and aliases are not supported", line: line)
                }
                open.append(.mapping([], pendingKey: nil, line: line))
            case YAML_SEQUENCE_START_EVENT:
                if event.data.sequence_start.anchor != nil {
                    throw YAMLError("anchors and aliases are not supported", line: line)
                }
                open.append(.sequence([], line: line))
            case YAML_MAPPING_END_EVENT, YAML_SEQUENCE_END_EVENT:
                switch open.popLast() {
                case .mapping(let entries, _, let start): try add(.mapping(entries, line: start))
                case .sequence(let items, let start): try add(.sequence(items, line: start))
                case nil: throw YAMLError("a collection ends that never began", line: line)
                }
            default:
                break  // stream and document boundaries
            }
        }

        private mutating func add(_ node: YAMLNode) throws(YAMLError) {
            switch open.popLast() {
            case nil:
                document = node
            case .sequence(var items, let line):
                items.append(node)
                open.append(.sequence(items, line: line))
            case .mapping(var entries, let pendingKey, let line):
                if let key = pendingKey {
                    entries.append((key, node))
                    open.append(.mapping(entries, pendingKey: nil, line: line))
                } else {
                    open.append(.mapping(entries, pendingKey: node, line: line))
                }
            }
        }
    }
}

/// The text is not YAML libyaml can read (or uses what the web config refuses).
struct YAMLError: Error {
    var problem: String
    /// 1-based.
    var line: Int?

    init(_ problem: String, line: Int?) {
        self.problem = problem
        self.line = line
    }
}
