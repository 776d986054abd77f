"""Small words messages need: the article before a word made up at run time.

>>> with_article("adapter"), with_article("prompt version")
('an adapter', 'a prompt version')
>>> with_article("SFT"), with_article("KTO"), with_article("RFT"), with_article("DPO")
('an SFT', 'a KTO', 'an RFT', 'a DPO')
"""

from __future__ import annotations

# An initialism is read letter by letter: "an S-F-T", "a K-T-O".
_VOWEL_LETTER_NAMES = frozenset("AEFHILMNORSX")


def with_article(word: str) -> str:
    """``word`` after "a" or "an", by how it is read aloud (initialisms letter by letter)."""
    if not word:
        return word
    head = word.split()[0]
    if head.isupper() and len(head) > 1:
        vowel = head[0] in _VOWEL_LETTER_NAMES
    else:
        vowel = head[0].lower() in "aeiou"
    return f"{'an' if vowel else 'a'} {word}"
