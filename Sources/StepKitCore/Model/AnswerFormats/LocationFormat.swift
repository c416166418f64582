import StepKitBase

/// `location`: a place, as coordinates the host's map or geocoder produced
/// (ResearchKit's `ORKLocationAnswerFormat`).
struct LocationFormat: AnswerFormatRules {
    var resultType: ResultType { .location }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        r.accept(bools: ["useCurrentLocation"])
        r.accept(strings: ["placeholder"])
        return LocationFormat()
    }

    private static let numberKeys = ["latitude", "longitude", "altitude", "horizontalAccuracy", "verticalAccuracy"]
    private static let textKeys = ["address", "userInput"]

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .object(let place) = answer else {
            throw AnswerRejection("wrongType", "A location is an object with \"latitude\" and \"longitude\".")
        }
        for key in place.keys where !Self.numberKeys.contains(key) && !Self.textKeys.contains(key) {
            throw AnswerRejection("unknownKey", "A location has no field \"\(key)\".")
        }
        for key in Self.numberKeys {
            if let v = place[key], v.numericValue == nil {
                throw AnswerRejection("wrongType", "The location's \"\(key)\" must be a number.")
            }
        }
        for key in Self.textKeys {
            if let v = place[key], v.stringValue == nil {
                throw AnswerRejection("wrongType", "The location's \"\(key)\" must be text.")
            }
        }
        guard let latitude = place["latitude"]?.numericValue, let longitude = place["longitude"]?.numericValue else {
            throw AnswerRejection("missingKey", "A location needs both \"latitude\" and \"longitude\".")
        }
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw AnswerRejection("outOfRange", "Latitude must be between -90 and 90 and longitude between -180 and 180.")
        }
        for key in ["horizontalAccuracy", "verticalAccuracy"] {
            if let v = place[key]?.numericValue, v < 0 {
                throw AnswerRejection("outOfRange", "The location's \"\(key)\" cannot be negative.")
            }
        }
        return answer
    }
}
