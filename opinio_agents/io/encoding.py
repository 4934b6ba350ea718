"""Repair review text that was UTF-8 once and was read as Windows-1252 ("mojibake").

Public review dumps are often saved twice over: the UTF-8 bytes of "don't" (with a curly
apostrophe) read as Windows-1252 give "donâ€™t", of "café" give "cafÃ©". Readers see the
garbage in every key point cut from such a sentence, and a filter that drops symbols leaves
"donâ t". :func:`repair_mojibake` re-reads each such run as the UTF-8 it was; a run that is not
valid UTF-8 stays as it is, so text written in Windows-1252 or Latin-1 on purpose ("Ã la carte"
is not a run: "Ã" followed by a space) is left alone.

Example:
    >>> repair_mojibake("We didnâ€™t get to try the cafÃ©.")
    'We didn’t get to try the café.'
    >>> repair_mojibake("Prices in € and £ stay.")
    'Prices in € and £ stay.'
"""

from __future__ import annotations

import re

__all__ = ["repair_mojibake"]

#: The Windows-1252 readings of the UTF-8 continuation bytes 0x80-0xBF (0x81, 0x8D, 0x8F, 0x90
#: and 0x9D have none, so a run holding them cannot be this kind of mojibake).
_CONTINUATION = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ" + "".join(chr(code) for code in range(0xA0, 0xC0))
#: A UTF-8 lead byte read as Windows-1252, followed by as many continuation bytes as it announces.
_RUN = re.compile(
    f"[\u00c2-\u00df][{_CONTINUATION}]|[\u00e0-\u00ef][{_CONTINUATION}]{{2}}|[\u00f0-\u00f4][{_CONTINUATION}]{{3}}"
)
#: Text without any lead-byte character has nothing to repair (the common case: a quick test).
_LEADS = re.compile("[\u00c2-\u00f4]")


def _reread(match: re.Match[str]) -> str:
    run = match.group()
    try:
        return run.encode("cp1252").decode("utf-8")
    except UnicodeError:  # not the bytes of one UTF-8 character: leave it
        return run


def repair_mojibake(text: str) -> str:
    """``text`` with each UTF-8 character that was read as Windows-1252 re-read as UTF-8.

    Args:
        text: Review text.

    Returns:
        The text, repaired where a run of characters is the Windows-1252 reading of one
        UTF-8 character ("â€™" -> "’", "Ã©" -> "é", "â€“" -> "–"); otherwise unchanged.

    Example:
        >>> repair_mojibake("Great location â€“ close to the metro.")
        'Great location – close to the metro.'
    """
    if not _LEADS.search(text):
        return text
    return _RUN.sub(_reread, text)
