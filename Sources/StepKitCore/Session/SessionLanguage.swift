import StepKitBase

/// The participant's language (session option `language`, `stepkit_session_set_language`): the
/// tag the host asked for, the declared language the task's texts are shown in (`fr-CA` → `fr`
/// → the task's default), the language of the engine's messages, and every text language the
/// run has been shown in, in the order first used (the result's `languages`).
struct SessionLanguage: Sendable, Equatable {
    var requested: String?
    var text: String
    var messages: String
    var used: [String]

    /// The language for `requested` on `task` (the task the handle holds, in its default language),
    /// with the host's message catalogues `hosted` beside the shipped ones.
    static func resolve(_ requested: String?, task: Task, hosted: [String: MessageCatalogue], used: [String] = []) -> SessionLanguage {
        let text = requested.map { task.languages.resolve($0) } ?? task.languages.defaultLanguage
        let available = Set(hosted.keys).union(MessageCatalogue.shipped.keys)
        let messages = requested.flatMap { LanguageTag.lookup($0, in: available) } ?? LanguageTag.lookup(text, in: available) ?? "en"
        return SessionLanguage(requested: requested, text: text, messages: messages, used: used.contains(text) ? used : used + [text])
    }

    /// As restoration data and the state name it.
    var json: JSON {
        .object([
            "requested": .string(requested), "text": .string(text), "messages": .string(messages),
            "used": .array(used.map { .string($0) }),
        ])
    }
}

extension Session {
    /// Whether the state, the result and restoration data name the language: only when the
    /// task declares languages or the host asked for one (other runs read as they always did).
    var showsLanguage: Bool { home.languages.isDeclared || language.requested != nil }

    /// The catalogue the session's messages are written from: the host's for the language, else
    /// the shipped one, else English.
    var messageCatalogue: MessageCatalogue {
        options.messageCatalogues[language.messages] ?? MessageCatalogue.shipped[language.messages] ?? .english
    }

    /// Whether `messageCatalogue` is the shipped English one, in which a problem's message reads
    /// as it was made (`Problem.init(code:text:...)` renders it in English): the state writer
    /// then does not render every message a second time.
    var messagesInShippedEnglish: Bool {
        options.messageCatalogues[language.messages] == nil
            && (language.messages == "en" || MessageCatalogue.shipped[language.messages] == nil)
    }

    /// Shows the task's texts and the engine's messages in `tag` from now on (`fr-CA` falls back
    /// to `fr`, then to the task's default language). Every answer, visit and date stays: the
    /// task in another language has the same steps in the same order, only other texts.
    /// A tag that is not BCP-47 is refused, changing nothing.
    package mutating func setLanguage(_ tag: String) throws(StepKitError) {
        guard let canonical = LanguageTag.canonical(tag) else {
            throw StepKitError(.invalidArgument, code: "invalidLanguage", message: "\"\(tag)\" is not a BCP-47 language tag (such as \"en\", \"de\" or \"fr-CA\").")
        }
        let chosen = SessionLanguage.resolve(canonical, task: home, hosted: options.messageCatalogues, used: language.used)
        adopt(chosen)
        emit("languageDidChange", ["language": .string(chosen.text), "messages": .string(chosen.messages)])
        // What a list offers depends on answers, not texts (conditions read no language), so a
        // switch removes nothing today; checked all the same, so that no selection outlives its
        // choice whatever a condition comes to read.
        removeUnavailableChoices()
        _checkInvariants()
    }

    /// Takes `language` on: the task in its text language.
    mutating func adopt(_ language: SessionLanguage) {
        self.language = language
        task = home.translated(to: language.text)
    }

    /// After a restore: the language the host asks for now (`requested`) or else the one saved
    /// (`saved`, the `language` member; absent in data saved without one), keeping the languages
    /// used so far. Saved data that is not a language is refused as damaged.
    mutating func restoreLanguage(_ saved: JSON?, requested: String?) throws(StepKitError) {
        var savedRequest: String?
        var used: [String] = []
        if let saved, !saved.isNull {
            guard let object = saved.objectValue, let list = object["used"]?.arrayValue,
                  list.allSatisfy({ $0.stringValue.flatMap(LanguageTag.canonical) != nil }) else {
                throw Restoration.refuse("damaged", "The saved language is not valid.", .root.key("language"))
            }
            used = list.compactMap { $0.stringValue.flatMap(LanguageTag.canonical) }
            savedRequest = object["requested"]?.stringValue.flatMap(LanguageTag.canonical)
        }
        guard requested != nil || savedRequest != nil || !used.isEmpty else { return }
        let chosen = SessionLanguage.resolve(requested ?? savedRequest, task: home, hosted: options.messageCatalogues, used: used)
        adopt(chosen)
    }
}

extension StepKitError {
    /// The error with its participant messages in `catalogue`'s language.
    func localized(_ catalogue: MessageCatalogue) -> StepKitError {
        guard problems.contains(where: { $0.text != nil }) else { return self }
        return StepKitError(status, problems: problems.map { $0.localized(catalogue) })
    }
}
