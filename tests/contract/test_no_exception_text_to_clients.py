"""No exception's own text reaches a client (ADR 0050, ADR 0079).

A library's exception speaks in the library's words ("Expecting value", "Error code: 500 - {...}",
"failed to connect to all addresses", "NOGROUP No such key"): a person cannot act on them, and
they can carry what the client should not see. So wherever code catches an exception that is
not one of ours (`except json.JSONDecodeError as exc`, `except Exception as exc`, a helper taking
`exc: sqlite3.Error`), the exception's text may go to the log only: a test walks the syntax tree of
every module of the services, the core library, the UI and the applications, and fails where such
an exception is formatted into text (an f-string, `str`, `repr`, `excerpt`, `quoted`, `.format`,
`.args`, `.message`, `.msg`, `.strerror`, `.details()`), except in a logging call or a comparison
(`"NOGROUP" in str(exc)` reads the text; it does not pass it on).

An exception of ours (a class defined in this repository: ServiceError and its kinds, LLMError,
UnusableReply, ClientError, ...) carries a sentence we wrote, and may be passed on. What an
exception says of where it happened (`.pos`, `.colno`, `.lineno`, `.start`, `.status_code`,
`.code()`) is the user's own input or a status, and may be quoted too.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("services", "chunklab", "frontend", "chunklab_app")
GENERATED = ROOT / "chunklab" / "v1"

# Attributes that say where or which status, not what the library thinks: quotable.
# An OSError's `strerror` is the system's standard name for its errno ("No such file or directory",
# "No space left on device"), which a person acts on; its str() adds the library's framing.
POSITIONS = {"pos", "colno", "lineno", "start", "end", "status_code", "code", "errno", "filename", "strerror"}
# Attributes and calls that are the exception's own words.
TEXT_ATTRIBUTES = {"args", "message", "msg", "details", "reason"}
TEXT_CALLS = {"str", "repr", "excerpt", "quoted", "format"}
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}

# (module, function) -> why the exception's text may reach a person there. Keep it short.
ALLOWED = {
    (
        "chunklab/errors.py",
        "from_rpc_error",
    ): "a peer's details are a sentence one of our services wrote (its interceptor sends no other text); "
    "gRPC's own words for a peer out of reach are recognised (said_by_grpc) and go to the log",
    (
        "chunklab/client/errors.py",
        "from_rpc_error",
    ): "the client library passes on the service's sentence (see above); gRPC's own words are recognised "
    "(said_by_grpc) and go to the log",
    ("chunklab/client/health.py", "_why"): "as above, for the health view",
    (
        "chunklab/rpc/server.py",
        "_abort_for",
    ): "exc.message is read only after isinstance(exc, ServiceError): our sentence",
    ("frontend/errors.py", "said"): "the gr.Error here is raised by user_error or told_as_sentence, with our sentence",
    (
        "frontend/app.py",
        "main",
    ): "the UI could not start: said on the terminal of the person starting it, which is its log",
    ("chunklab_app/stack.py", "load_sample_in_background"): "the stack launcher's terminal is the operator's log",
}
# In the UI, a ValueError is the refusal of its own input parsers (frontend/forms, the pages'
# parse_* helpers, chunklab.knobs): they raise our sentences and chain a library's ValueError
# `from None` into one of them. The UI speaks only to the person at it, never to a service.
OURS_IN = {"frontend": {"ValueError"}}


def _modules() -> list[Path]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if GENERATED not in path.parents:
                found.append(path)
    return found


def _ours() -> set[str]:
    """Names of the exception classes this repository defines (by their bases, to a fixpoint)."""
    classes: dict[str, list[str]] = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
    exceptions = {
        n
        for n in dir(builtins)
        if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
    }
    ours: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, bases in classes.items():
            if name not in ours and any(b in exceptions or b in ours for b in bases):
                ours.add(name)
                changed = True
    return ours


def _type_names(node: ast.expr | None) -> list[str]:
    if node is None:
        return ["BaseException"]
    if isinstance(node, ast.Tuple):
        return [n for element in node.elts for n in _type_names(element)]
    return [ast.unparse(node).rsplit(".", 1)[-1]]


def _mentions(node: ast.AST, name: str) -> bool:
    """Whether `node` uses the exception `name` for its words (not only where or which status)."""
    if isinstance(node, ast.Attribute) and node.attr in POSITIONS:
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in POSITIONS:
        return False
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == name
    ):
        return True  # a method of the exception (exc.details()): its words
    if isinstance(node, ast.Call) and not _text_call(node):
        return False  # handed to a function: checked there, where its parameter is annotated
    if isinstance(node, ast.Name):
        return node.id == name
    return any(_mentions(child, name) for child in ast.iter_child_nodes(node))


def _text_call(node: ast.Call) -> bool:
    called = (
        node.func.id
        if isinstance(node.func, ast.Name)
        else (node.func.attr if isinstance(node.func, ast.Attribute) else "")
    )
    return called in TEXT_CALLS


def _leaks(body: list[ast.stmt], name: str) -> list[ast.AST]:
    """Places in `body` where the exception `name` is turned into text that is not only logged or compared."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Compare):
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOG_METHODS:
            return
        if isinstance(node, ast.FormattedValue) and _mentions(node.value, name):
            found.append(node)
            return
        if isinstance(node, ast.Call):
            called = (
                node.func.id
                if isinstance(node.func, ast.Name)
                else (node.func.attr if isinstance(node.func, ast.Attribute) else "")
            )
            if called in TEXT_CALLS and any(_mentions(a, name) for a in node.args):
                found.append(node)
                return
        if (
            isinstance(node, ast.Attribute)
            and node.attr in TEXT_ATTRIBUTES
            and isinstance(node.value, ast.Name)
            and node.value.id == name
        ):
            found.append(node)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in body:
        visit(statement)
    return found


def _functions(tree: ast.AST):
    """Every function with the name of its innermost enclosing function ("" at module level)."""

    def walk(node: ast.AST, owner: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield child, child.name
                yield from walk(child, child.name)
            else:
                yield from walk(child, owner)

    yield from walk(tree, "")


def _owner_of(tree: ast.AST) -> dict[int, str]:
    owners: dict[int, str] = {}
    for function, name in _functions(tree):
        for node in ast.walk(function):
            owners[id(node)] = name  # inner functions come later and win
    return owners


def _foreign_param(argument: ast.arg, ours: set[str]) -> bool:
    if argument.annotation is None:
        return False
    names = [n.strip() for n in ast.unparse(argument.annotation).replace("|", ",").split(",")]
    names = [n.rsplit(".", 1)[-1] for n in names if n and n != "None"]
    return bool(names) and all(n.endswith(("Error", "Exception")) for n in names) and not all(n in ours for n in names)


def find_leaks() -> list[str]:
    ours = _ours()
    leaks = []
    for path in _modules():
        relative = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text())
        owners = _owner_of(tree)
        places: list[tuple[str, list[ast.stmt], str, list[str]]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler) and node.name:
                caught = _type_names(node.type)
                own = ours | OURS_IN.get(relative.split("/", 1)[0], set())
                if not all(t in own for t in caught):
                    places.append((node.name, node.body, owners.get(id(node), ""), caught))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for argument in node.args.args + node.args.kwonlyargs:
                    if _foreign_param(argument, ours):
                        places.append((argument.arg, node.body, node.name, [ast.unparse(argument.annotation)]))
        for name, body, owner, caught in places:
            if (relative, owner) in ALLOWED:
                continue
            for leak in sorted(_leaks(body, name), key=lambda n: n.lineno):
                leaks.append(
                    f"{relative}:{leak.lineno} in {owner or '<module>'}: the text of {name} "
                    f"({', '.join(caught)}) in {ast.unparse(leak)[:90]!r}"
                )
    return sorted(set(leaks), key=lambda line: (line.split(":")[0], int(line.split(":")[1].split(" ")[0])))


def test_no_foreign_exception_text_is_formatted_outside_the_log():
    leaks = find_leaks()
    assert not leaks, (
        "an exception that is not ours is turned into text a client can read (ADR 0079): say what happened in "
        "our words, and log the exception (chunklab.errors.logged gives an incident id):\n" + "\n".join(leaks)
    )


def test_the_allow_list_names_places_that_exist():
    functions = {}
    for path in _modules():
        relative = path.relative_to(ROOT).as_posix()
        functions[relative] = {name for _, name in _functions(ast.parse(path.read_text()))}
    stale = [key for key in ALLOWED if key[1] not in functions.get(key[0], set())]
    assert not stale, f"allow-list entries whose function is gone: {stale}"


def test_the_walk_catches_the_shapes_it_is_for(tmp_path, monkeypatch):
    """The rule's own check: each shape of leak it is meant to find is found, and the fine ones pass."""
    leaky = """
import json, logging
log = logging.getLogger(__name__)
def a(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at {exc.pos})")
def b(call):
    try:
        return call()
    except Exception as exc:
        return str(exc)
def c(exc: OSError):
    return "failed: " + repr(exc)
def d(call):
    try:
        return call()
    except Exception as exc:
        return exc.args[0]
def e(call):
    try:
        return call()
    except RuntimeError as exc:
        return f"failed: {exc.details()}"
"""
    fine = """
import json, logging
log = logging.getLogger(__name__)
class Ours(ValueError):
    pass
def a(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        log.warning("not JSON: %s", exc)
        raise ValueError(f"not JSON (unreadable at character {exc.pos})")
def b(call):
    try:
        return call()
    except Ours as exc:
        return f"{exc}"
    except KeyError as exc:
        if "NOGROUP" in str(exc):
            return "lost"
        raise
"""
    package = tmp_path / "services"
    package.mkdir()
    (package / "leaky.py").write_text(leaky)
    (package / "fine.py").write_text(fine)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "GENERATED", tmp_path / "chunklab" / "v1")
    found = find_leaks()
    assert [line.split(" in ")[0] for line in found] == [
        "services/leaky.py:8",
        "services/leaky.py:13",
        "services/leaky.py:15",
        "services/leaky.py:20",
        "services/leaky.py:25",
    ], found
