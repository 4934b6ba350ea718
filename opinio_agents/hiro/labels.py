"""Name sentence clusters with the noun phrase a reader would use ("coffee maker", "front desk").

Namers share one interface (:class:`ClusterNamer`); :class:`PhraseNamer` is the one shipped
(the earlier c-TF-IDF namer lives in ``benchmarks/ctfidf_namer.py``, for comparison only):

* :class:`PhraseNamer`: candidate names are the noun phrases of
  the cluster's sentences (a light chunker over lemminflect parts of speech:
  a run of noun-ish words ending in a noun, plus its shorter tails, so
  "front desk staff" also counts as "desk staff" and "staff"), the aspect
  spans the triplet extractor finds (opinion targets, on a sample of each
  cluster's sentences), and attribute nouns for attribute adjectives
  (:data:`ATTRIBUTE_NOUNS`: "spotless" -> "cleanliness"; read with :data:`SYNONYMS`
  from the data file ``resources/aspect_lexicon.json``, read on first use). A head is scored by
  the share of the cluster's sentences that use it (prevalence: "beach" beats
  "seaweed"; no idf factor: the general head, "location" or "cleanliness", names an
  aspect better than a specific one, see ``benchmarks/README.md``), boosted when the
  extractor saw it as an opinion target. Heads
  whose display phrases are near-synonyms (sentence-embedding cosine >=
  ``merge_threshold``, or a :data:`SYNONYMS` entry: wifi / wi-fi / internet)
  are merged and their coverage pooled; the name is the group's most used
  phrase, extended to a compound when the compound covers at least half of
  the head's uses ("front desk" rather than "desk"). Proper nouns (words capitalized
  in most of their mid-sentence uses across the entity: the hotel's own name, a chain,
  a city) name a cluster only when no common noun does, and a cluster named by proper
  nouns alone gets no name. A cluster whose best name repeats a better-ranked cluster's
  name takes instead a runner-up attribute noun that covers ``NamingSettings.secondary_coverage``
  of it and names no other cluster (a second "room" cluster whose sentences say "clean"
  becomes "cleanliness" rather than joining the first). Opinion targets are extracted
  only for the clusters whose name they can change (the runner-up is within the boost of
  the best name), in one batch per call, and cached per sentence text.
  A word the entity's reviewers use mostly as a verb ("we walked", "to sleep": part-of-speech
  evidence from its contexts, :func:`word_use`) or mostly as the modifier of a longer phrase
  ("air" of "air conditioning") names no cluster (``NamingSettings.max_verb_share`` and
  ``max_modifier_share``).
  A use of a part of a broader aspect (:data:`ASPECT_PARTS`: the lobby, the furniture, the building
  are part of the decor) also mentions that aspect (:meth:`PhraseNamer.mention_forms`).
  :meth:`PhraseNamer.name_aspects` also returns a cluster's
  second aspects: runner-up names covering ``NamingSettings.secondary_coverage`` of it that name
  another aspect ("cleanliness" inside a "room" cluster), with the sentences using them.
  Aspect discovery ranks the attribute nouns among them (``attributes_only``); all of them
  pushed planted aspects of the synthetic entities out of the top 15.

Example:
    >>> texts = ["The coffee maker was broken.", "Loved the coffee maker.", "Coffee machine pods ran out."]
    >>> PhraseNamer(extractor=None, encoder=None).name([[0, 1, 2]], [[]] * 3, texts)[0].text
    'coffee maker'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.lexical import _sentiment_words, function_words, generic_tokens, is_aspect_token
from opinio_agents.text.preprocess import tokenize_for_bm25
from opinio_agents.text.wordlists import lazy_getattr, word_set

__all__ = [
    "AspectLabel",
    "ClusterNamer",
    "PhraseNamer",
    "noun_phrases",
    "attribute_nouns",
    "synonyms",
    "aspect_parts",
    "ATTRIBUTE_NOUNS",  # noqa: F822 - read from the lexicon on first access (module __getattr__)
    "SYNONYMS",  # noqa: F822 - read from the lexicon on first access (module __getattr__)
    "ASPECT_PARTS",  # noqa: F822 - read from the lexicon on first access (module __getattr__)
    "load_lexicon",
    "load_aspect_parts",
    "topic_heads",
    "NamingSettings",
    "NAMING_SETTINGS",
    "opinion_words",
    "word_use",
    "label_core",
]

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


@dataclass(frozen=True)
class AspectLabel:
    """A cluster's aspect label: App. D ``terms``, readable ``text``, ``coverage`` in the cluster."""

    terms: tuple[str, ...]
    text: str
    coverage: float
    weight: float
    #: Other surface forms merged into this label (synonyms, e.g. ``("internet",)`` for ``wi-fi``).
    aliases: tuple[str, ...] = ()


@lru_cache(maxsize=100_000)
def _word_tokens(word: str) -> tuple[str, ...]:
    return tuple(tokenize_for_bm25(word))


# ---------------------------------------------------------------------------------------------------------------
# Noun-phrase names

#: The aspect-name lexicon (package data: ``opinio_agents/resources/aspect_lexicon.json``, next to the
#: word lists of ``resources/words/``).
LEXICON_PATH = Path(__file__).resolve().parents[1] / "resources" / "aspect_lexicon.json"


def load_lexicon(path: str | Path = LEXICON_PATH) -> tuple[dict[str, str], tuple[frozenset[str], ...]]:
    """Read an aspect-name lexicon: ``(attribute word -> noun, synonym sets)``.

    The file is JSON with ``attribute_nouns`` (``{noun: [attribute words]}``, e.g.
    ``"cleanliness": ["clean", "spotless"]``) and ``synonyms`` (lists of surface forms).

    Example:
        >>> nouns, synonyms = load_lexicon()
        >>> nouns["spotless"], any("wi-fi" in group for group in synonyms)
        ('cleanliness', True)

    Raises:
        ConfigError: When the file is missing or malformed.
    """
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        nouns = {
            str(word).lower(): str(noun).lower()
            for noun, words in data["attribute_nouns"].items()
            for word in words
        }
        synonyms = tuple(frozenset(str(w).lower() for w in group) for group in data["synonyms"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"aspect lexicon {str(path)!r} is unreadable ({exc}); it needs 'attribute_nouns' "
            "({noun: [words]}) and 'synonyms' ([[forms]])"
        ) from exc
    return nouns, synonyms


def load_aspect_parts(path: str | Path = LEXICON_PATH) -> dict[str, frozenset[str]]:
    """Read the ``aspect_parts`` of an aspect-name lexicon (none when the file has no such key).

    ``{aspect: [parts]}``: a use of a part (``lobby``, ``furniture``) also mentions the broader
    aspect (``decor``; :meth:`PhraseNamer.mention_forms`); each part keeps its own name.

    Example:
        >>> "lobby" in load_aspect_parts()["decor"]
        True

    Raises:
        ConfigError: When the file is missing or malformed.
    """
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return {
            str(aspect).lower(): frozenset(str(w).lower() for w in parts)
            for aspect, parts in data.get("aspect_parts", {}).items()
        }
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"aspect lexicon {str(path)!r} is unreadable ({exc}); 'aspect_parts' must be {{aspect: [parts]}}"
        ) from exc


@lru_cache(maxsize=1)
def _lexicon() -> tuple[dict[str, str], tuple[frozenset[str], ...]]:
    return load_lexicon()


def attribute_nouns() -> dict[str, str]:
    """Attribute adjectives and the noun that names what they describe ("The room was spotless" is about cleanliness).

    Read from the lexicon on first use (:data:`ATTRIBUTE_NOUNS` is the same mapping).
    """
    return _lexicon()[0]


def synonyms() -> tuple[frozenset[str], ...]:
    """Synonym sets the sentence encoder scores too low to merge (lower-case surface forms): :data:`SYNONYMS`."""
    return _lexicon()[1]


@lru_cache(maxsize=1)
def aspect_parts() -> dict[str, frozenset[str]]:
    """Nouns whose use also mentions a broader aspect (``decor``: ``lobby``, ``furniture``): :data:`ASPECT_PARTS`."""
    return load_aspect_parts()


@lru_cache(maxsize=1)
def _attribute_names() -> frozenset[str]:
    return frozenset(attribute_nouns().values())


_LAZY_LEXICON: dict[str, Callable[[], Any]] = {
    "ATTRIBUTE_NOUNS": attribute_nouns,
    "SYNONYMS": synonyms,
    "ASPECT_PARTS": aspect_parts,
}


#: ``ATTRIBUTE_NOUNS``, ``SYNONYMS`` and ``ASPECT_PARTS``, read from the lexicon on first access.
__getattr__ = lazy_getattr(__name__, _LAZY_LEXICON)


@dataclass(frozen=True)
class NamingSettings:
    """The settings of HIRO aspect naming and ranking in one place (the values shipped;
    ``benchmarks/aspect_labels.py`` measures them, the figures are in ``benchmarks/README.md``).

    Attributes:
        min_coverage: Share of a cluster's sentences its name must cover, else the cluster is unnamed.
        merge_threshold: Cosine above which two display phrases of one cluster are synonyms.
        join_threshold: Cosine above which the names of two clusters are one aspect.
        max_target_sentences: Sentences per cluster the triplet extractor reads for opinion targets.
        target_boost: Score boost per unit share of a head's uses the extractor saw as an opinion target.
        proper_share: A name capitalized in at least this share of its mid-sentence uses is a proper
            noun (a hotel, chain or city name: "Vintage Park", "Hilton"), not an aspect.
        proper_factor: Score factor of a proper-noun name (a fallback when no common noun names the cluster).
        secondary_coverage: A runner-up name covering this share of a cluster that names another aspect
            is a second aspect of it (the "clean" third of a "room" cluster: "cleanliness").
        diversify: A cluster repeating a better-ranked cluster's name takes the attribute it is about.
        popularity_weight: Weight of the review share in aspect ranking (the rest: HIRO's specificity),
            so the aspects every hotel shares (staff, location) are not ranked below rare ones.
        second_aspects: Aspect discovery ranks the attribute aspects clusters hold besides their names.
        min_target_share: An aspect whose name is an opinion target in fewer than this share of the
            sentences using it is only mentioned in passing ("a deposit on your card"): it ranks after
            every judged aspect.
        max_verb_share: A word the entity's reviewers use as a verb in more than this share of its
            uses with part-of-speech evidence ("we walked", "to sleep", "booked" against "a short
            walk", "a good night's sleep") names no aspect (:meth:`_Phrases.verb_share`).
        max_modifier_share: A word used in at least this share of its noun-phrase uses as the modifier
            of a longer phrase ("air" of "air conditioning") names no aspect on its own
            (:meth:`_Phrases.modifier_share`); the longer phrase names it.
        min_pos_evidence: Uses with evidence a word needs before either share can rule it out.
        part_share: An aspect at least this share of whose sentences also use the name of a more used
            aspect is a detail of it ("the coffee machine pods"): aspect discovery joins it there
            (``hiro/aspects.py`` ``_join_parts``; above 1: never).
        widen_rounds: Times aspect discovery doubles the clusters it names while fewer than half the
            aspects asked for got a name (``hiro/aspects.py`` ``discover_aspects``): in a store of one
            large entity the best clusters are broad praise ("Love this device!") and join under few
            names; 2 rounds turned an Alexa store's 5 aspects into 13 at most 4x the naming work.
            SPACE, FewSum and OpoSum stores name half the aspects at once and never widen.
    """

    min_coverage: float = 0.2
    merge_threshold: float = 0.8
    join_threshold: float = 0.8
    max_target_sentences: int = 8
    target_boost: float = 0.5
    proper_share: float = 0.6
    proper_factor: float = 0.4
    secondary_coverage: float = 0.3
    diversify: bool = True
    popularity_weight: float = 0.75
    second_aspects: bool = True
    min_target_share: float = 0.25
    max_verb_share: float = 0.5
    max_modifier_share: float = 0.6
    min_pos_evidence: int = 5
    part_share: float = 0.8
    widen_rounds: int = 2


#: The settings every namer and aspect ranking uses unless a caller passes others.
NAMING_SETTINGS = NamingSettings()
#: Sentence texts whose opinion targets a :class:`PhraseNamer` keeps (cleared when full).
TARGET_CACHE_SIZE = 200_000
#: Verb-particle pairs written apart that name a noun ("check in was slow" is the check-in): the
#: pair counts as that noun, with the verb rules of the first word ("we had to check in" stays a verb).
_PARTICLE_NOUNS: dict[tuple[str, str], str] = {("check", "in"): "check-in", ("check", "out"): "check-out"}


@lru_cache(maxsize=100_000)
def _head_ok(token: str) -> bool:
    """A phrase may end in ``token``: a noun (lemminflect) without an adjective reading, or unknown (``wifi``)."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(token)
    if token.endswith("ing") and "ADJ" not in lemmas:
        return True  # parking, shopping
    return not lemmas or ("NOUN" in lemmas and "ADJ" not in lemmas and "ADV" not in lemmas)


def _head_word_ok(token: str, word: str) -> bool:
    """``_head_ok`` for the token, and the word is no possessive (``grandmother's``)."""
    return _head_ok(token) and not word.endswith(("'s", "\u2019s"))


@lru_cache(maxsize=100_000)
def _verb_reading(word: str) -> bool:
    from lemminflect import getAllLemmas

    return "VERB" in getAllLemmas(word)


@lru_cache(maxsize=100_000)
def _noun_form(word: str) -> bool:
    """Whether ``word`` is a noun lemma, its plural or a gerund (``kept`` is not, though ``keep`` is a noun)."""
    from lemminflect import getAllLemmas, getInflection

    if word.endswith("ing"):
        return True  # parking, shopping, housekeeping (a verb reading is caught by the subject rule)
    nouns = getAllLemmas(word).get("NOUN")
    if nouns is None:
        return not getAllLemmas(word)
    return any(word == lemma or word in getInflection(lemma, "NNS") for lemma in nouns)


@lru_cache(maxsize=100_000)
def _chunk_word(word: str) -> str | None:
    """The App. D token of ``word`` when it can be part of a noun phrase, else None."""
    if word in word_set("hiro_labels", "determiners") or not _noun_form(word.replace("-", "")) and "-" not in word:
        return None
    tokens = _word_tokens(word)
    if len(tokens) != 1:
        return None
    token = tokens[0]
    if token in word_set("hiro_labels", "name_stopwords") or token in word_set("hiro_labels", "region_nouns"):
        return None
    if is_aspect_token(token):
        return token
    gerund = word.endswith("ing") and token.isalpha() and len(token) > 4
    if gerund and token not in generic_tokens() and token not in function_words() and token not in _sentiment_words():
        return token  # parking, shopping: nouns lemminflect knows only as verbs
    return None


@lru_cache(maxsize=100_000)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return dict(getAllLemmas(word))


def word_use(word: str, previous: str = "", following: str = "") -> str | None:
    """Part-of-speech evidence of one use of a word with a verb reading: ``"verb"``, ``"noun"`` or None.

    Only words lemminflect reads as verbs get a verdict (the others are never verbs). A verb-only
    inflection ("walked", "slept", "booked") is a verb; a base or plural form is a verb after a subject
    pronoun, a modal or negation, or "to", or before "not" (the contexts :func:`noun_phrases` uses),
    and a noun after a determiner, a possessive, a number, or a word with an adjective or noun
    reading and no adverb reading ("a short walk", "our sleep", "five minutes walk"; not "just walk").
    A gerund is a noun only after a determiner ("the parking"); any other context gives no evidence.

    Example:
        >>> word_use("walked"), word_use("walk", "short"), word_use("sleep", "to"), word_use("walk", "and")
        ('verb', 'noun', 'verb', None)
    """
    lemmas = _lemmas(word)
    if "VERB" not in lemmas:
        return None
    determiners = word_set("hiro_labels", "determiners")
    if word.endswith("ing"):
        return "noun" if previous in determiners else None
    if "NOUN" not in lemmas and "ADJ" not in lemmas:
        return "verb"
    if (
        previous in word_set("hiro_labels", "subjects")
        or previous in word_set("hiro_labels", "verb_context")
        or previous == "to"
        or following == "not"
    ):
        return "verb"
    if previous in determiners or previous.endswith(("'s", "\u2019s", "s'")) or previous.isdigit():
        return "noun"
    before = _lemmas(previous) if previous else {}
    if ("ADJ" in before or "NOUN" in before) and "ADV" not in before:
        return "noun"  # "short walk", "good sleep"; not "just walk"
    return None


def noun_phrases(text: str, *, max_words: int = 3) -> list[tuple[tuple[str, ...], str]]:
    """Noun phrases of ``text`` and their tails, as ``(App. D tokens, lower-case surface)`` pairs.

    A phrase is a maximal run of noun-ish words (:func:`~opinio_agents.hiro.lexical.is_aspect_token`:
    nouns that carry no sentiment and are not generic) trimmed to end in a word with
    a noun but no adjective reading, keeping its last ``max_words`` words; every
    tail of it is returned too ("front desk staff", "desk staff", "staff"), except a lone
    incidental noun (``hiro_labels.json`` ``incidental_nouns``: "card", "photos", "taxi").

    Example:
        >>> [surface for _, surface in noun_phrases("The front desk staff were great, wi-fi slow.")]
        ['front desk staff', 'desk staff', 'staff', 'wi-fi']
    """
    out: list[tuple[tuple[str, ...], str]] = []
    run: list[tuple[str, str]] = []
    incidental = word_set("hiro_labels", "incidental_nouns")

    def flush() -> None:
        while run and not _head_word_ok(*run[-1]):
            run.pop()
        words = run[-max_words:]
        for start in range(len(words)):
            tail = words[start:]
            if len(tail) == 1 and tail[0][0] in incidental:
                continue  # "a deposit on your card" names nothing; "the key card" still names the key card
            out.append((tuple(t for t, _ in tail), " ".join(w for _, w in tail)))
        run.clear()

    words = _WORD.findall(text)
    previous = context = before = ""
    particle = False
    for position, word in enumerate(words):
        lower = word.lower()
        if particle:  # the "in" of "check in", already part of the noun
            particle = False
            continue
        following = words[position + 1].lower() if position + 1 < len(words) else ""
        verb = lower
        if (lower, following) in _PARTICLE_NOUNS:
            lower = _PARTICLE_NOUNS[(lower, following)]  # "check in was quick": the noun check-in, not "check"
            particle = True
            following = words[position + 2].lower() if position + 2 < len(words) else ""
        token = _chunk_word(lower)
        if token is not None and _verb_reading(verb):
            if previous in word_set("hiro_labels", "subjects"):
                token = None  # "we felt", "it makes": a verb after a subject pronoun
            elif context in word_set("hiro_labels", "verb_context"):
                token = None  # "would (definitely) repeat", "can't sleep": a verb after a modal or a negation
            elif following == "not":
                token = None  # "the bathroom does not", "need not"
            elif previous == "to" and before in word_set("hiro_labels", "infinitive_context"):
                token = None  # "had to stand", "easy to find": an infinitive
        if not lower.endswith("ly"):
            context = lower
        if token is None:
            flush()
        else:
            run.append((token, lower))
        before, previous = previous, lower
    flush()
    return out


def label_core(name: str) -> str:
    """``name`` without its leading words that have an adjective reading (lemminflect), keeping the head.

    An adjective describes the aspect without changing which one it is: "modern elevators" are the
    elevators, "single beds" the beds, "front room" a room (aspect discovery joins such names,
    :meth:`PhraseNamer.same_aspect`). A noun modifier stays ("sea views", "room service").

    Example:
        >>> label_core("modern elevators"), label_core("little gym"), label_core("room service"), label_core("new")
        ('elevators', 'gym', 'room service', 'new')
    """
    words = name.split()
    while len(words) > 1 and "ADJ" in _lemmas(words[0].lower()):
        words = words[1:]
    return " ".join(words)


def topic_heads(text: str) -> frozenset[str]:
    """What ``text`` talks about: the head tokens of its noun phrases and attribute nouns, less names.

    Generic nouns (:data:`~opinio_agents.hiro.lexical.GENERIC_TOKENS`: hotel, stay) and words
    capitalized inside the sentence (a city, the hotel's name) are left out.

    Example:
        >>> sorted(topic_heads("This hotel was in a great location in Rome."))
        ['location']
        >>> sorted(topic_heads("The front desk staff were friendly, the pool cold."))
        ['pool', 'staff']
    """
    names = {w.lower() for w in _WORD.findall(text)[1:] if w[:1].isupper() and not w.isupper()}
    out = set()
    for key, surface in noun_phrases(text) + _attributes(text):
        head = surface.split()[-1] if surface else ""
        if key and head not in names and key[-1] not in generic_tokens():
            out.add(key[-1])
    return frozenset(out)


def opinion_words(text: str) -> frozenset[str]:
    """The lower-case words of ``text`` that carry a clear valence (VADER, as the namer's filters).

    Example:
        >>> sorted(opinion_words("The staff were friendly and helpful."))
        ['friendly', 'helpful']
    """
    lexicon = _sentiment_words()
    return frozenset(w for w in (m.lower() for m in _WORD.findall(text)) if w in lexicon)


def _attributes(text: str) -> list[tuple[tuple[str, ...], str]]:
    found = []
    for word in _WORD.findall(text):
        noun = attribute_nouns().get(word.lower())
        if noun is not None:
            found.append((tuple(tokenize_for_bm25(noun)), noun))
    return found


def _parts_of(label: AspectLabel) -> frozenset[str]:
    """The :data:`ASPECT_PARTS` of the label's name or head word ("room decor": decor's parts)."""
    for name in (label.text, *label.aliases):
        words = name.split()
        lexicon = aspect_parts()
        parts = lexicon.get(name) or (lexicon.get(words[-1]) if words else None)
        if parts:
            return parts
    return frozenset()


class ClusterNamer:
    """Names the clusters of one entity: ``name(clusters, tokens, texts) -> [AspectLabel | None]``.

    Subclasses implement :meth:`name`; :meth:`same_aspect` says whether two labels
    of different clusters name one aspect (joined by aspect discovery).
    """

    def name(
        self, clusters: Sequence[Sequence[int]], tokens: Sequence[Sequence[str]], texts: Sequence[str]
    ) -> list[AspectLabel | None]:
        """One label (or None) per cluster; ``clusters`` hold positions into ``tokens``/``texts``."""
        raise NotImplementedError

    def same_aspect(self, a: AspectLabel, b: AspectLabel) -> bool:
        """Whether two labels name the same aspect (same App. D terms by default)."""
        return a.terms == b.terms

    def name_aspects(
        self,
        clusters: Sequence[Sequence[int]],
        tokens: Sequence[Sequence[str]],
        texts: Sequence[str],
        *,
        attributes_only: bool = False,
    ) -> list[list[tuple[AspectLabel, list[int]]]]:
        """Per cluster, its name with all its sentences (none when unnamed), then any second aspects.

        The base class finds no second aspects (``attributes_only`` changes nothing);
        :meth:`PhraseNamer.name_aspects` does.
        """
        del attributes_only
        labels = self.name(clusters, tokens, texts)
        return [[] if label is None else [(label, list(c))] for c, label in zip(clusters, labels, strict=True)]

    def mention_forms(self, label: AspectLabel) -> tuple[str, ...]:
        """The words whose use in a sentence mentions the label's aspect: its text and aliases by default."""
        return (label.text, *label.aliases)

    def target_share(self, forms: Sequence[str], texts: Sequence[str]) -> float | None:
        """Share of ``texts`` (sentences that use the aspect) whose opinion is about one of ``forms``.

        None when the namer has no opinion-target extractor (the base class has none): the
        aspect is then ranked as if every use were an opinion about it.
        """
        del forms, texts
        return None

    def judged(self, forms: Sequence[str], texts: Sequence[str]) -> list[bool] | None:
        """Per text, whether its opinion is about one of ``forms``; None without an extractor (the base class)."""
        del forms, texts
        return None


@dataclass
class _Phrases:
    """Per-sentence candidate keys of an entity, their sentence frequencies and surface forms."""

    keys: list[set[tuple[str, ...]]]
    doc_freq: Counter[tuple[str, ...]]
    surfaces: dict[tuple[str, ...], Counter[str]]
    #: Mid-sentence uses of each lower-case word: capitalized, and in all.
    capitalized: Counter[str]
    mid_uses: Counter[str]
    #: Uses of each App. D token with part-of-speech evidence (:func:`word_use`): as a verb, as a noun.
    verb_uses: Counter[str]
    noun_uses: Counter[str]
    #: Noun-phrase uses of each token: as the modifier of a longer phrase, as the phrase's head.
    modifier_uses: Counter[str]
    head_uses: Counter[str]

    def verb_share(self, token: str) -> float:
        """Share of the token's uses with evidence that are verbs (0 with under ``min_pos_evidence``)."""
        verbs, nouns = self.verb_uses.get(token, 0), self.noun_uses.get(token, 0)
        if verbs + nouns < NAMING_SETTINGS.min_pos_evidence:
            return 0.0
        return verbs / (verbs + nouns)

    def modifier_share(self, token: str) -> float:
        """Share of the token's noun-phrase uses that modify a longer phrase (0 with under ``min_pos_evidence``)."""
        modifier, head = self.modifier_uses.get(token, 0), self.head_uses.get(token, 0)
        if modifier + head < NAMING_SETTINGS.min_pos_evidence:
            return 0.0
        return modifier / (modifier + head)

    def not_a_name(self, token: str) -> bool:
        """Whether the entity's reviewers use ``token`` mostly as a verb or as a modifier (see NamingSettings)."""
        return (
            self.verb_share(token) > NAMING_SETTINGS.max_verb_share
            or self.modifier_share(token) >= NAMING_SETTINGS.max_modifier_share
        )

    def proper(self, phrase: str) -> bool:
        """Whether a word of ``phrase`` is mostly capitalized mid-sentence (a proper noun)."""
        for word in phrase.split():
            uses = self.mid_uses.get(word, 0)
            if uses >= 2 and self.capitalized.get(word, 0) >= NAMING_SETTINGS.proper_share * uses:
                return True
        return False


class PhraseNamer(ClusterNamer):
    """Noun-phrase cluster names from chunks, triplet aspect spans and synonym merging.

    Args:
        extractor: A :class:`~opinio_agents.triplets.base.TripletExtractor` whose aspect
            spans mark opinion targets; ``"auto"`` (default) uses the embedded extractor
            when torch is installed, ``None`` uses noun phrases only.
        encoder: Sentence encoder for synonym merging (anything with
            ``encode(list[str]) -> (n, d)`` unit vectors); ``"auto"`` (default) uses the
            shared MiniLM, ``None`` merges by :data:`SYNONYMS` only.
        merge_threshold: Cosine above which two display phrases are synonyms within a cluster.
        join_threshold: Cosine above which the names of two clusters are one aspect.
        min_coverage: Share of a cluster's sentences its name must cover (else unnamed).
        max_target_sentences: Sentences per cluster the extractor reads (an even sample).

    Example:
        >>> texts = ["The coffee maker was broken.", "Loved the coffee maker.", "Coffee machine pods ran out."]
        >>> tokens = [tokenize_for_bm25(t) for t in texts]
        >>> PhraseNamer(extractor=None, encoder=None).name([[0, 1, 2]], tokens, texts)[0].text
        'coffee maker'
    """

    def __init__(
        self,
        *,
        extractor: Any = "auto",
        encoder: Any = "auto",
        merge_threshold: float = NAMING_SETTINGS.merge_threshold,
        join_threshold: float = NAMING_SETTINGS.join_threshold,
        min_coverage: float = NAMING_SETTINGS.min_coverage,
        max_target_sentences: int = NAMING_SETTINGS.max_target_sentences,
    ) -> None:
        if not 0.0 < min_coverage <= 1.0:
            raise ConfigError(f"min_coverage={min_coverage!r} must be in (0, 1]")
        if max_target_sentences < 0:
            raise ConfigError(f"max_target_sentences={max_target_sentences!r} must be >= 0")
        self._extractor = extractor
        self._encoder = encoder
        self.merge_threshold = merge_threshold
        self.join_threshold = join_threshold
        self.min_coverage = min_coverage
        self.max_target_sentences = max_target_sentences
        self._targets: dict[str, set[tuple[str, ...]]] = {}
        self._vectors: dict[str, Any] = {}

    # -- lazily resolved helpers ------------------------------------------------------------------------------
    def _get_extractor(self) -> Any:
        if isinstance(self._extractor, str):
            try:
                import torch  # noqa: F401

                from opinio_agents.triplets.embedded import EmbeddedTripletExtractor
            except ImportError:
                self._extractor = None
            else:
                self._extractor = EmbeddedTripletExtractor()
        return self._extractor

    def _get_encoder(self) -> Any:
        if isinstance(self._encoder, str):
            from opinio_agents.embeddings import get_encoder

            self._encoder = get_encoder()
        return self._encoder

    def _similarity(self, phrases: Sequence[str]) -> Any:
        import numpy as np

        encoder = self._get_encoder()
        n = len(phrases)
        sim = np.zeros((n, n), dtype=np.float32)
        for group in synonyms():
            members = [i for i, p in enumerate(phrases) if p in group]
            for i in members:
                for j in members:
                    sim[i, j] = 1.0
        if encoder is not None and n:
            todo = [p for p in dict.fromkeys(phrases) if p not in self._vectors]
            if todo:
                for phrase, vector in zip(todo, np.asarray(encoder.encode(list(todo))), strict=True):
                    self._vectors[phrase] = vector
            matrix = np.stack([self._vectors[p] for p in phrases]).astype(np.float32)
            sim = np.maximum(sim, matrix @ matrix.T)
        return sim

    # -- candidates -------------------------------------------------------------------------------------------
    def _phrases(self, texts: Sequence[str]) -> _Phrases:
        keys: list[set[tuple[str, ...]]] = []
        freq: Counter[tuple[str, ...]] = Counter()
        surfaces: dict[tuple[str, ...], Counter[str]] = {}
        capitalized: Counter[str] = Counter()
        mid_uses: Counter[str] = Counter()
        verb_uses: Counter[str] = Counter()
        noun_uses: Counter[str] = Counter()
        modifier_uses: Counter[str] = Counter()
        head_uses: Counter[str] = Counter()
        for text in texts:
            chunks = noun_phrases(text)
            found = chunks + _attributes(text)
            mine = {k for k, _ in found}
            for key, surface in found:
                surfaces.setdefault(key, Counter())[surface] += 1
            keys.append(mine)
            freq.update(mine)
            for key, _ in chunks:  # the longest phrase of each run (its tails follow it)
                if any(len(other) > len(key) and other[-len(key) :] == key for other, _ in chunks):
                    continue
                head_uses[key[-1]] += 1
                modifier_uses.update(key[:-1])
            words = [w.lower() for w in _WORD.findall(text)]
            for position, word in enumerate(words):
                kind = word_use(
                    word,
                    words[position - 1] if position else "",
                    words[position + 1] if position + 1 < len(words) else "",
                )
                if kind is not None:
                    tokens = _word_tokens(word)
                    if len(tokens) == 1:
                        (verb_uses if kind == "verb" else noun_uses)[tokens[0]] += 1
            for match in _WORD.finditer(text):
                before = text[: match.start()].rstrip()
                word = match.group()
                if not before or before[-1] in ".!?:;\"(" or word.isupper():
                    continue  # sentence-initial, quoted or shouted: case says nothing
                mid_uses[word.lower()] += 1
                capitalized[word.lower()] += word[0].isupper()
        return _Phrases(
            keys, freq, surfaces, capitalized, mid_uses, verb_uses, noun_uses, modifier_uses, head_uses
        )

    def _opinion_targets(self, texts: Sequence[str]) -> list[set[tuple[str, ...]]]:
        """Opinion-target keys of each text (cached per text; the cache is bounded)."""
        extractor = self._get_extractor()
        if extractor is None:
            return [set() for _ in texts]
        cache = self._targets
        known = {t: cache.get(t) for t in dict.fromkeys(texts)}
        todo = [t for t, found in known.items() if found is None]
        if todo:
            if len(cache) + len(todo) > TARGET_CACHE_SIZE:
                cache.clear()  # a long-running service names many entities: keep memory flat
            for text, triplets in zip(todo, extractor.extract(todo), strict=True):
                found: set[tuple[str, ...]] = set()
                for triplet in triplets:
                    if triplet.aspect:
                        found.update(k for k, _ in noun_phrases(triplet.aspect))
                known[text] = cache[text] = found
        return [known[t] or set() for t in texts]

    def target_share(self, forms: Sequence[str], texts: Sequence[str]) -> float | None:
        """Share of ``texts`` in which the extractor sees one of ``forms`` as an opinion target.

        A form counts through its head word (``front desk`` is a target when ``desk`` or ``front desk``
        is); an attribute noun (:data:`ATTRIBUTE_NOUNS`: ``cleanliness``) always counts as a target,
        since reviewers evaluate it through its adjectives ("spotless"), never name it. At most
        ``max_target_sentences`` of ``texts`` (an even sample) are read. None without an extractor
        or without texts.

        Example:
            >>> PhraseNamer(extractor=None, encoder=None).target_share(["pool"], ["The pool was cold."]) is None
            True
        """
        if not self.max_target_sentences or not texts:
            return None
        sample = [texts[i] for i in self._sample(list(range(len(texts))), self.max_target_sentences)]
        found = self.judged(forms, sample)
        return None if found is None else sum(found) / len(found)

    def judged(self, forms: Sequence[str], texts: Sequence[str]) -> list[bool] | None:
        """Per text, whether the extractor sees one of ``forms`` as an opinion target (one batched call).

        Forms count through their head words; an attribute noun always counts (see
        :meth:`target_share`). None without an extractor.

        Example:
            >>> PhraseNamer(extractor=None, encoder=None).judged(["pool"], ["The pool was cold."]) is None
            True
        """
        if self._get_extractor() is None:
            return None
        heads = {tuple(tokenize_for_bm25(form))[-1:] for form in forms if tokenize_for_bm25(form)}
        if not heads or any(form.lower() in _attribute_names() for form in forms):
            return [True] * len(texts)
        return [any(key[-1:] in heads for key in keys) for keys in self._opinion_targets(texts)]

    def _prefetch_targets(self, clusters: Sequence[Sequence[int]], texts: Sequence[str]) -> None:
        """Run the extractor once over every cluster's sample (one batched call, each text once)."""
        if self._get_extractor() is None or not self.max_target_sentences:
            return
        wanted = [texts[i] for c in clusters for i in self._sample(list(c), self.max_target_sentences)]
        self._opinion_targets(wanted)

    @staticmethod
    def _sample(indices: Sequence[int], k: int) -> list[int]:
        if len(indices) <= k:
            return list(indices)
        step = len(indices) / k
        return [indices[int(i * step)] for i in range(k)]

    # -- naming -----------------------------------------------------------------------------------------------
    def _display(self, head: str, members: list[int], table: _Phrases) -> tuple[tuple[str, ...], int]:
        """The phrase shown for ``head``: the longest compound covering >= half the head's uses."""
        counts: Counter[tuple[str, ...]] = Counter()
        for i in members:
            counts.update(k for k in table.keys[i] if k[-1] == head)
        base = counts.get((head,), 0)
        compounds = [(len(k), c, k) for k, c in counts.items() if len(k) > 1 and c >= max(2, 0.5 * base)]
        if compounds:
            _, count, key = max(compounds)
            return key, count
        return (head,), base

    def _label(self, indices: Sequence[int], table: _Phrases, texts: Sequence[str]) -> AspectLabel | None:
        """The best name of one cluster (None when none covers ``min_coverage``)."""
        found = self._candidates(indices, table, texts)
        return found[0][0] if found else None

    def _all_candidates(
        self, clusters: Sequence[Sequence[int]], table: _Phrases, texts: Sequence[str]
    ) -> list[list[tuple[AspectLabel, list[int]]]]:
        """Every cluster's candidates; the extractor reads only the clusters where it can change the name.

        An opinion target multiplies a name's score by at most ``1 + target_boost``, so a cluster
        whose best name leads every other by more than that keeps it whatever the extractor says.
        The others' samples go through the extractor in one batch.
        """
        plain = [self._candidates(list(c), table, texts, targets=False) if len(c) else [] for c in clusters]
        if self._get_extractor() is None or not self.max_target_sentences:
            return plain
        close = [
            i
            for i, found in enumerate(plain)
            if len(found) > 1 and found[1][0].weight * (1.0 + NAMING_SETTINGS.target_boost) > found[0][0].weight
        ]
        self._prefetch_targets([clusters[i] for i in close], texts)
        for i in close:
            plain[i] = self._candidates(list(clusters[i]), table, texts)
        return plain

    def _candidates(
        self, indices: Sequence[int], table: _Phrases, texts: Sequence[str], *, targets: bool = True
    ) -> list[tuple[AspectLabel, list[int]]]:
        """Distinct names of one cluster covering ``min_coverage`` of it, best first, with the sentences
        each covers (``targets=False``: without the extractor's boost). Proper nouns (``NamingSettings.proper_share``)
        only name a cluster no common noun names; a cluster named only by proper nouns ("Vintage Park",
        "Chicago") gets no name."""
        size = len(indices)
        heads: dict[str, set[int]] = {}
        for i in indices:
            for key in table.keys[i]:
                heads.setdefault(key[-1], set()).add(i)
        heads = {h: covered for h, covered in heads.items() if not table.not_a_name(h)}
        if not heads:
            return []
        sample = self._sample(list(indices), self.max_target_sentences) if targets else []
        found_targets = self._opinion_targets([texts[i] for i in sample]) if sample else []
        target_share: Counter[str] = Counter()
        for target_keys in found_targets:
            target_share.update({k[-1] for k in target_keys})

        ranked = sorted(heads, key=lambda h: (-len(heads[h]), h))[:30]
        displays = {h: self._display(h, sorted(heads[h]), table) for h in ranked}
        phrases = [self._surface_of(displays[h][0], table) for h in ranked]
        proper = {h for h, phrase in zip(ranked, phrases, strict=True) if table.proper(phrase)}

        def score(head: str, covered: set[int]) -> float:
            share = target_share.get(head, 0) / max(len(sample), 1)
            coverage = len(covered) / size
            boost = 1.0 + NAMING_SETTINGS.target_boost * min(1.0, share / max(coverage, 1e-9)) if sample else 1.0
            factor = NAMING_SETTINGS.proper_factor if head in proper else 1.0
            return coverage * boost * factor

        sim = self._similarity(phrases)
        scored = sorted(ranked, key=lambda h: (-score(h, heads[h]), h))
        used: set[str] = set()
        found: list[tuple[AspectLabel, list[int]]] = []
        for head in scored:
            if head in used:
                continue
            i = ranked.index(head)
            group = [h for j, h in enumerate(ranked) if h not in used and sim[i, j] >= self.merge_threshold]
            group = group or [head]
            covered = set().union(*(heads[h] for h in group))
            weight = score(head, covered)
            used.update(group)
            if len(covered) / size < self.min_coverage:
                continue
            main = max(group, key=lambda h: (displays[h][1] or len(heads[h]), len(heads[h]), h == head))
            key = displays[main][0]
            aliases = tuple(sorted({phrases[ranked.index(h)] for h in group if h != main}))
            text = self._surface_of(key, table)
            if main in proper or table.proper(text):
                continue
            found.append(
                (AspectLabel(key, text, round(len(covered) / size, 3), round(weight, 4), aliases), sorted(covered))
            )
        found.sort(key=lambda item: -item[0].weight)
        return found

    def _diversify(
        self, found: list[list[tuple[AspectLabel, list[int]]]]
    ) -> list[list[tuple[AspectLabel, list[int]]]]:
        """Give a cluster whose name repeats a better-ranked cluster's name the attribute it is about.

        ``found`` holds each cluster's candidates (best first), clusters in rank order. When a
        cluster's best name is :meth:`same_aspect` as an earlier cluster's, and one of its runner-up
        names is an attribute noun (:data:`ATTRIBUTE_NOUNS`: "cleanliness", "noise") that covers
        ``NamingSettings.secondary_coverage`` of it and names no other cluster, that attribute moves first: a
        second "room" cluster whose sentences mostly say "clean" or "dirty" becomes "cleanliness"
        instead of joining the first one.
        """
        if not NAMING_SETTINGS.diversify:
            return found
        attributes = set(_attribute_names())
        out = [list(names) for names in found]
        for i, names in enumerate(out):
            if not names or not any(
                out[j] and self.same_aspect(out[j][0][0], names[0][0]) for j in range(i)
            ):
                continue
            chosen = [other[0][0] for j, other in enumerate(out) if other and j != i]
            for k, (label, _) in enumerate(names[1:], start=1):
                if (
                    label.text in attributes
                    and label.coverage >= NAMING_SETTINGS.secondary_coverage
                    and not any(self.same_aspect(label, other) for other in chosen)
                ):
                    out[i] = [names[k], *names[:k], *names[k + 1 :]]
                    break
        return out

    @staticmethod
    def _surface_of(key: tuple[str, ...], table: _Phrases) -> str:
        forms = table.surfaces.get(key)
        return forms.most_common(1)[0][0] if forms else " ".join(key)

    def name(
        self, clusters: Sequence[Sequence[int]], tokens: Sequence[Sequence[str]], texts: Sequence[str]
    ) -> list[AspectLabel | None]:
        """Name each cluster (None when no phrase covers ``min_coverage`` of its sentences)."""
        del tokens  # phrases are chunked from the text itself
        texts = list(texts)  # passed down, never kept on the namer: one namer serves every thread at once
        table = self._phrases(texts)
        found = self._all_candidates(clusters, table, texts)
        return [names[0][0] if names else None for names in self._diversify(found)]

    def name_aspects(
        self,
        clusters: Sequence[Sequence[int]],
        tokens: Sequence[Sequence[str]],
        texts: Sequence[str],
        *,
        attributes_only: bool = False,
    ) -> list[list[tuple[AspectLabel, list[int]]]]:
        """Per cluster, its name and any second aspect it holds, each with the sentences it covers.

        The first entry is :meth:`name`'s label with the whole cluster; then come runner-up names that
        cover at least ``NamingSettings.secondary_coverage`` of the cluster and name another aspect
        (not :meth:`same_aspect` as any name before them), each with the cluster's sentences that use it.
        With ``attributes_only``, only attribute nouns (:data:`ATTRIBUTE_NOUNS`: "cleanliness",
        "noise") are second aspects.
        """
        attributes = set(_attribute_names())
        del tokens  # phrases are chunked from the text itself
        texts = list(texts)  # passed down, never kept on the namer: one namer serves every thread at once
        table = self._phrases(texts)
        out: list[list[tuple[AspectLabel, list[int]]]] = []
        every = self._diversify(self._all_candidates(clusters, table, texts))
        for cluster, found in zip(clusters, every, strict=True):
            if not found:
                out.append([])
                continue
            names = [(found[0][0], list(cluster))]
            for label, covered in found[1:]:
                if attributes_only and label.text not in attributes:
                    continue
                if label.coverage >= NAMING_SETTINGS.secondary_coverage and not any(
                    self.same_aspect(label, other) for other, _ in names
                ):
                    names.append((label, covered))
            out.append(names)
        return out

    def mention_forms(self, label: AspectLabel) -> tuple[str, ...]:
        """Its text and aliases, and for an attribute noun the attribute words that name it.

        Reviewers rarely write "cleanliness"; they write "clean" or "spotless", so a
        ``cleanliness`` aspect is mentioned by every sentence using one of its
        :data:`ATTRIBUTE_NOUNS` words.

        Example:
            >>> label = AspectLabel(("cleanli",), "cleanliness", 1.0, 1.0)
            >>> "spotless" in PhraseNamer(extractor=None, encoder=None).mention_forms(label)
            True
        """
        names = (label.text, *label.aliases, *sorted(_parts_of(label)))
        words = tuple(word for word, noun in attribute_nouns().items() if noun in names)
        return tuple(dict.fromkeys((*names, *words)))

    def same_aspect(self, a: AspectLabel, b: AspectLabel) -> bool:
        """Same terms, a shared alias or synonym, or display phrases at cosine >= ``join_threshold``;
        the same holds for the names without their leading adjectives (:func:`label_core`: "modern
        elevators" is the "lift", "single beds" the "bed")."""
        if a.terms == b.terms:
            return True
        names_a, names_b = {a.text, *a.aliases}, {b.text, *b.aliases}
        if names_a & names_b:
            return True
        sim = self._similarity([a.text, b.text])
        if sim[0, 1] >= self.join_threshold:
            return True
        core_a, core_b = label_core(a.text), label_core(b.text)
        if (core_a, core_b) == (a.text, b.text):
            return False
        if tuple(tokenize_for_bm25(core_a)) == tuple(tokenize_for_bm25(core_b)):
            return True
        return bool(self._similarity([core_a, core_b])[0, 1] >= self.join_threshold)

