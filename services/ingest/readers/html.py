"""HTML (a saved web page or an HTML export) into canonical text and a DocumentTree, through lxml.

The canonical text is a Markdown rendering of the page's content, as for DOCX
(ADR 0007): h1-h6 as `#` lines at their own levels, paragraphs as text, list
items as `- ` or `1. ` lines (nested lists indented), tables as Markdown
tables, `<pre>` as fenced code, blockquotes as `> ` lines; blocks separated
by a blank line. Inline whitespace collapses to one space (`<br>` is a line
break) and entities are decoded by the parser. `<title>` is metadata, and the
document's level-1 heading when the content has no h1 of its own.

The content is `<main>` when the page has one, else its only `<article>`,
else `<body>`; inside it, boilerplate is dropped by a fixed rule (ADR 0057):
scripts, styles, forms, embedded objects, `<nav>`, `<aside>`, page-level
`<header>`/`<footer>`, ARIA landmarks of the same kind, hidden elements and
cookie or consent banners.

Bounded before any Python walks the tree: libxml2 stops at nesting deeper
than 256 elements (the rest of the page would be lost, so the page is
refused), and a page that could hold more elements than the limit is first
counted by a parser that builds nothing, so no tree past the limit is built.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import lxml.html
from lxml import etree

from chunklab.errors import InvalidArgument, ResourceExhausted
from services.ingest.readers import html_meta
from services.ingest.readers.markdown import Parsed, Writer, build_tree, markdown_table

# libxml2's own depth limit without XML_PARSE_HUGE; deeper markup stops the parse.
MAX_DEPTH = 256
PIECE_CHARS = 1 << 16

_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_DROPPED_TAGS = {
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "object",
    "embed",
    "applet",
    "svg",
    "math",
    "canvas",
    "video",
    "audio",
    "map",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "nav",
    "aside",
    "dialog",
    "menu",
    "head",
}
_DROPPED_ROLES = {
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "search",
    "dialog",
    "alertdialog",
    "menu",
    "menubar",
    "toolbar",
}
# A page-level header or footer is a banner or content-info landmark: one that is
# inside none of these (HTML's own rule for their implicit ARIA roles).
_SECTIONING = {"article", "aside", "main", "nav", "section"}
_BANNER = re.compile(r"cookie|consent|gdpr", re.IGNORECASE)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_INLINE = {
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "big",
    "cite",
    "code",
    "data",
    "del",
    "dfn",
    "em",
    "font",
    "i",
    "img",
    "ins",
    "kbd",
    "label",
    "mark",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "time",
    "tt",
    "u",
    "var",
    "wbr",
    "br",
    "acronym",
    "nobr",
    "output",
    "meter",
    "progress",
    "ruby",
    "rt",
    "rp",
}
_PARAGRAPHS = {"p", "dt", "dd", "figcaption", "caption", "summary", "legend", "address"}
# Elements that break a line when they sit inside inline text (a list item's paragraphs,
# a link around a heading): the rest render as blocks of their own.
_BLOCKS = {
    *_HEADINGS,
    *_PARAGRAPHS,
    "div",
    "ul",
    "ol",
    "li",
    "pre",
    "table",
    "tr",
    "blockquote",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "figure",
    "dl",
    "hr",
    "details",
}
_CODE_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]+)")
# A line break from <br> while inline text is gathered (no parsed text holds NUL).
_BREAK = "\x00"
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


@dataclass(frozen=True)
class HtmlLimits:
    max_elements: int = 500_000


def read_html(name: str, data: bytes, limits: HtmlLimits = HtmlLimits()) -> Parsed:
    """The page's content as canonical text and tree, its declared date and language (the primary
    subtag, "" when it declares none); or InvalidArgument / ResourceExhausted."""
    source, encoding = html_meta.decode_html(name, data)
    root = _parse(name, _XML_DECLARATION.sub("", source, count=1), limits)
    title = _text(root.find("head/title")) if root.find("head/title") is not None else ""
    language, declared = html_meta.declared_language(root)
    json_ld = html_meta.json_ld(root)
    content, where = _content_root(root)
    removed = _drop_boilerplate(content)
    published = html_meta.published_date(root, content, json_ld)

    walker = _Walker()
    titled = bool(title) and not any(_text(h1) for h1 in content.iter("h1"))
    if titled:
        walker.writer.heading(1, title)
    walker.container(content)
    walker.flush()
    if len(walker.writer.blocks) == titled:
        raise InvalidArgument(_no_text(name, where, removed, title))
    writer = walker.writer
    text = writer.text()
    metadata = {"encoding": encoding, "content_element": where}
    metadata.update(
        {
            key: value
            for key, value in (
                ("title", title),
                ("lang", declared),
                ("description", _meta(root, "description")),
                ("author", _meta(root, "author")),
                ("boilerplate_removed", _counted(removed)),
            )
            if value
        }
    )
    return Parsed(text, build_tree(text, writer.blocks), metadata, published, language)


def _parse(name: str, source: str, limits: HtmlLimits):
    """The parsed page, refused past libxml2's limits or the element limit before its tree is built."""
    # Each element has a start tag or is implied (html, head, body, a paragraph around loose text),
    # so a page with few enough start tags cannot pass the limit and needs no count.
    start_tags = source.count("<") - source.count("</")
    if 2 * start_tags + 3 > limits.max_elements:
        _check_element_count(name, source, limits)
    parser = lxml.html.HTMLParser(huge_tree=False)
    try:
        root = lxml.html.document_fromstring(source, parser=parser)
    except etree.ParserError:
        raise InvalidArgument(f"{name!r} holds no HTML elements that a parser can read") from None
    for entry in parser.error_log:
        if entry.type_name == "ERR_RESOURCE_LIMIT" or "Excessive depth" in entry.message:
            if "depth" in entry.message:
                raise ResourceExhausted(
                    f"{name!r} nests elements more than {MAX_DEPTH} deep (line {entry.line}, column "
                    f"{entry.column}), past which the rest of the page would be lost; no real page nests so "
                    "deep: save the page again from a browser, or its article alone"
                )
            raise ResourceExhausted(
                f"{name!r} is past a limit of the HTML parser at line {entry.line} ({entry.message.strip()}): "
                "most likely one run of text or one attribute over 10 MB; split that part of the page"
            )
    return root


class _TooManyElements(Exception):
    pass


class _ElementCounter:
    """A parser target: builds nothing, counts elements, stops the parse past the limit."""

    def __init__(self, limit: int) -> None:
        self.limit, self.elements = limit, 0

    def start(self, tag, attributes) -> None:
        self.elements += 1
        if self.elements > self.limit:
            raise _TooManyElements

    def close(self) -> int:
        return self.elements


def _check_element_count(name: str, source: str, limits: HtmlLimits) -> None:
    """Counts the page's elements in pieces, memory flat, refusing it once past the limit."""
    parser = etree.HTMLParser(target=_ElementCounter(limits.max_elements), huge_tree=False)
    try:
        for start in range(0, len(source), PIECE_CHARS):
            parser.feed(source[start : start + PIECE_CHARS])
        parser.close()
    except _TooManyElements:
        raise ResourceExhausted(
            f"{name!r} holds more than {limits.max_elements:,} HTML elements, the limit for one page; "
            "split it into several pages, or save only its article"
        ) from None
    except etree.ParserError:
        pass  # nothing to count: the parse proper says what is wrong


def _content_root(root):
    """(the element holding the content, what it is): <main>, the only <article>, or <body>."""
    for main in root.iterfind(".//main"):
        if not _boilerplate(main):
            return main, "main"
    for main in root.xpath("//*[@role='main']"):
        if not _boilerplate(main):
            return main, "main"
    articles = [a for a in root.iterfind(".//article") if not _boilerplate(a)]
    if len(articles) == 1:
        return articles[0], "article"
    body = root.find("body")
    return (body if body is not None else root), "body"


def _boilerplate(element) -> str:
    """Why element is boilerplate ("" when it is content): a tag, role, hidden, or cookie banner."""
    tag = element.tag
    if tag in _DROPPED_TAGS:
        return tag
    role = (element.get("role") or "").strip().lower()
    if role in _DROPPED_ROLES:
        return f"role={role}"
    if tag in ("header", "footer") and not any(a.tag in _SECTIONING for a in element.iterancestors()):
        return tag
    if (
        element.get("hidden") is not None
        or (element.get("aria-hidden") or "").lower() == "true"
        or _HIDDEN_STYLE.search(element.get("style") or "")
    ):
        return "hidden"
    if _BANNER.search(f"{element.get('id') or ''} {element.get('class') or ''}"):
        return "cookie banner"
    return ""


def _drop_boilerplate(content) -> Counter:
    """Drops boilerplate under content (each tail's text stays) and counts what went, by reason."""
    etree.strip_elements(content, etree.Comment, etree.ProcessingInstruction, with_tail=False)
    removed: Counter = Counter()
    pending, dropped = [content], []
    while pending:
        for child in pending.pop():
            reason = _boilerplate(child)
            if reason:
                removed[reason] += 1
                dropped.append(child)
            else:
                pending.append(child)
    for element in dropped:
        element.drop_tree()
    return removed


def _inline(element, skip: frozenset[str] = frozenset()) -> list[str]:
    """element's text pieces, `<br>` as a line break, children tagged in skip left out."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == "br":
            parts.append(_BREAK)
        elif child.tag in _BLOCKS and child.tag not in skip:
            parts += [_BREAK, *_inline(child, skip), _BREAK]
        elif child.tag not in skip:
            parts += _inline(child, skip)
        parts.append(child.tail or "")
    return parts


def _lines(pieces: list[str]) -> list[str]:
    """Joined inline pieces as non-empty lines, each run of whitespace one space, none at the ends."""
    return [line for line in (" ".join(piece.split()) for piece in "".join(pieces).split(_BREAK)) if line]


def _text(element, skip: frozenset[str] = frozenset()) -> str:
    """element's text on one line."""
    return " ".join(_lines(_inline(element, skip)))


class _Walker:
    """Renders the content's blocks into a Writer, gathering loose inline text into paragraphs."""

    def __init__(self) -> None:
        self.writer = Writer()
        self.pending: list[str] = []
        self.quote = 0

    def flush(self) -> None:
        lines = _lines(self.pending)
        self.pending = []
        if lines:
            prefix = "> " * self.quote
            self.writer.paragraph("\n".join(prefix + line for line in lines))

    def container(self, element) -> None:
        self.pending.append(element.text or "")
        for child in element:
            tag = child.tag
            if tag == "br":
                self.pending.append(_BREAK)
            elif tag in _INLINE and not any(e.tag in _BLOCKS for e in child.iterdescendants()):
                self.pending += _inline(child)
            else:
                self.flush()
                self.block(child, tag)
            self.pending.append(child.tail or "")

    def block(self, element, tag: str) -> None:
        if tag in _HEADINGS:
            title = _text(element)
            if title:
                self.writer.heading(_HEADINGS[tag], title)
        elif tag in _PARAGRAPHS:
            self.pending = _inline(element)
            self.flush()
        elif tag in ("ul", "ol"):
            self.items(element, 0, continues=False)
        elif tag == "pre":
            self.code(element)
        elif tag == "table" and not _is_layout(element):
            self.table(element)
        elif tag == "blockquote":
            self.quote += 1
            self.container(element)
            self.flush()
            self.quote -= 1
        else:  # div, section, article, a layout table, an unknown element: its children are the blocks
            self.container(element)
            self.flush()

    def items(self, element, depth: int, continues: bool) -> bool:
        """Writes a list's items (nested lists indented under theirs); whether an item was written."""
        number = int(element.get("start")) if (element.get("start") or "").isdigit() else 1
        for item in element:
            if item.tag in ("ul", "ol"):  # a list directly in a list, as some editors write it
                continues = self.items(item, depth + 1, continues)
                continue
            if item.tag != "li":
                continue
            lines = _lines(_inline(item, frozenset({"ul", "ol"})))
            marker = "  " * depth + (f"{number}." if element.tag == "ol" else "-")
            if lines:
                indent = "\n" + " " * (len(marker) + 1)
                self.writer.list_item(indent.join(lines), marker, continues)
                continues, number = True, number + 1
            for nested in item:
                if nested.tag in ("ul", "ol"):
                    continues = self.items(nested, depth + 1, continues)
        return continues

    def code(self, element) -> None:
        code = "".join(_raw(element)).removeprefix("\n").rstrip()
        if code.strip():
            classes = " ".join(e.get("class") or "" for e in [element, *element.iterfind("code")])
            match = _CODE_LANGUAGE.search(classes)
            self.writer.code(code, match.group(1) if match else "")

    def table(self, element) -> None:
        caption = element.find("caption")
        if caption is not None:
            self.block(caption, "caption")
        rows = [
            [_text(cell) for cell in row.xpath("./th|./td")]
            for row in element.xpath("./tr|./thead/tr|./tbody/tr|./tfoot/tr")
        ]
        lines = markdown_table(rows)
        if lines:
            self.writer.table(lines)


def _raw(element) -> list[str]:
    """Text as written (a code block keeps its spaces and line breaks), `<br>` as a line break."""
    parts = [element.text or ""]
    for child in element:
        parts += ["\n"] if child.tag == "br" else _raw(child)
        parts.append(child.tail or "")
    return parts


def _is_layout(table) -> bool:
    """A table used for page layout: marked so, or holding headings or tables of its own."""
    if (table.get("role") or "").lower() in ("presentation", "none"):
        return True
    return any(e.tag in _HEADINGS or e.tag == "table" for e in table.iterdescendants())


def _meta(root, meta_name: str) -> str:
    for meta in root.iterfind(".//meta[@name]"):
        if meta.get("name", "").strip().lower() == meta_name:
            return " ".join((meta.get("content") or "").split())
    return ""


def _counted(removed: Counter) -> str:
    return ", ".join(f"{reason} {count}" for reason, count in sorted(removed.items()))


def _no_text(name: str, where: str, removed: Counter, title: str) -> str:
    found = f"its {where} element holds no text"
    if removed:
        found += f" once boilerplate is removed ({_counted(removed)} removed)"
    if title:
        found += f"; its title is {title!r}"
    return (
        f"{name!r} has no readable text: {found}. If a script builds the page in the browser, save it "
        "from the browser once it has loaded, or upload the text as .md or .txt"
    )
