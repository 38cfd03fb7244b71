"""The fixed character vocabulary shared by every checkpoint, with encode and decode.

The base checkpoint fixes the vocabulary, so it already holds every symbol a later environment may use:
`-` and `*` besides `+`, and `(`, `)` and `,` for a second call syntax. Index 0 is padding and never
appears in text.
"""

from __future__ import annotations

PAD = "\x00"  # padding: fills short rows of a batch, never part of a transcript
BOS = "\n"  # start of a line: every worksheet line and every episode begins after one
CALL_OPEN = "B"  # the model opens a calculator call
CLOSE = "|"  # closes a call, a tool result and the final answer
ERROR = "?"  # what the calculator writes for a call it cannot parse

CHARS = PAD + BOS + "0123456789+-*=" + CALL_OPEN + CLOSE + ERROR + "(),"
VOCAB_SIZE = len(CHARS)
PAD_ID = 0
_INDEX = {c: i for i, c in enumerate(CHARS)}


class VocabError(ValueError):
    """Text holds a character outside the vocabulary."""


def encode(text: str) -> list[int]:
    """Token ids of `text`; raises VocabError naming the first unknown character."""
    try:
        return [_INDEX[c] for c in text]
    except KeyError as e:
        raise VocabError(f"character {e.args[0]!r} is not in the vocabulary {CHARS[1:]!r}") from None


def decode(ids) -> str:
    """Text of token ids; padding decodes to nothing."""
    return "".join(CHARS[i] for i in ids if i != PAD_ID)
