"""No Python module builds HTML by hand: every fragment and report comes from a Jinja2
template with autoescape (chunklab.views.render), so no text can reach a page unescaped
because someone forgot a call, and no escaping helper is needed at all."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("chunklab", "frontend", "services")
GENERATED = REPO / "chunklab" / "v1"
TAG = re.compile(
    r"<\s*/?\s*(a|b|body|br|caption|circle|code|details|div|em|figure|g|h[1-6]|head|header|html|i|iframe|img|li"
    r"|line|meta|nav|ol|p|path|pre|rect|script|section|span|strong|style|summary|svg|table|tbody|td|text|th|thead"
    r"|title|tr|ul)(\s|/?>)",
    re.IGNORECASE,
)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings: prose about markup is allowed."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def markup_in(path: Path, root: Path = REPO) -> list[str]:
    """Every string literal (f-string pieces included) in path that holds an HTML or SVG tag."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _docstrings(tree)
    strings = sorted(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        ),
        key=lambda node: (node.lineno, node.col_offset),
    )
    return [
        f"{path.relative_to(root)}:{node.lineno}: {node.value[:60]!r}" for node in strings if TAG.search(node.value)
    ]


def python_files(root: Path = REPO) -> list[Path]:
    return [p for folder in FOLDERS for p in sorted((root / folder).rglob("*.py")) if GENERATED not in p.parents]


def test_no_module_builds_html_outside_the_templates():
    files = python_files()
    assert len(files) > 50  # the walk found the code
    assert [hit for path in files for hit in markup_in(path)] == []


def test_the_check_catches_concatenated_markup(tmp_path):
    """The check itself works: planted markup is reported, prose in a docstring is not."""
    planted = tmp_path / "frontend" / "bad.py"
    planted.parent.mkdir()
    planted.write_text(
        '"""Draws a <div> of the answer."""\n'
        "def card(name):\n"
        '    """A <span>, once."""\n'
        "    return f'<div class=\"card\">{name}</div>' + \"<br/>\" + '< 3 and > 2'\n"
    )
    assert markup_in(planted, tmp_path) == [
        "frontend/bad.py:4: '<div class=\"card\">'",
        "frontend/bad.py:4: '</div>'",
        "frontend/bad.py:4: '<br/>'",
    ]


def test_every_template_ships_as_package_data():
    """A plain (non-editable) install, as in the image, must carry every template."""
    import tomllib

    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    templates = [p for folder in FOLDERS for p in (REPO / folder).rglob("templates/*") if p.is_file()]
    assert len(templates) > 20
    missing = []
    for path in templates:
        package = path.parent.parent
        patterns = package_data.get(".".join(package.relative_to(REPO).parts), [])
        if not any(path.relative_to(package).match(pattern) for pattern in patterns):
            missing.append(str(path.relative_to(REPO)))
    assert missing == []
