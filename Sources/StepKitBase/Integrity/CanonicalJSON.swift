/// The canonical form of a JSON value, so that two texts of the same definition name it the same
/// way: object keys sorted by their UTF-8 bytes, and every number that is a whole number written
/// as an integer (`10`, `10.0` and `1e1` are one value). Arrays keep their order; strings are
/// compared as parsed (escapes such as `\u00e9` already decoded). A database that stores a task
/// as `jsonb` (keys reordered, numbers re-written, whitespace dropped) keeps its fingerprint.
///
/// The walk is as deep as the value, which the parser's depth limit bounds (`InputLimits`).
package enum CanonicalJSON {
    static func form(_ value: JSON) -> JSON {
        switch value {
        case .double(let d):
            // Whole numbers that an Int64 holds exactly become integers (-0.0 is 0).
            if d.isFinite, d == d.rounded(), d >= -9.223372036854775808e18, d < 9.223372036854775808e18 {
                return .int(Int64(d))
            }
            return value
        case .array(let items):
            return .array(items.map(form))
        case .object(let object):
            var sorted = JSONObject()
            let keys = object.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for key in keys {
                if let item = object[key] { sorted[key] = form(item) }
            }
            return .object(sorted)
        default:
            return value
        }
    }

    /// The canonical form as compact text (JSONWriter writes reals so they read back exactly).
    package static func text(_ value: JSON) -> String {
        JSONWriter.string(form(value))
    }
}
