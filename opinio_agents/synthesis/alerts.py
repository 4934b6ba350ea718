"""Critical-complaint guard: serious problems are surfaced, never softened or dropped.

Seven categories (:data:`CRITICAL_CATEGORIES`): safety, hygiene, bed bugs, food
poisoning, theft, harassment, discrimination. Each has a lexicon of regular
expressions written for review language (spelling variants, inflections,
"bed bug" / "bedbugs" / "bug bites"). A match counts only when it is not negated
or hypothetical: a negation or doubt cue (``no``, ``not``, ``never``,
``without``, ``nothing``, ``didn't``, ``free of``, ``no sign of``, ``worried
about``, ``checked for``, ...) within the four words before the match, inside the
same clause, cancels it, as does a ``-free`` suffix ("bedbug-free").

Three entry points:

* :class:`CriticalComplaintCheck` is the one post-processing step every
  :class:`~opinio_agents.synthesis.summarizer.Summarizer` result goes through,
  exactly once: the guard on each query's outcome, then the entity's alerts.
* :func:`detect_alerts` scans all of an entity's sentences and returns one
  :class:`~opinio_agents.models.Alert` per category, with its support (number of
  distinct reviews) and a few example sentences.
* :func:`guard_highlights` checks one query's evidence: critical sentences must
  end up cited by a CON highlight (added if the synthesizer gave none) and are
  removed from any PRO; every change is recorded in the highlight's notes.

Example:
    >>> find_critical("We found bed bugs on the second night.")
    ['bed bugs']
    >>> find_critical("No bed bugs, and the room was spotless.")
    []
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from opinio_agents.errors import ConfigError
from opinio_agents.io.outputs import plural
from opinio_agents.models import SENTIMENT_THRESHOLD, Alert, Evidence, Highlight, Polarity, QueryEvidence, Sentence
from opinio_agents.synthesis.base import SynthesisOutcome

__all__ = [
    "CriticalCategory",
    "CRITICAL_CATEGORIES",
    "find_critical",
    "detect_alerts",
    "guard_highlights",
    "CriticalComplaintCheck",
    "GUARD_NOTE",
]

GUARD_NOTE = "critical-complaint guard"


@dataclass(frozen=True)
class CriticalCategory:
    """One category of serious complaint.

    Attributes:
        name: Category name (``"bed bugs"``).
        description: Alert text template; ``{reviews}`` is the number of reviews in words (``1 review``).
        con_text: Highlight text used when the guard has to add a CON.
        patterns: Regular expressions (case-insensitive) that signal the complaint.
    """

    name: str
    description: str
    con_text: str
    patterns: tuple[str, ...]

    def describe(self, n: int) -> str:
        """The alert text for ``n`` reviews, e.g. ``'Bed bugs reported in 1 review'``."""
        return self.description.format(reviews=plural(n, "review"))

    def compiled(self) -> list[re.Pattern[str]]:
        """The patterns, compiled."""
        return [re.compile(p, re.IGNORECASE) for p in self.patterns]


CRITICAL_CATEGORIES: tuple[CriticalCategory, ...] = (
    CriticalCategory(
        name="safety",
        description="Safety problems reported in {reviews}",
        con_text="Guests report safety concerns.",
        patterns=(
            r"\bunsafe\b", r"\bnot (?:feel |felt )?safe\b", r"\b(?:did|do|does)(?:n't|nt| not) feel safe\b",
            r"\bdangerous\b", r"\bhazard(?:s|ous)?\b",
            r"\bfire (?:alarm|exit)s? (?:did ?n[o']t|was ?n[o']t|were ?n[o']t|not) (?:work|working|accessible)",
            r"\bblocked fire exits?\b", r"\bcarbon monoxide\b", r"\bgas leak\b", r"\bexposed (?:electrical )?wires?\b",
            r"\b(?:door|lock)s? (?:would ?n[o']t|did ?n[o']t|does ?n[o']t|could ?n[o']t|wo ?n[o']t) (?:lock|close)\b",
            r"\bbroken (?:door )?locks?\b", r"\b(?:was|were|got) (?:mugged|assaulted|attacked|stabbed|shot)\b",
            r"\b(?:shooting|stabbing)s?\b", r"\belectric(?:al)? shock\b", r"\b(?:got|was|were) (?:injured|hurt)\b",
        ),
    ),
    CriticalCategory(
        name="hygiene",
        description="Hygiene problems (vermin, mould, soiled linen) reported in {reviews}",
        con_text="Guests report serious hygiene problems.",
        patterns=(
            r"\bfilth(?:y)?\b", r"\bunhygienic\b", r"\bunsanitary\b", r"\bcockroach(?:es)?\b", r"\broach(?:es)?\b",
            r"\brats?\b", r"\bmice\b", r"\bmouse droppings\b", r"\b(?:rat|mouse|rodent) droppings\b", r"\brodents?\b",
            r"\bmou?ld(?:y)?\b", r"\bmildew\b", r"\bmaggots?\b",
            r"\b(?:dirty|stained|soiled|bloody|blood[- ]stained) (?:sheets|linens?|bedding|pillows?|towels|mattress)\b",
            r"\b(?:sheets|linens?|bedding|pillows?|towels|mattress) (?:was|were)"
            r" (?:dirty|stained|soiled|not changed)\b",
            r"\b(?:hair|hairs) (?:in|on) (?:the |my |our )?(?:bed|sheets|food|soup|shower|bath|sink|pillow)s?\b",
            r"\b(?:urine|vomit|feces|faeces|excrement)\b", r"\bdisgustingly dirty\b",
        ),
    ),
    CriticalCategory(
        name="bed bugs",
        description="Bed bugs reported in {reviews}",
        con_text="Guests report bed bugs.",
        patterns=(r"\bbed[- ]?bugs?\b", r"\bbug bites?\b", r"\bbitten (?:by|all over)\b", r"\bbites all over\b"),
    ),
    CriticalCategory(
        name="food poisoning",
        description="Food poisoning or illness after eating reported in {reviews}",
        con_text="Guests report falling ill after eating here.",
        patterns=(
            r"\bfood[- ]poisoning\b", r"\bfood[- ]poisoned\b", r"\bsalmonella\b", r"\be\.? ?coli\b", r"\bnorovirus\b",
            r"\b(?:got|became|fell|were|was) (?:violently |very )?(?:sick|ill) (?:after|from)"
            r" (?:eating|the food|dinner|lunch|breakfast|the buffet|the meal)",
            r"\b(?:vomiting|diarrh(?:o)?ea|stomach bug)\b",
        ),
    ),
    CriticalCategory(
        name="theft",
        description="Theft reported in {reviews}",
        con_text="Guests report belongings stolen.",
        patterns=(
            r"\bstolen\b", r"\bstole\b", r"\btheft\b", r"\bthie(?:f|ves)\b", r"\brobbed\b", r"\brobbery\b",
            r"\bburglar(?:y|ized|ised)?\b", r"\bpickpocket(?:ed|s)?\b",
            r"\b(?:went|was|were|is|are) missing from (?:my|our|the) (?:room|safe|luggage|bag|suitcase)s?\b",
        ),
    ),
    CriticalCategory(
        name="harassment",
        description="Harassment reported in {reviews}",
        con_text="Guests report harassment.",
        patterns=(
            r"\bharass(?:ed|ing|ment)?\b", r"\bgrop(?:ed|ing)\b",
            r"\bsexual(?:ly)? (?:assault(?:ed)?|harass\w*|advances?)\b",
            r"\binappropriate (?:comments?|touching|behaviou?r|advances?)\b", r"\bverbal(?:ly)? abus\w*\b",
            r"\b(?:threatened|intimidated) (?:me|us|my|our)\b", r"\bstalk(?:ed|ing)\b",
        ),
    ),
    CriticalCategory(
        name="discrimination",
        description="Discrimination reported in {reviews}",
        con_text="Guests report discriminatory treatment.",
        patterns=(
            r"\bdiscriminat(?:ed|ion|ory|ing)\b", r"\bracis[tm]\b", r"\bracially\b", r"\bhomophobi[ac]\b",
            r"\btransphobi[ac]\b", r"\bsexist\b", r"\bxenophobi[ac]\b", r"\banti-?semiti[cs]m?\b",
            r"\b(?:refused|denied) (?:service|entry|us|me) because\b",
            r"\btreated (?:us |me )?(?:differently|worse) because\b",
        ),
    ),
)

_NEGATION_CUES = re.compile(
    r"\b(?:no|not|never|without|nothing|none|zero|nor|neither|nobody|any|if|whether|"
    r"\w+n't|\w+n’t|dont|didnt|doesnt|wasnt|werent|isnt|arent|havent|hadnt|couldnt|wouldnt|wont|cant|"
    r"free of|worried|worry|worries|afraid|fear|feared|concerned|concern|checked|check|inspected|"
    r"heard about|read about|reviews? about|reports? of|mentioned)\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[.;:!?]|\bbut\b|\bhowever\b|\bthough\b|\balthough\b", re.IGNORECASE)
_WORD = re.compile(r"\S+")

_COMPILED: list[tuple[CriticalCategory, list[re.Pattern[str]]]] = [(c, c.compiled()) for c in CRITICAL_CATEGORIES]
# Every pattern in one alternation: a sentence it does not match (almost all of them) is done in one scan.
_ANY_CRITICAL = re.compile(
    r"\b(?:" + "|".join(f"(?:{p[2:]})" for c in CRITICAL_CATEGORIES for p in c.patterns) + ")", re.IGNORECASE
)


def _negated(text: str, start: int, end: int) -> bool:
    if re.match(r"\s*-?\s*free\b", text[end:], re.IGNORECASE):
        return True
    before = text[:start]
    breaks = list(_CLAUSE_BREAK.finditer(before))
    if breaks:
        before = before[breaks[-1].end() :]
    window = " ".join(_WORD.findall(before)[-4:])
    return bool(_NEGATION_CUES.search(window))


def find_critical(text: str, categories: Sequence[CriticalCategory] | None = None) -> list[str]:
    """Names of the critical categories ``text`` reports (negated mentions excluded)."""
    if categories is None and _ANY_CRITICAL.search(text) is None:
        return []
    table = _COMPILED if categories is None else [(c, c.compiled()) for c in categories]
    found: list[str] = []
    for category, patterns in table:
        for pattern in patterns:
            if any(not _negated(text, m.start(), m.end()) for m in pattern.finditer(text)):
                found.append(category.name)
                break
    return found


def detect_alerts(
    sentences: Sequence[Sentence],
    sentiments: Sequence[float] | None = None,
    *,
    min_support: int = 1,
    max_examples: int = 3,
) -> list[Alert]:
    """One alert per critical category found in the entity's sentences.

    Args:
        sentences: All sentences of the entity (or any subset to scan).
        sentiments: Sentiment per sentence, copied onto the example evidence.
        min_support: Minimum number of distinct reviews for an alert.
        max_examples: Example sentences kept per alert.

    Returns:
        Alerts sorted by support (descending), then category name.

    Example:
        >>> from opinio_agents.models import Sentence
        >>> s = Sentence(sentence_id="1:9:0", entity_id="1", review_id="9", index=0,
        ...              text="Our wallet was stolen from the room.", start=0, end=36)
        >>> [(a.category, a.support) for a in detect_alerts([s])]
        [('theft', 1)]
    """
    if min_support < 1:
        raise ConfigError(f"min_support={min_support} must be >= 1")
    if sentiments is not None and len(sentiments) != len(sentences):
        raise ConfigError(
            f"sentiments has {len(sentiments)} values for {len(sentences)} sentences; give one per sentence or None"
        )
    reviews: dict[str, set[str]] = {}
    examples: dict[str, list[Evidence]] = {}
    for i, sentence in enumerate(sentences):
        for name in find_critical(sentence.text):
            reviews.setdefault(name, set()).add(sentence.review_id)
            bucket = examples.setdefault(name, [])
            if len(bucket) < max_examples and all(e.sentence_id != sentence.sentence_id for e in bucket):
                bucket.append(
                    Evidence(
                        sentence_id=sentence.sentence_id,
                        text=sentence.text,
                        sentiment=None if sentiments is None else float(sentiments[i]),
                    )
                )
    by_name = {c.name: c for c in CRITICAL_CATEGORIES}
    alerts = [
        Alert(
            category=name,
            description=by_name[name].describe(len(ids)),
            support=len(ids),
            evidence=examples[name],
        )
        for name, ids in reviews.items()
        if len(ids) >= min_support
    ]
    return sorted(alerts, key=lambda a: (-a.support, a.category))


def guard_highlights(item: QueryEvidence, highlights: list[Highlight]) -> list[Highlight]:
    """Make sure critical complaints in ``item.evidence`` are cited by a CON, never by a PRO.

    * Critical sentences cited by a PRO are removed from it (a PRO left with no
      evidence is dropped); a note records it.
    * If a CON exists, the critical sentences are added to its evidence.
    * Otherwise a CON is added with the category's text (e.g. "Guests report bed bugs.").

    Returns a new list; the input highlights are not modified.

    Example:
        >>> from opinio_agents.models import Evidence
        >>> item = QueryEvidence(query="room", evidence=[
        ...     Evidence(sentence_id="1:2:0", text="Bed bugs bit us all night.", sentiment=-0.4)])
        >>> [(h.polarity.value, h.text) for h in guard_highlights(item, [])]
        [('cons', 'Guests report bed bugs.')]
    """
    critical: dict[str, list[str]] = {}
    for ev in item.evidence:
        names = find_critical(ev.text)
        if names:
            critical[ev.sentence_id] = names
    if not critical:
        return list(highlights)
    by_id = {ev.sentence_id: ev for ev in item.evidence}
    categories = list(dict.fromkeys(name for names in critical.values() for name in names))
    label = ", ".join(categories)
    out: list[Highlight] = []
    for h in highlights:
        h = h.model_copy(deep=True)
        if h.polarity is Polarity.PROS:
            kept = [e for e in h.evidence if e.sentence_id not in critical]
            if len(kept) != len(h.evidence):
                if not kept:
                    continue  # the PRO rested only on critical complaints: drop it
                h.evidence = kept
                h.notes.append(f"{GUARD_NOTE}: critical complaint(s) ({label}) removed from this PRO's evidence")
        out.append(h)
    cons = [h for h in out if h.polarity is Polarity.CONS]
    if cons:
        target = cons[0]
        cited = {e.sentence_id for e in target.evidence}
        missing = [sid for sid in critical if sid not in cited]
        if missing:
            target.evidence.extend(by_id[sid].model_copy() for sid in missing)
            target.notes.append(f"{GUARD_NOTE}: added {len(missing)} critical complaint sentence(s) ({label})")
        return out
    by_name = {c.name: c for c in CRITICAL_CATEGORIES}
    text = " ".join(by_name[name].con_text for name in categories)
    evidence = [by_id[sid].model_copy() for sid in critical]
    scores = [e.sentiment for e in evidence if e.sentiment is not None]
    leaning = None
    if scores:
        mean = sum(scores) / len(scores)
        leaning = (
            Polarity.CONS if mean <= -SENTIMENT_THRESHOLD else Polarity.PROS if mean >= SENTIMENT_THRESHOLD else None
        )
    out.append(
        Highlight(
            query=item.query,
            polarity=Polarity.CONS,
            text=text[:600],
            evidence=evidence,
            support=item.support.model_copy(),
            evidence_polarity=leaning,
            polarity_agrees=None if leaning is None else leaning is Polarity.CONS,
            notes=[f"{GUARD_NOTE}: added because the evidence reports {label}"],
        )
    )
    return out


class CriticalComplaintCheck:
    """The post-processing step of every summarizer: guard each query, then scan for alerts.

    A :class:`~opinio_agents.synthesis.summarizer.Summarizer` calls
    :meth:`guard` once per query outcome and :meth:`alerts` once per result, so
    streaming and non-streaming runs end with the same highlights and alerts,
    whichever synthesizer wrote them.

    Args:
        guard: Apply :func:`guard_highlights` to every query's highlights.
        alerts: Scan all of the entity's sentences with :func:`detect_alerts`.
        min_support: Minimum number of distinct reviews for an alert.
        max_examples: Example sentences kept per alert.

    Example:
        >>> from opinio_agents.models import Evidence
        >>> check = CriticalComplaintCheck()
        >>> item = QueryEvidence(query="room", evidence=[
        ...     Evidence(sentence_id="1:2:0", text="Bed bugs bit us all night.", sentiment=-0.4)])
        >>> [h.text for h in check.guard(SynthesisOutcome(item=item)).highlights]
        ['Guests report bed bugs.']
    """

    def __init__(self, *, guard: bool = True, alerts: bool = True, min_support: int = 1, max_examples: int = 3) -> None:
        if min_support < 1:
            raise ConfigError(f"min_support={min_support} must be >= 1")
        if max_examples < 0:
            raise ConfigError(f"max_examples={max_examples} must be >= 0")
        self.apply_guard = guard
        self.apply_alerts = alerts
        self.min_support = min_support
        self.max_examples = max_examples

    def guard(self, outcome: SynthesisOutcome) -> SynthesisOutcome:
        """The outcome with its highlights guarded (failures pass through unchanged)."""
        if not self.apply_guard or outcome.failure is not None:
            return outcome
        return SynthesisOutcome(
            item=outcome.item, highlights=guard_highlights(outcome.item, outcome.highlights), failure=None
        )

    def alerts(self, sentences: Sequence[Sentence], sentiments: Sequence[float] | None = None) -> list[Alert]:
        """The entity's alerts (empty when alerts are switched off)."""
        if not self.apply_alerts:
            return []
        return detect_alerts(sentences, sentiments, min_support=self.min_support, max_examples=self.max_examples)
