"""Speech units from a streamed LLM reply: cut where a speaker would pause, as the text arrives.

A turn handler yields speech units; a model streams tokens ("Hel", "lo Dr", ". Rao", ...). This
turns the one into the other:

- the first unit may end at a clause (``,`` ``;`` ``:`` ``،`` ``؛`` ``—``) once it is
  ``first_min_chars`` long, or at any sentence end, so the caller hears the first audio soon;
- later units end at sentence ends only, and only once ``min_chars`` long (short sentences are
  joined, which a voice says more naturally);
- a unit that reaches ``max_chars`` without a boundary is cut at the last space before it (never
  inside a word, a number, a URL or an e-mail address);
- ``.`` ``!`` ``?`` ``…`` end a sentence only before a space or the end of the stream, so 3.14,
  1,00,000, 10:30, example.com/a?b=1 and a.b@example.org stay whole, and not after Dr, Mr, Mrs,
  Ms, Prof, e.g., i.e., U.S., a.m., an initial ("J.") or a list number ("1.") starting the unit;
- the roster's own full stops end a sentence wherever they stand: Devanagari (and Bengali,
  Assamese, Gurmukhi, Gujarati, Odia) danda ``।`` and double danda ``॥``, the Perso-Arabic full stop
  ``۔`` and question mark ``؟`` (Urdu, Kashmiri, Sindhi), Ol Chiki mucaad ``᱾`` ``᱿`` (Santali) and
  Meitei Mayek cheikhei ``꯫``; Tamil, Telugu, Kannada and Malayalam write ``.`` ``?`` ``!``;
- a line break ends a sentence too (a list item).

Lengths count code points. The TypeScript SDK's ``sdk/brain/units.ts`` behaves the same, case for
case (``sdk/speech_units_cases.json``). Written here rather than taken from a library: the
sentence splitters of the field (nltk punkt, pysbd, Pipecat's and LiveKit's) split whole text or
need a model, and none knows every roster script, streams, and has a TypeScript twin.
"""

import inspect
import re
from typing import Any, AsyncIterable, AsyncIterator, Iterable, List, Optional, Union

SPACE = (
    " \t\n\r\f\v\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# End a sentence only before a space: they also stand inside numbers, URLs and abbreviations.
LATIN_ENDS = ".!?\u2026"
# Never inside a word or number: a sentence ends where the run of them does.
SCRIPT_ENDS = "\u0964\u0965\u06d4\u061f\u1c7e\u1c7f\uabeb"
CLAUSES = ",;:\u060c\u061b\u2014"
CLOSERS = "\"')]}\u201d\u2019\u00bb"
OPENERS = "\"'([{\u201c\u2018\u00ab"
# Words that a "." after does not end a sentence after (lower case, without the dot).
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt vs approx dept fig govt inc ltd corp rs smt shri \u0921\u0949".split()
)
_DOTTED = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")  # e.g, U.S, a.m (the last dot is the end)
_INITIAL = re.compile(r"^[A-Z]$")
_LIST_NUMBER = re.compile(r"^[0-9]{1,3}$")

FIRST_MIN_CHARS = 20
MIN_CHARS = 30
MAX_CHARS = 200


class UnitSplitter:
    """Cuts streamed text into speech units; ``push`` each token, ``end`` when the stream ends.

    >>> s = UnitSplitter()
    >>> s.push("Hello Dr. Rao, good to hear you. I")
    ['Hello Dr. Rao, good to hear you.']
    >>> s.end()
    ['I']
    """

    def __init__(
        self,
        first_min_chars: int = FIRST_MIN_CHARS,
        min_chars: int = MIN_CHARS,
        max_chars: int = MAX_CHARS,
    ) -> None:
        for name, value in (("first_min_chars", first_min_chars), ("min_chars", min_chars),
                            ("max_chars", max_chars)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"UnitSplitter: {name} must be a whole number >= 0, got {value!r}")
        if max_chars < 1 or first_min_chars > max_chars or min_chars > max_chars:
            raise ValueError(
                "UnitSplitter: max_chars must be >= 1 and at least first_min_chars and min_chars"
            )
        self.first_min_chars = first_min_chars
        self.min_chars = min_chars
        self.max_chars = max_chars
        self._text = ""
        self._first = True

    def push(self, text: str) -> List[str]:
        """Adds streamed text; returns the units it completed (often none)."""
        if not isinstance(text, str):
            raise TypeError(f"UnitSplitter.push: expected a str, got a {type(text).__name__}")
        self._text += text
        return self._take(final=False)

    def end(self) -> List[str]:
        """The stream ended: returns the last units, the rest of the text included."""
        units = self._take(final=True)
        rest = self._text.strip(SPACE)
        self._text = ""
        if rest:
            units.append(rest)
            self._first = False
        return units

    def _take(self, final: bool) -> List[str]:
        units = []
        while True:
            self._text = self._text.lstrip(SPACE)
            cut = self._next_cut(final)
            if cut is None:
                return units
            unit = self._text[:cut].strip(SPACE)
            self._text = self._text[cut:]
            if unit:
                units.append(unit)
                self._first = False

    def _next_cut(self, final: bool) -> Optional[int]:
        """Where the next unit ends in the text, or None to wait for more."""
        text = self._text
        n = len(text)
        i = 0
        while i < n:
            c = text[i]
            end = None
            sentence = True
            if c == "\n":
                end = i
            elif c in LATIN_ENDS or c in SCRIPT_ENDS:
                j = i
                while j < n and (text[j] in LATIN_ENDS or text[j] in SCRIPT_ENDS):
                    j += 1
                while j < n and text[j] in CLOSERS:
                    j += 1
                run = text[i:j]
                if j == n and not final:
                    break  # the run may go on ("..." or a closing quote): wait
                if any(ch in SCRIPT_ENDS for ch in run):
                    end = j
                elif (j == n or text[j] in SPACE) and not (
                    run == "." and self._abbreviated(i)
                ):
                    end = j
                if end is None:
                    i = j
                    continue
            elif c in CLAUSES and self._first:
                if i + 1 < n and text[i + 1] in SPACE or (i + 1 == n and final):
                    end = i + 1
                    sentence = False
            if end is not None:
                size = len(text[:end].strip(SPACE))
                if size > self.max_chars:
                    break
                if (self._first and (sentence or size >= self.first_min_chars)) or (
                    sentence and size >= self.min_chars
                ):
                    return end
            i += 1
        if len(text.rstrip(SPACE)) > self.max_chars:
            return self._word_cut()
        return None

    def _abbreviated(self, dot: int) -> bool:
        """True when the "." at ``dot`` follows an abbreviation, an initial or a list number."""
        start = dot
        while start > 0 and self._text[start - 1] not in SPACE:
            start -= 1
        word = self._text[start:dot].lstrip(OPENERS)
        if word.lower() in ABBREVIATIONS or _DOTTED.match(word) or _INITIAL.match(word):
            return True
        return start == 0 and bool(_LIST_NUMBER.match(word))

    def _word_cut(self) -> Optional[int]:
        """The last space that leaves a unit of at most ``max_chars``, else the first space
        after (a long URL stays whole), else None."""
        text = self._text
        window = text[: self.max_chars + 1]
        for k in range(len(window) - 1, 0, -1):
            if window[k] in SPACE:
                return k
        for k in range(len(window), len(text)):
            if text[k] in SPACE:
                return k
        return None


async def speech_units(
    tokens: Union[AsyncIterable[str], Iterable[str]],
    first_min_chars: int = FIRST_MIN_CHARS,
    min_chars: int = MIN_CHARS,
    max_chars: int = MAX_CHARS,
) -> AsyncIterator[str]:
    """Speech units from a stream of text tokens (an async or plain iterable of str), as an async
    generator to ``yield`` from a turn handler::

        @brain.on_turn
        async def answer(turn, session):
            async for unit in speech_units(my_llm.stream(turn.text)):
                yield unit

    Each unit is yielded as soon as the token that completes it arrives. When the generator is
    closed early (the turn was cancelled), it closes ``tokens`` too if that is an async
    generator, so a model stream is released at once. See ``UnitSplitter`` for the rules.
    """
    splitter = UnitSplitter(first_min_chars, min_chars, max_chars)
    try:
        if hasattr(tokens, "__aiter__"):
            async for token in tokens:  # type: ignore[union-attr]
                for unit in splitter.push(token):
                    yield unit
        else:
            for token in tokens:  # type: ignore[union-attr]
                for unit in splitter.push(token):
                    yield unit
        for unit in splitter.end():
            yield unit
    finally:
        await _close(tokens)


async def _close(tokens: Any) -> None:
    if inspect.isasyncgen(tokens):
        await tokens.aclose()
