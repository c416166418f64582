"""R4's rules for how a QuestionnaireResponse's items nest (``Questionnaire.item.repeats``,
``QuestionnaireResponse.item``): a repeating group is several response items with the same linkId,
one per repetition, side by side in order; any other item appears at most once among its siblings;
a repeating question has several ``answer`` entries in one item, a question that does not repeat
at most one; a group has no ``answer``; items appear in the Questionnaire's order, each under its
own parent. Written from the specification, not from the engine; used by the binding's
repetition tests and the web service's browser tests (web/tests/test_browser_repeats.py)."""

from typing import Any, Dict, List


def check_r4_shape(response: Dict[str, Any], questionnaire: Dict[str, Any]) -> None:
    """The response's items nest as R4 says for the Questionnaire (see the module's rules)."""

    def check(items: List[Dict[str, Any]], defined: List[Dict[str, Any]], where: str) -> None:
        order = [d["linkId"] for d in defined]
        by_id = {d["linkId"]: d for d in defined}
        seen: List[str] = []
        for position, item in enumerate(items):
            link = item["linkId"]
            assert link in by_id, f"{where}: {link} is not an item here"
            definition = by_id[link]
            repeats = definition.get("repeats") in (True, "true")
            if seen and seen[-1] == link:
                assert definition["type"] == "group" and repeats, f"{where}: {link} repeated but is no repeating group"
            else:
                assert link not in seen, f"{where}: the repetitions of {link} are not side by side"
                if seen:
                    assert order.index(link) > order.index(seen[-1]), f"{where}: {link} is out of the Questionnaire's order"
            seen.append(link)
            here = f"{where}.item[{position}]"
            if definition["type"] == "group":
                assert "answer" not in item, f"{here}: a group has no answer"
                assert item.get("item"), f"{here}: an empty group is left out"
                check(item["item"], definition.get("item", []), here)
            else:
                answers = item.get("answer", [])
                assert answers, f"{here}: a question item without answers is left out"
                if not repeats:
                    assert len(answers) == 1, f"{here}: {link} does not repeat but has {len(answers)} answers"
                nested = [a for a in answers if "item" in a]
                for a in nested:
                    check(a["item"], definition.get("item", []), here + ".answer")

    assert response["resourceType"] == "QuestionnaireResponse"
    check(response.get("item", []), questionnaire.get("item", []), "QuestionnaireResponse")
