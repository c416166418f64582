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
            throw AnswerRejection("wrongType", "location.wrongType")
        }
        for key in place.keys where !Self.numberKeys.contains(key) && !Self.textKeys.contains(key) {
            throw AnswerRejection("unknownKey", "location.unknownField", ["field": .text(key)])
        }
        for key in Self.numberKeys {
            if let v = place[key], v.numericValue == nil {
                throw AnswerRejection("wrongType", "location.notANumber", ["field": .text(key)])
            }
        }
        for key in Self.textKeys {
            if let v = place[key], v.stringValue == nil {
                throw AnswerRejection("wrongType", "location.notText", ["field": .text(key)])
            }
        }
        guard let latitude = place["latitude"]?.numericValue, let longitude = place["longitude"]?.numericValue else {
            throw AnswerRejection("missingKey", "location.missingCoordinates")
        }
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw AnswerRejection("outOfRange", "location.outOfRange")
        }
        for key in ["horizontalAccuracy", "verticalAccuracy"] {
            if let v = place[key]?.numericValue, v < 0 {
                throw AnswerRejection("outOfRange", "location.negative", ["field": .text(key)])
            }
        }
        return answer
    }
}
