import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Tasks in several languages, the session's language, and the engine's messages in it.
@Suite struct LanguageTests {
    static let mood = #"""
    {"identifier": "mood", "defaultLanguage": "en", "languages": ["en", "fr", "de"],
     "steps": [
      {"type": "question", "identifier": "feel", "title": {"en": "Mood", "fr": "Humeur", "de": "Stimmung"},
       "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [
         {"text": {"en": "Good", "fr": "Bien", "de": "Gut"}, "value": 1},
         {"text": {"en": "Bad", "fr": "Mal"}, "value": 2}]}},
      {"type": "question", "identifier": "age", "question": {"en": "Your age?", "fr": "Votre âge ?", "de": "Ihr Alter?"},
       "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90}},
      {"type": "completion", "identifier": "done", "title": "OK"}]}
    """#

    func open(_ options: String = "{}") throws -> Session {
        Session(task: try compile(Self.mood), options: try SessionOptions.parse(try json(options)), clock: ManualClock(1_700_000_000_000).clock)
    }

    func title(_ s: Session) -> String? {
        s.stateJSON().objectValue?["step"]?.objectValue?["title"]?.stringValue
    }

    func choiceTexts(_ s: Session) -> [String] {
        s.stateJSON().objectValue?["step"]?.objectValue?["answerFormat"]?.objectValue?["textChoices"]?.arrayValue?
            .compactMap { $0.objectValue?["text"]?.stringValue } ?? []
    }

    @Test func textsFollowTheLanguageWithFallback() throws {
        #expect(title(try open()) == "Mood")
        let fr = try open(#"{"language": "fr"}"#)
        #expect(title(fr) == "Humeur")
        #expect(choiceTexts(fr) == ["Bien", "Mal"])
        // fr-CA is not declared: fr is.
        #expect(title(try open(#"{"language": "fr-CA"}"#)) == "Humeur")
        // German lacks "Bad": that one text falls back to the default language.
        #expect(choiceTexts(try open(#"{"language": "DE"}"#)) == ["Gut", "Bad"])
        // A language the task does not declare: the default.
        #expect(title(try open(#"{"language": "ja"}"#)) == "Mood")
        let state = try open(#"{"language": "fr-CA"}"#).stateJSON().objectValue?["language"]
        #expect(state == (try json(#"{"requested": "fr-CA", "text": "fr", "messages": "en", "used": ["fr"], "available": ["en", "fr", "de"]}"#)))
    }

    @Test func switchingKeepsEveryAnswerAndTheResultNamesTheLanguages() throws {
        var s = try open(#"{"language": "fr"}"#)
        try s.setAnswer(try json("[2]"))
        try s.goForward()
        try s.setAnswer(.int(40))
        let before = s.resultJSON()
        try s.setLanguage("de")
        // The same results as before the switch, but for the languages.
        #expect(s.resultJSON().objectValue?["results"] == before.objectValue?["results"])
        #expect(title(s) == nil)  // the age question has no title
        #expect(s.stateJSON().objectValue?["step"]?.objectValue?["question"]?.stringValue == "Ihr Alter?")
        #expect(s.stateJSON().objectValue?["answer"] == .int(40))
        try s.goBackward()
        #expect(s.stateJSON().objectValue?["answer"] == (try json("[2]")))
        #expect(choiceTexts(s) == ["Gut", "Bad"])
        let after = s.resultJSON()
        #expect(after.objectValue?["languages"] == (try json(#"["fr", "de"]"#)))
        #expect(after.objectValue?["language"] == .string("de"))
        #expect(s.pendingEvents.contains { $0.objectValue?["type"] == .string("languageDidChange") })
    }

    @Test func aTagThatIsNotBCP47ChangesNothing() throws {
        var s = try open(#"{"language": "fr"}"#)
        let before = s.stateJSON()
        for bad in ["", "f", "fr_CA", "français", "fr--CA", "toolongtag-x"] {
            #expect(throws: StepKitError.self) { try s.setLanguage(bad) }
            #expect(s.stateJSON() == before)
        }
        #expect(throws: StepKitError.self) { _ = try SessionOptions.parse(try json(#"{"language": "en US"}"#)) }
    }

    @Test func definitionErrors() throws {
        func codes(_ text: String) -> [String] { problems(text).map(\.code) }
        let step = #"{"type": "instruction", "identifier": "i", "title": TITLE}"#
        func task(_ head: String, _ title: String) -> String {
            let parts = step.split(separator: "TITLE", omittingEmptySubsequences: false).map(String.init)
            return "{\"identifier\": \"t\", \(head) \"steps\": [" + parts.joined(separator: title) + "]}"
        }
        #expect(codes(task(#""languages": ["en", "fr"],"#, #"{"fr": "Bonjour"}"#)) == ["missingDefaultLanguage"])
        #expect(codes(task(#""languages": ["en"],"#, #"{"en": "Hi", "fr": "Salut"}"#)) == ["undeclaredLanguage"])
        #expect(codes(task(#""languages": ["en"],"#, #"{"en": "Hi", "e n": "Salut"}"#)) == ["invalidLanguage"])
        #expect(codes(task(#""languages": ["en"],"#, #"{"en": 3}"#)) == ["wrongType", "missingDefaultLanguage"])
        #expect(codes(task(#""defaultLanguage": "english!","#, #""Hi""#)) == ["invalidLanguage"])
        #expect(codes(task(#""defaultLanguage": "de", "languages": ["en"],"#, #""Hi""#)) == ["defaultLanguageNotListed"])
        #expect(codes(task(#""languages": [],"#, #""Hi""#)) == ["wrongType"])
        #expect(codes(task(#""languages": ["en", "EN"],"#, #""Hi""#)) == ["duplicateLanguage"])
        // Without any declaration a text object is English.
        #expect(codes(task("", #"{"en": "Hi"}"#)) == [])
    }

    @Test func checkerReportsMissingTranslations() throws {
        let found = try findings(Self.mood)
        #expect(found.contains(Finding(severity: "warning", code: "missingTranslation", path: "steps[0].answerFormat.textChoices[1].text")))
        #expect(found.filter { $0.code == "missingTranslation" }.count == 1)
    }

    @Test func restoreKeepsTheLanguage() throws {
        var s = try open(#"{"language": "fr"}"#)
        try s.setAnswer(try json("[1]"))
        try s.setLanguage("de")
        let saved = try Restoration.saveText(s)
        let task = s.home
        func restore(_ options: SessionOptions) throws -> Session {
            try saved.withCString { p in
                Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: task, options: options, clock: .system) }
            }.get()
        }
        let back = try restore(SessionOptions())
        #expect(back.language == s.language)
        #expect(choiceTexts(back) == ["Gut", "Bad"])
        let asked = try restore(try SessionOptions.parse(try json(#"{"language": "fr"}"#), restoring: true))
        #expect(choiceTexts(asked) == ["Bien", "Mal"])
        #expect(asked.language.used == ["fr", "de"])
    }

    // MARK: Messages

    @Test func shippedCataloguesAreComplete() {
        for (tag, catalogue) in MessageCatalogue.shipped {
            #expect(catalogue.problems(at: .root).isEmpty, "\(tag): \(catalogue.problems(at: .root).map(\.message))")
            #expect(catalogue.entries.keys.sorted() == MessageCatalogue.english.entries.keys.sorted())
        }
    }

    @Test func aCatalogueLackingAKeyOrAnArgumentIsRefused() throws {
        var english = MessageCatalogue.english.entries
        english["choice.chosenTwice"] = .text("Chosen twice.")
        #expect(MessageCatalogue(language: "xx", english).problems(at: .root).map(\.code) == ["missingArgument"])
        english["choice.chosenTwice"] = .text("{choice} {which} twice.")
        #expect(MessageCatalogue(language: "xx", english).problems(at: .root).map(\.code) == ["unknownArgument"])
        english["choice.chosenTwice"] = nil
        #expect(MessageCatalogue(language: "xx", english).problems(at: .root).map(\.code) == ["missingMessage"])
        english = MessageCatalogue.english.entries
        english["no.such.key"] = .text("x")
        #expect(MessageCatalogue(language: "xx", english).problems(at: .root).map(\.code) == ["unknownMessage"])
    }

    func refusal(_ options: String, _ answer: String) throws -> String {
        let store = try SessionStore(try open(options), autosavePath: nil)
        let value = try json(answer)
        let outcome = Result { () throws(StepKitError) in
            try store.transaction { (s: inout Session) throws(StepKitError) in try s.setAnswer(value) }
        }
        guard case .failure(let error) = outcome else { return "" }
        return error.problems.first?.message ?? ""
    }

    @Test func refusalsInTheParticipantsLanguage() throws {
        #expect(try refusal("{}", "[1, 1]") == "\"Good\" is chosen twice.")
        #expect(try refusal(#"{"language": "de"}"#, "[1, 1]") == "\"Gut\" ist zweimal gewählt.")
        #expect(try refusal(#"{"language": "es-MX"}"#, "[1, 1]") == "\"Good\" está elegida dos veces.")
        #expect(try refusal(#"{"language": "de"}"#, "[7]") == "Die Zahl 7 ist kein Wert einer Auswahl; die Werte sind die Zahlen 1, 2.")
        #expect(try refusal(#"{"language": "es"}"#, #""x""#) == "Responda con un array que contenga el único valor elegido.")
    }

    @Test func aHostCatalogueForAnyLanguage() throws {
        var fr = MessageCatalogue.english.json.objectValue ?? JSONObject()
        fr["choice.chosenTwice"] = .string("« {choice} » est choisi deux fois.")
        let options = JSONWriter.string(.object(["language": .string("fr"), "messages": .object(["fr": .object(fr)])]))
        #expect(try refusal(options, "[1, 1]") == "« Bien » est choisi deux fois.")
        // Missing an argument, or with one it does not have: the session is not opened.
        fr["choice.chosenTwice"] = .string("Choisi deux fois.")
        #expect(throws: StepKitError.self) { _ = try SessionOptions.parse(.object(["messages": .object(["fr": .object(fr)])])) }
        fr["choice.chosenTwice"] = .string("{choice} {x}")
        #expect(throws: StepKitError.self) { _ = try SessionOptions.parse(.object(["messages": .object(["fr": .object(fr)])])) }
        #expect(throws: StepKitError.self) { _ = try SessionOptions.parse(try json(#"{"messages": {"f r": {}}}"#)) }
    }

    @Test func pluralsAndNestedMessages() throws {
        let task = try questionTask(#"{"type": "text", "maximumLength": 1}"#)
        var s = Session(task: task, options: try SessionOptions.parse(try json(#"{"language": "de"}"#)))
        do { try s.setAnswer(.string("ab")) } catch { #expect(error.localized(s.messageCatalogue).problems[0].message == "Geben Sie höchstens 1 Zeichen ein.") }
        let numeric = try questionTask(#"{"type": "numeric", "style": "decimal", "minimum": 0, "maximum": 5, "unit": "kg", "maximumFractionDigits": 1}"#)
        s = Session(task: numeric, options: try SessionOptions.parse(try json(#"{"language": "es"}"#)))
        do { try s.setAnswer(.double(1.25)) } catch {
            #expect(error.problems[0].message == "Enter a number between 0 and 5, with at most 1 decimal place.")
            #expect(error.localized(s.messageCatalogue).problems[0].message == "Escriba un número entre 0 y 5, con como máximo 1 decimal.")
        }
    }
}

/// The FHIR importer reads the `translation` extension of item texts and answer displays.
@Suite struct FHIRTranslationTests {
    static let questionnaire = #"""
    {"resourceType": "Questionnaire", "id": "greet", "language": "en",
     "item": [
      {"linkId": "mood", "type": "choice", "text": "How are you?",
       "_text": {"extension": [
         {"url": "http://hl7.org/fhir/StructureDefinition/translation",
          "extension": [{"url": "lang", "valueCode": "fr"}, {"url": "content", "valueString": "Comment allez-vous ?"}]},
         {"url": "http://hl7.org/fhir/StructureDefinition/translation",
          "extension": [{"url": "lang", "valueCode": "de"}, {"url": "content", "valueString": "Wie geht es Ihnen?"}]}]},
       "answerOption": [
        {"valueCoding": {"code": "good", "display": "Good", "_display": {"extension": [
          {"url": "http://hl7.org/fhir/StructureDefinition/translation",
           "extension": [{"url": "lang", "valueCode": "fr"}, {"url": "content", "valueString": "Bien"}]}]}}},
        {"valueCoding": {"code": "bad", "display": "Bad"}}]}]}
    """#

    @Test func translationsBecomeLanguages() throws {
        let (task, _, definition) = try FHIRImporter.compile(try json(Self.questionnaire), options: FHIRImportOptions())
        #expect(definition.objectValue?["defaultLanguage"] == .string("en"))
        #expect(definition.objectValue?["languages"] == (try json(#"["en", "de", "fr"]"#)))
        let fr = Session(task: task, options: try SessionOptions.parse(try json(#"{"language": "fr"}"#)))
        let step = fr.stateJSON().objectValue?["step"]?.objectValue
        #expect(step?["title"] == .string("Comment allez-vous ?"))
        #expect(step?["answerFormat"]?.objectValue?["textChoices"]?.arrayValue?.compactMap { $0.objectValue?["text"]?.stringValue } == ["Bien", "Bad"])
        let de = Session(task: task, options: try SessionOptions.parse(try json(#"{"language": "de"}"#)))
        #expect(de.stateJSON().objectValue?["step"]?.objectValue?["title"] == .string("Wie geht es Ihnen?"))
        // The checker names the displays without a German text.
        #expect(TaskChecker.check(task).objectValue?["problems"]?.arrayValue?.contains { $0.objectValue?["code"] == .string("missingTranslation") } == true)
        // Exported answers are the same in any language.
        var session = de
        try session.setAnswer(try json(#"["good"]"#))
        #expect(session.resultJSON().objectValue?["languages"] == (try json(#"["de"]"#)))
    }

    @Test func aQuestionnaireWithoutTranslationsDeclaresNoLanguage() throws {
        let plain = #"{"resourceType": "Questionnaire", "item": [{"linkId": "a", "type": "boolean", "text": "Yes?"}]}"#
        let (_, _, definition) = try FHIRImporter.compile(try json(plain), options: FHIRImportOptions())
        #expect(definition.objectValue?["languages"] == nil)
    }
}
