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
cookie or consent banners, and wiki and documentation furniture (edit links,
category blocks, language lists, heading permalinks such as Sphinx's "¶").
On a web page, trafilatura then chooses which of the rendered blocks are the
main text (html_main, ADR 0102); html_render renders them.

Bounded before any Python walks the tree: libxml2 stops at nesting deeper
than 256 elements (the rest of the page would be lost, so the page is
refused), and a page that could hold more elements than the limit is first
counted by a parser that builds nothing, so no tree past the limit is built.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass

import lxml.html
from lxml import etree

from chunklab.errors import InvalidArgument, ResourceExhausted
from services.ingest.readers import html_main, html_meta
from services.ingest.readers.html_render import Walker, text_of
from services.ingest.readers.markdown import Parsed, Writer, build_tree

# libxml2's own depth limit without XML_PARSE_HUGE; deeper markup stops the parse.
MAX_DEPTH = 256
PIECE_CHARS = 1 << 16

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
# Boilerplate that can enclose the page itself (_drop_boilerplate): landmarks and forms.
_ENCLOSING = {"header", "footer", "nav", "aside", "form"} | {
    f"role={role}" for role in ("banner", "contentinfo", "navigation", "complementary")
}
# Text a browser shows outside links (a menu's text is its links): what a page's own text is measured by.
_VISIBLE_TEXT = etree.XPath(".//text()[not(ancestor::script or ancestor::style or ancestor::template or ancestor::a)]")
_VERBATIM = {"pre", "code", "kbd", "samp", "textarea"}
# Soft hyphen, zero-width space, word joiner, zero-width no-break space; LRM, RLM, ALM; the bidi
# embeddings, overrides and isolates (_drop_invisible).
_INVISIBLE = re.compile("[\u00ad\u200b\u2060\ufeff\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
_BANNER = re.compile(r"cookie|consent|gdpr", re.IGNORECASE)
# Page furniture that wikis and documentation generators mark by class or id: a heading's edit link
# ("[edit]"), the category block under an article, the list of the page in other languages.
_FURNITURE = (
    (re.compile(r"(?:^|[\s_-])(?:mw-)?edit-?(?:section|link)s?(?:$|\s)", re.IGNORECASE), "edit link"),
    (
        re.compile(r"(?:^|\s)(?:catlinks|categor(?:y|ies)(?:-links)?|mw-normal-catlinks)(?:$|\s)", re.IGNORECASE),
        "category block",
    ),
    (
        re.compile(
            r"(?:^|\s)(?:p-lang|interlanguage-link|language-?(?:list|links|switcher|selector))(?:$|\s)", re.IGNORECASE
        ),
        "language list",
    ),
)
# A permalink beside a heading (Sphinx's "¶", a "#" or "§" anchor) names the heading, it is not its text.
_PERMALINK_MARKS = {"¶", "#", "§", "🔗", "¶¶"}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


@dataclass(frozen=True)
class HtmlLimits:
    max_elements: int = 500_000


def read_html(name: str, data: bytes, limits: HtmlLimits = HtmlLimits()) -> Parsed:
    """The page's content as canonical text and tree, its declared date and language (the primary
    subtag, "" when it declares none); or InvalidArgument / ResourceExhausted."""
    source, encoding = html_meta.decode_html(name, data)
    root = _parse(name, _XML_DECLARATION.sub("", source, count=1), limits)
    _drop_invisible(root)
    title = text_of(root.find("head/title")) if root.find("head/title") is not None else ""
    language, declared = html_meta.declared_language(root)
    json_ld = html_meta.json_ld(root)
    page = copy.deepcopy(root)  # as published, for trafilatura: the boilerplate rule edits root
    content, where = _content_root(root)
    removed = _drop_boilerplate(content)
    published = html_meta.published_date(root, content, json_ld)

    titled = bool(title) and not any(text_of(h1) for h1 in content.iter("h1"))
    writer = _written(_writer(page, content, title), content, title if titled else "")
    chosen = isinstance(writer, html_main.MainTextWriter)
    if chosen and writer.written_share() < html_main.MIN_WRITTEN_SHARE:
        # The page's blocks and trafilatura's lines did not line up: a safety net, not a choice.
        writer = _written(Writer(), content, title if titled else "")
        where += ", read whole: its blocks held too little of the main text trafilatura chose"
    elif chosen and writer.dropped:
        removed["furniture"] += writer.dropped
        where += ", main text by trafilatura"
    elif html_main.too_long(content):
        where += f", read whole: over {html_main.MAX_CHOOSING_CHARS:,} characters, too long to choose its main text"
    if len(writer.blocks) == titled:
        raise InvalidArgument(_no_text(name, where, removed, title, sum(1 for _ in content.iter("img"))))
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


def _written(writer, content, title: str):
    """The writer after the content's blocks, under the title as a level-1 heading if one is given."""
    if title:
        writer.heading(1, title)
    walker = Walker(writer)
    walker.container(content)
    walker.flush()
    return writer


def _writer(page, content, title: str):
    """A Writer of the main text's blocks (html_main), or of every block when the content is too
    short or too long for a choice or trafilatura finds no main text."""
    if not html_main.worth_choosing(content) or html_main.too_long(content):
        return Writer()
    kept = html_main.main_text(page)
    return Writer() if kept is None else html_main.MainTextWriter(kept, title)


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


def _drop_invisible(root) -> None:
    """Takes out the characters a page shows as nothing, which would cut a word in two for a
    tokenizer: soft hyphens (German and Dutch sites break long words with `&shy;`), zero-width
    spaces, word joiners, and the marks and embeddings of bidirectional text. Joiners that shape
    a script or an emoji (ZWJ, ZWNJ) stay, and so does code as written (rustc's manual shows the
    override characters its lint warns of). Done on the tree, so trafilatura sees the same text."""
    for element in root.iter():
        for side in ("text", "tail"):
            value = getattr(element, side)
            if not value or not _INVISIBLE.search(value):
                continue
            own = side == "text" and element.tag in _VERBATIM  # a tail is its parent's text
            if own or any(ancestor.tag in _VERBATIM for ancestor in element.iterancestors()):
                continue
            setattr(element, side, _INVISIBLE.sub("", value))


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
    names = f"{element.get('id') or ''} {element.get('class') or ''}"
    if _BANNER.search(names):
        return "cookie banner"
    return _furniture(element, names)


def _furniture(element, names: str) -> str:
    """Why element is page furniture ("" when it is not): an edit link, category block, language list
    or heading permalink."""
    for pattern, reason in _FURNITURE:
        if pattern.search(names):
            return reason
    anchor = element.tag == "a" and (element.get("href") or "").startswith("#")
    if anchor and ("headerlink" in names or element.text_content().strip() in _PERMALINK_MARKS):
        return "permalink"
    if element.tag in ("ul", "ol"):
        links = element.findall("li/a")
        if len(links) >= 3 and len(links) == len(element) and all(a.get("hreflang") for a in links):
            return "language list"
    return ""


def _drop_boilerplate(content) -> Counter:
    """Drops boilerplate under content (each tail's text stays) and counts what went, by reason.
    A landmark or form that holds most of the content's text (links aside: a menu is links) is
    the page, not its furniture, and is looked into instead: a `<div>` left open in a page's
    `<header>` puts the rest of the page inside it for libxml2's parser, which knows HTML 4
    only; ASP.NET puts a page in one `<form>`."""
    etree.strip_elements(content, etree.Comment, etree.ProcessingInstruction, with_tail=False)
    removed: Counter = Counter()
    pending, dropped = [content], []
    total = _visible_chars(content)
    while pending:
        for child in pending.pop():
            reason = _boilerplate(child)
            if reason in _ENCLOSING and 2 * _visible_chars(child) > total:
                reason = ""
            if reason:
                removed[reason] += 1
                dropped.append(child)
            else:
                pending.append(child)
    for element in dropped:
        element.drop_tree()
    return removed


def _visible_chars(element) -> int:
    """The characters of text under element that a browser shows, links, scripts and styles aside."""
    return sum(len(text.strip()) for text in _VISIBLE_TEXT(element))


def _meta(root, meta_name: str) -> str:
    for meta in root.iterfind(".//meta[@name]"):
        if meta.get("name", "").strip().lower() == meta_name:
            return " ".join((meta.get("content") or "").split())
    return ""


def _counted(removed: Counter) -> str:
    return ", ".join(f"{reason} {count}" for reason, count in sorted(removed.items()))


def _no_text(name: str, where: str, removed: Counter, title: str, images: int = 0) -> str:
    found = f"its {where} element holds no text"
    if images:
        found += f", only {'1 image' if images == 1 else f'{images:,} images'}"
    if removed:
        found += f" once boilerplate is removed ({_counted(removed)} removed)"
    if title:
        found += f"; its title is {title!r}"
    if images:  # a page of pictures: no script is missing, there is no text to read
        return f"{name!r} has no readable text: {found}. Only text is read: upload the page's text as .md or .txt"
    return (
        f"{name!r} has no readable text: {found}. If a script builds the page in the browser, save it "
        "from the browser once it has loaded, or upload the text as .md or .txt"
    )
