"""How pastes get mangled, undone before the splitter or any parser sees a line.

Dumps reach us through forums, PDFs, chat and web pages, which change them in a few
recurring ways. `normalize()` undoes them on a stream of text blocks, line by line, so its
result never depends on where a block ends; it is called from one place, `text.split()`.

- HTML escaping (`&gt;`, `&lt;`, `&amp;`, `&nbsp;`, `&#39;`) and the few tags a forum or a
  web page wraps output in (`<pre>`, `<code>`, `<br>`...). Only those tags: `<HUAWEI>` and
  `<Sysname>` are prompts, not markup.
- Markdown code fences (```` ``` ````, `~~~`), alone on a line or glued to its ends, and
  Markdown backslash escapes (`\\<Sysname\\>`, `couldn\\'t`).
- Typographic quotes from word processors and PDFs (`couldn’t fragment`), zero-width
  characters, no-break spaces between words (kept between digits: `1 234 567` in a French
  locale is a grouped number, read by `model.to_int`).
- PDF page breaks: form feeds, and page header/footer lines (`Page 12 of 40`,
  `OmniSwitch CLI Reference Guide ... page 29-79`; bare `- 12 -` / `3-216` only next to a form
  feed) that a copy drops between two lines of output.
- A whole dump flattened to one line (a chat box, a web form, a PDF copy): a line longer
  than any command prints and holding many counters is cut again at the places the
  format's lines start, chosen by what the line looks like (SNMP OIDs, kernel counter names,
  `label = value`, Huawei `Input:`/`Fragment:` groups, Cisco `Rcvd:`/`Frags:`, count-first
  `N label`); a single-line JSON document (`nstat -j`) gets one key a line, as `-p` prints
  it. Line numbers after a re-cut line count the re-cut lines.

Every regex here is anchored on a literal or on a bounded look-around, and runs over a
block once, so time stays linear in the input, long lines included; lines longer than
MAX_PASTE_LINE pass through untouched (the splitter skips them with a note).
"""
from __future__ import annotations

import re


from typing import Iterable, Iterator, List, Tuple
from .lazyre import lazy

MAX_PASTE_LINE = 1 << 20   # a flattened dump longer than this is not a dump
FLAT_MIN = 200             # no command we read prints a line this long
PIECE = 8 << 10            # a block is cleaned in pieces of about this size (only those that need it)

_ZW_CHARS = "\u200b\u200c\u200d\u2060\ufeff"
_ZERO_WIDTH = lazy("[" + _ZW_CHARS + "]")
_QUOTES = {"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'", "\u201c": '"', "\u201d": '"'}
_QUOTE_RX = lazy("[\u2018\u2019\u201b\u2032\u201c\u201d]")
# A no-break space that is not between two digits is layout, not digit grouping.
_NBSP_LAYOUT = lazy("(?<![0-9])[\u00a0\u202f]|[\u00a0\u202f](?![0-9])")
_ENTITY = lazy(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,7});")
_TAG = lazy(r"</?(?:pre|code|samp|kbd|tt|p|div|span|b|i|em|strong|font|blockquote)(?:[ \t][^<>\n]{0,200})?>"
            r"|<br[ \t]*/?>", re.I)
# A fence marker, with the language word when nothing else follows it on the line.
_FENCE = lazy(r"(?:```|~~~)(?:[\w+.-]{1,20}(?=[ \t]*(?:\n|$)))?")
# PDF page header/footer lines: a line holding "page N" is tested wherever it is (found by
# the literal "age", fast); bare numeric footers (`- 12 -`, `3-216`) only in a block that
# holds a form feed, the one sign that a PDF's pages were copied (alone they look like data).
_AGE = lazy("age|AGE")
_PAGE_LINE = lazy(
    r"[ \t]*(?:[-\u2013\u2014][ \t]*)?page[ \t]+[0-9]{1,4}(?:[ \t]*(?:of|/|-|\u2013)[ \t]*[0-9]{1,4})?"
    r"(?:[ \t]*[-\u2013\u2014])?[ \t]*"                                      # Page 12 / Page 3 of 40
    r"|[^\n=]{0,120}\bpage[ \t]+[0-9]{1,4}(?:[ \t]*(?:-|\u2013|of|/)[ \t]*[0-9]{1,4})?[ \t]*",  # title ... page 29-79
    re.I)
_PAGE_NUMBER = lazy(
    r"^(?:[ \t]*[-\u2013\u2014])?[ \t]*[0-9]{1,4}[ \t]*[-\u2013\u2014](?:[ \t]*[0-9]{1,4})?(?:[ \t]*[-\u2013\u2014])?[ \t]*$",
    re.M)
# Markdown's backslash escapes (`\<Sysname\>`, `couldn\'t`) in docs rendered from Markdown sources.
_MD_ESCAPE = lazy(r"\\(?=[<>'_*#`\[\]])")

# -------------------------------------------------------------- re-cutting flattened lines
# A break goes before a command prompt wherever the line is (two dumps flattened together).
_PROMPT = r"[^\s]{0,64}[#>$%][ \t]?(?:show|sh|display|dis|netstat|nstat|snmpwalk|snmpbulkwalk|snmpget|netsh|cat)[ \t]"
# (what the line looks like, where its lines start); the first that fits is used. Every
# break point is whitespace not preceded by whitespace, so a long run of blanks costs one pass.
_CUTS = (
    (lazy(r'\{[ \t]*"'), lazy(r'(?<=[,{])(?=[ \t]*")|(?<![ \t])[ \t]+(?=\{[ \t]*")')),  # JSON (nstat -j): a key a line
    (lazy(r"-MIB::|\biso\.3\.6\.1\.|(?:^|[ \t])\.?1\.3\.6\.1\.2\."),
     lazy(r"(?<![ \t])[ \t]+(?=(?:[+/#-]{1,2}[ \t]?)?(?:[A-Za-z][\w-]{0,40}-MIB::|iso\.3\.6\.1\.|\.?1\.3\.6\.1\.)|"
          + _PROMPT + ")")),
    (lazy(r"\b(?:Ip6?|Icmp6?|Tcp|Udp6?)[A-Z]\w{0,40}[ \t]+[0-9]"),
     lazy(r"(?<![ \t])[ \t]+(?=#kernel|(?:Ip|Ip6|IpExt|Icmp|Icmp6|IcmpMsg|Tcp|TcpExt|Udp|Udp6|UdpLite|UdpLite6"
          r"|MPTcpExt|Sctp)[A-Z]\w{0,40}[ \t]+[0-9]|" + _PROMPT + ")")),
    (lazy(r"Reassembling:|Received packets:|Sent packets:"),
     lazy(r"(?<![ \t])[ \t]+(?=(?:Input|Output|Fragment|Reassembling|Sent packets|Received packets|Extension header"
          r"|filter|IPv6 [Pp]rotocol|ICMPv6 [Pp]rotocol|ICMP [Pp]rotocol):|" + _PROMPT + ")")),
    (lazy(r"MIB-II IP"),                                               # netsh show ipstats
     lazy(r"(?<=[0-9])[ \t]+(?=[^\x00-\x7f]|[A-Z])|(?<=\u6709\u52b9|\u7121\u52b9)[ \t]+|(?:(?<=Enabled)|(?<=Disabled))[ \t]+|(?<=--)[ \t]+"
          r"|(?<![ \t])[ \t]+(?=MIB-II|-{4}|" + _PROMPT + ")")),
    (lazy(r"IP Statistics and Errors"),                                 # Omni Switch/Router `ips`
     lazy(r"(?<=[0-9%])[ \t]+(?=[A-Z])|(?<![ \t])[ \t]+(?=IP Statistics and Errors|" + _PROMPT + ")")),
    (lazy(r"\S[ \t]*=[ \t]*[0-9]"),
     lazy(r"(?<=[0-9]),?[ \t]+(?=[^\W\d_])|(?:(?<=Datagrams received)|(?<=Datagrams sent))[ \t]+"
          r"|(?<![ \t])[ \t]+(?=(?:IPv4|IPv6|IP|ICMPv4|ICMPv6|TCP|UDP|Interface)"
          r"(?: Statistics\b|-Statistik\b)|" + _PROMPT + ")")),
    (lazy(r"\b(?:Rcvd|Frags|Sent):"),
     lazy(r"(?<![ \t])[ \t]+(?=[A-Z][\w/-]{0,20}[ \t]statistics:|(?:Rcvd|Sent|Frags|Bcast|Mcast|Drop"
          r"|Opts|Reinj|Port):|" + _PROMPT + ")")),
    (lazy(r"[0-9] [a-z]"),
     # net-tools 2.x opens Ip: with "Forwarding: 2": the cut goes after its value, not its colon
     lazy(r"(?<=[A-Za-z)\]])[ \t]+(?=[0-9][0-9,]{0,25} [a-z(])|(?<=:)(?<!Forwarding:)[ \t]+(?=[0-9])"
          r"|(?<=Forwarding: [0-9])[ \t]+(?=[0-9])"
          r"|(?<![ \t])[ \t]+(?=[A-Za-z][\w-]{0,20}:(?:[ \t]|$)|" + _PROMPT + ")")),
)
_COUNTERS = lazy(r"[0-9]")


# InfluxDB line protocol (`nstat,host=h,name=snmp6 Ip6InReceives=5i,... 1742837823000000000`): one long
# line by design, never a flattened dump
_LINE_PROTOCOL = lazy(r"[ \t>]*[A-Za-z_][\w.-]*(?:,[^\s,=]+=[^\s,]+)+[ \t]+[^\s,=]+=[^\s,]+,[^\s,=]+=")


# Long lines that are whole as printed: `ip -d link` detail lines (a bridge's runs past 1,000
# characters, and "... minmtu 0 maxmtu 0 addrgenmode ..." looks like count-first pairs).
_WHOLE = lazy(r"\b(?:addrgenmode|numtxqueues|gso_max_size|promiscuity|bridge_slave|forward_delay|dstport)\b")


def _recut(line: str) -> str:
    """A flattened dump cut back into lines (unchanged when it does not look like one)."""
    if len(_COUNTERS.findall(line, 0, 4096)) < 4 or _LINE_PROTOCOL.match(line) or _WHOLE.search(line, 0, 4096):
        return line
    for looks, cut in _CUTS:
        if looks.search(line):
            return cut.sub("\n", line)
    return line


def _drop_page_lines(text: str) -> str:
    """The text with PDF page header/footer lines emptied (their line breaks kept)."""
    pieces: List[str] = []
    kept = 0                  # text[kept:] is not copied yet
    decided = 0               # candidates before this offset are decided
    for m in _AGE.finditer(text):
        if m.start() < decided or m.start() == 0 or text[m.start() - 1] not in "pP":
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        end = len(text) if end == -1 else end
        decided = end
        if end - start <= 160 and _PAGE_LINE.fullmatch(text, start, end):
            pieces.append(text[kept:start])
            kept = end
    if pieces:
        pieces.append(text[kept:])
        text = "".join(pieces)
    return text


_ASCII_TRIGGERS = "&<\\\f"
_LONG_LINE = lazy(r"\n([^\n]{%d,})" % FLAT_MIN)


def _recut_long(text: str) -> str:
    """The text with each line of FLAT_MIN characters or more re-cut (found from its line
    break, a literal: a loop over every line cost more than the rest of the clean-up)."""
    out, last = [], 0
    first = text.find("\n")
    if (first if first != -1 else len(text)) >= FLAT_MIN:
        out.append(_recut(text[:first] if first != -1 else text))
        last = first if first != -1 else len(text)
    for m in _LONG_LINE.finditer(text, last):
        out += [text[last:m.start(1)], _recut(m.group(1))]
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _page_candidate(text: str) -> bool:
    """Some "page" in any case: where _drop_page_lines looks (one lower-cased copy and one
    substring search cost less than a search per spelling or a character-class regex)."""
    return "page" in text.lower()


def long_line(text: str, start: int = 0, end: int = -1) -> bool:
    """Whether text[start:end] (whole lines; the end of the text by default) holds a line of
    FLAT_MIN characters or more."""
    if end < 0:
        end = len(text)
    return (text.find("\n", start, start + FLAT_MIN) == -1 and end - start >= FLAT_MIN
            or _LONG_LINE.search(text, start, end) is not None)


def _fenced(text: str) -> bool:
    """A Markdown fence anywhere (a lone ~ is a home directory in a prompt). The one-character
    test first: a search for a run of one character skips one position at a time."""
    return ("`" in text and "```" in text) or ("~" in text and "~~~" in text)


def inert(text: str) -> bool:
    """True when clean() leaves `text` (whole lines) as it is, whatever surrounds it: none of
    the characters any step looks for, no page line candidate, no line of FLAT_MIN or more."""
    return lines_only(text) and not _page_candidate(text) and not long_line(text)


def lines_only(text: str) -> bool:
    """True when clean() can change `text` (whole lines) only through its page-line and
    long-line steps, which look at one line at a time: none of the characters any other
    step looks for (a form feed included), no fence. Cheap (substring tests), where those
    two steps cost a pass each over the text."""
    if text.isascii():
        if any(c in text for c in _ASCII_TRIGGERS):
            return False
    elif _TRIGGER_CHARS.search(text):
        return False
    return not _fenced(text)


_DIGIT_RUN = lazy(r"[0-9]+")


def safe_lines(text: str, digits: int) -> bool:
    """True when the page-line and long-line steps leave every line of `text` as it is, and
    would with each of its digit runs up to `digits` long (the lines of a snapshot shape,
    whatever its numbers: parsers/text.py reads such text before it is cleaned)."""
    if _page_candidate(text):
        return False
    for line in text.split("\n"):
        if len(line) >= FLAT_MIN // 2:
            runs = _DIGIT_RUN.findall(line)
            if len(line) + sum(digits - len(r) for r in runs) >= FLAT_MIN:
                return False
    return True


def clean(text: str) -> str:
    """One run of complete lines, paste damage undone (the same object when nothing is to do:
    inert() answers that with plain substring searches, where _clean's trigger regex has
    unanchored alternatives tried at every position)."""
    if inert(text):
        return text
    if len(text) <= PIECE or "\f" in text:    # a form feed's footer rule looks at the whole block
        return _clean(text)
    # Every other step works within a line: clean the pieces that need it, pass the rest as is.
    out = []
    at = 0
    while at < len(text):
        end = text.find("\n", at + PIECE) + 1 or len(text)
        piece = text[at:end]
        out.append(piece if inert(piece) else _clean(piece))
        at = end
    return "".join(out)


_TRIGGER_CHARS = lazy("[&<\\\\\f\u200b\u200c\u200d\u2060\ufeff\u00a0\u202f\u2018\u2019\u201b\u2032\u201c\u201d]")


def _clean(text: str) -> str:
    """One run of complete lines, paste damage undone (every step looks for its own trigger)."""
    if "\f" in text:         # a PDF's page break: its numeric footers go too (see _PAGE_NUMBER)
        text = _PAGE_NUMBER.sub("", text.replace("\f", "\n"))
    if not text.isascii() and any(c in text for c in _ZW_CHARS):
        text = _ZERO_WIDTH.sub("", text)
    if "<" in text:
        text = _TAG.sub(lambda m: "\n" if m.group(0)[1:3].lower() == "br" else "", text)
    if "&" in text:
        import html        # only for a paste with entities: its import compiles a pattern too
        text = _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    if not text.isascii() and any(c in text for c in _QUOTES):
        text = _QUOTE_RX.sub(lambda m: _QUOTES[m.group(0)], text)
    if "\\" in text:
        text = _MD_ESCAPE.sub("", text)
    if "\u00a0" in text or "\u202f" in text:
        text = _NBSP_LAYOUT.sub(" ", text)
    if _fenced(text):
        text = _FENCE.sub("", text)
    if _page_candidate(text):
        text = _drop_page_lines(text)
    if long_line(text):
        text = _recut_long(text)
    return text


def normalize(blocks: Iterable[str]) -> Iterator[str]:
    """Blocks of text in, the same text with paste damage undone out (see the module doc).

    Works on complete lines only, carrying the unfinished last line of a block into the
    next, so the output text is the same for any block size. A line longer than
    MAX_PASTE_LINE is passed through untouched.
    """
    for text, _ in _lines(blocks, False):
        yield text


def normalize_later(blocks: Iterable[str]) -> Iterator[Tuple[str, bool]]:
    """normalize() as (text, done) pairs, where a run of whole lines comes out as it is, done
    False, for the reader to clean() the parts it reads line by line (every step but the
    form feed's works within a line, so a block holding one is cleaned at once): parsers/text.py
    does not need that for a snapshot that a known shape matches whole where cleaning would
    change nothing (raw_safety), and clean() was half of the reading time on a cron log and a
    fifth on a mixed corpus."""
    return _lines(blocks, True)


LONG = "long"      # raw_safety(): safe where no line is long (checked per text: long_line())


def raw_safety(text: str, digits: int):
    """Whether clean() leaves every line of `text` as it is, and would with each of its digit
    runs 1 to `digits` long (the lines of a snapshot shape, whatever its numbers): True, False,
    or LONG when only a line made long by its numbers would be cleaned (a flattened dump's,
    re-cut). Only the page-line, long-line and entity steps look at digits, and a run's
    length only ever moves a match one way, so the shortest and the longest runs stand for all."""
    if _page_candidate(text):
        return False
    if lines_only(text):
        return True if safe_lines(text, digits) else LONG
    if "\f" in text:
        return False
    return all(clean(t) == t for t in (text, _DIGIT_RUN.sub("0", text), _DIGIT_RUN.sub("9" * digits, text)))


def _lines(blocks: Iterable[str], later: bool) -> Iterator[Tuple[str, bool]]:
    carry = ""
    raw = False                      # inside a line too long to normalize: pass it through
    for block in blocks:
        if raw:
            nl = block.find("\n")
            if nl == -1:
                yield block, True
                continue
            yield block[:nl], True
            block = block[nl:]
            raw = False
        text = carry + block
        cut = text.rfind("\n") + 1
        carry = text[cut:]
        if cut:
            lines = text[:cut]
            if later and "\f" not in lines:
                yield lines, False
            else:
                yield clean(lines), True
        if len(carry) > MAX_PASTE_LINE:
            yield carry, True
            carry, raw = "", True
    if carry:
        yield clean(carry), True


# -------------------------------------------------------------- notes glued to a value
# Pastes from blogs and chat carry a gloss on the value itself: `Reassembly Required = 0（重组的
# 请求数）`, `477139 fragments dropped after timeout. //计数持续上涨`, `12 reassemblies required
# <-- this keeps growing`, `= 10395    <-------`. The note goes (kept in the snapshot's warnings)
# and the value is read; nothing else on a line changes. A note starts at an arrow, a `//` or
# ` # ` comment, or parentheses holding text in another script (full-width or ASCII) right after
# a number; only where the line before it holds a value (starts or ends with a digit), so a
# prompt's `# netstat -s` or a `// IP-MIB::...` comment line stays whole. A period right after
# the value (`= 0.`) goes too.
_NOTED = lazy(r"<-|<=|\u2190|\u27f5|//|[ \t]#[ \t]|\uff08|[0-9][ \t]*\([^()\n]*[^\x00-\x7f]|[0-9]\.[ \t]*$",
              re.M)
_MARK = lazy(r"[ \t]*(?:<-+|<=+|\u2190|\u27f5)|(?:[ \t]+|(?<=[0-9.]))//|[ \t]+#(?=[ \t])|[ \t]*\uff08"
             r"|[ \t]*\((?=[^()\n]*[^\x00-\x7f][^()\n]*\)[ \t]*$)")
_VALUED = lazy(r"[ \t]*[0-9].*|.*(?<![A-Za-z_])[0-9]+\.?[ \t]*", re.S)


def _valued(kept: str) -> bool:
    """A line that holds a value: it starts with a number (count first) or ends with one."""
    return _VALUED.fullmatch(kept) is not None


def unglue(lines: List[str]) -> Tuple[List[str], List[str]]:
    """(lines without the notes glued to their values, one warning per note); see above."""
    if not _NOTED.search("\n".join(lines)):
        return lines, []
    out: List[str] = []
    notes: List[str] = []
    dots = 0
    for line in lines:
        m = _MARK.search(line)
        while m is not None and not _valued(line[:m.start()]):
            m = _MARK.search(line, m.end())
        kept = line if m is None else line[:m.start()].rstrip()
        if m is not None:
            notes.append(f"a note after a value was dropped before reading it: {line[m.start():].strip()[:80]!r}")
        if kept.endswith(".") and len(kept) > 1 and kept[-2] in "0123456789" and _valued(kept):
            kept = kept[:-1]
            dots += 1
        out.append(kept)
    if dots:
        notes.append(f"a period after the value was dropped before reading it ({dots} line(s))")
    return out, notes
