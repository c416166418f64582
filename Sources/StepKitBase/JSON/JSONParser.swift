import CJansson

/// Text to `JSON`, through jansson. Strict: invalid UTF-8, duplicate keys, NUL characters,
/// numbers out of range and nesting deeper than jansson's limit (2048) are refused.
package enum JSONParser {
    package static func parse(_ text: String) throws(StepKitError) -> JSON {
        let result = text.withCString { pointer in
            Result { () throws(StepKitError) -> JSON in try parse(cString: pointer) }
        }
        return try result.get()
    }

    /// Parses bytes handed across the C boundary: the plainest texts directly (`PlainJSON`),
    /// the rest through jansson, which validates the UTF-8 itself, so invalid bytes are refused
    /// rather than silently repaired.
    static func parse(cString: UnsafePointer<CChar>) throws(StepKitError) -> JSON {
        if let plain = PlainJSON.parse(cString) { return plain }
        return try parseWithJansson(cString: cString)
    }

    /// A host's `text` within `limits`: read by `PlainJSON` when it takes it (it takes nothing
    /// past a limit), else checked against the limits (`InputLimits.checkText`, whose errors
    /// name `argument`) and parsed by jansson, so the one pass over the text before parsing is
    /// made only when jansson, whose parse recurses, is to parse it.
    package static func parse(cString text: UnsafePointer<CChar>, within limits: InputLimits, argument: String) throws(StepKitError) -> JSON {
        if let plain = PlainJSON.parse(text, within: limits) { return plain }
        try limits.checkText(text, argument: argument)
        return try parseWithJansson(cString: text)
    }

    /// The whole parse through jansson, for every text `PlainJSON` does not take.
    package static func parseWithJansson(_ text: TextBytes) throws(StepKitError) -> JSON {
        try parseWithJansson(cString: text.cString)
    }

    static func parseWithJansson(cString: UnsafePointer<CChar>) throws(StepKitError) -> JSON {
        var error = json_error_t()
        let flags = sk_json_flag_decode_any() | sk_json_flag_reject_duplicates()
        guard let root = json_loads(cString, flags, &error) else {
            let reported = withUnsafeBytes(of: &error.text) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let location = error.line > 0 ? " (line \(error.line), column \(error.column))" : ""
            // jansson names its own flag here; say what it means instead.
            let text = reported.contains("JSON_ALLOW_NUL") ? "\\u0000 (a NUL character) is not allowed in strings" : reported
            throw StepKitError(.parse, code: "invalidJSON", message: "Invalid JSON: " + text + location + ".")
        }
        defer { sk_json_decref(root) }
        return convert(root)
    }

    /// jansson's tree to `JSON`, releasing each converted child from jansson's tree on the way
    /// (the parse owns the only reference). Recursive: the depth was bounded before parsing.
    private static func convert(_ value: UnsafeMutablePointer<json_t>) -> JSON {
        switch sk_json_typeof(value) {
        case JSON_OBJECT:
            var object = JSONObject(reservingCapacity: json_object_size(value))
            var iter = json_object_iter(value)
            while let it = iter {
                if let keyPointer = json_object_iter_key(it), let child = json_object_iter_value(it) {
                    // jansson refused duplicate keys (JSON_REJECT_DUPLICATES): no look-up needed.
                    object.appendNew(String(cString: keyPointer), convert(child))
                    // Free jansson's copy of the child as soon as it is converted, so the two
                    // trees never both hold the whole document (json_null() is a static).
                    json_object_iter_set_new(value, it, json_null())
                }
                iter = json_object_iter_next(value, it)
            }
            return .object(object)
        case JSON_ARRAY:
            let count = json_array_size(value)
            var items: [JSON] = []
            items.reserveCapacity(count)
            var i = 0
            while i < count {
                if let child = json_array_get(value, i) {
                    items.append(convert(child))
                    json_array_set_new(value, i, json_null())
                }
                i += 1
            }
            return .array(items)
        case JSON_STRING:
            guard let chars = json_string_value(value) else { return .string("") }
            let length = json_string_length(value)
            return chars.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                .string(String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self))
            }
        case JSON_INTEGER:
            return .int(Int64(json_integer_value(value)))
        case JSON_REAL:
            return .double(json_real_value(value))
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        default:
            return .null
        }
    }
}
