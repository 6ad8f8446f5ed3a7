"""Word equations (OMML, the m: namespace) as LaTeX text.

python-docx gives an equation no text at all, so a sentence around an
inline equation read "the formula  is the theorem". Each OMML object maps
to its LaTeX form: fractions, scripts, radicals, delimiters, n-ary
operators (sums, integrals), functions, limits, accents, bars, group
characters, matrices and equation arrays; runs keep their characters, with
the common Greek letters and operators spelled as LaTeX commands. An
object this module does not know keeps its text, so no symbol is lost.
"""

from __future__ import annotations

from lxml import etree

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"


def _m(tag: str) -> str:
    return f"{{{M}}}{tag}"


_SYMBOLS = {
    "α": "\\alpha", "β": "\\beta", "γ": "\\gamma", "δ": "\\delta", "ε": "\\epsilon", "ϵ": "\\epsilon",
    "ζ": "\\zeta", "η": "\\eta", "θ": "\\theta", "ι": "\\iota", "κ": "\\kappa", "λ": "\\lambda",
    "μ": "\\mu", "ν": "\\nu", "ξ": "\\xi", "π": "\\pi", "ρ": "\\rho", "σ": "\\sigma", "τ": "\\tau",
    "υ": "\\upsilon", "φ": "\\phi", "χ": "\\chi", "ψ": "\\psi", "ω": "\\omega", "Γ": "\\Gamma",
    "Δ": "\\Delta", "Θ": "\\Theta", "Λ": "\\Lambda", "Ξ": "\\Xi", "Π": "\\Pi", "Σ": "\\Sigma",
    "Φ": "\\Phi", "Ψ": "\\Psi", "Ω": "\\Omega", "∞": "\\infty", "×": "\\times", "÷": "\\div",
    "±": "\\pm", "∓": "\\mp", "≤": "\\leq", "≥": "\\geq", "≠": "\\neq", "≈": "\\approx",
    "≡": "\\equiv", "∈": "\\in", "∉": "\\notin", "⊂": "\\subset", "⊆": "\\subseteq", "∪": "\\cup",
    "∩": "\\cap", "∧": "\\wedge", "∨": "\\vee", "→": "\\rightarrow", "←": "\\leftarrow",
    "⇒": "\\Rightarrow", "⇔": "\\Leftrightarrow", "∀": "\\forall", "∃": "\\exists", "∂": "\\partial",
    "∇": "\\nabla", "⋅": "\\cdot", "·": "\\cdot", "…": "\\ldots", "⋯": "\\cdots", "°": "^{\\circ}",
    "−": "-",
}  # fmt: skip
_NARY = {
    "∑": "\\sum", "∏": "\\prod", "∐": "\\coprod", "⋃": "\\bigcup", "⋂": "\\bigcap", "⋀": "\\bigwedge",
    "⋁": "\\bigvee", "∫": "\\int", "∬": "\\iint", "∭": "\\iiint", "∮": "\\oint", "∯": "\\oiint",
    "∰": "\\oiiint",
}  # fmt: skip
_ACCENTS = {"̂": "\\hat", "̃": "\\tilde", "̄": "\\bar", "̇": "\\dot", "̈": "\\ddot", "⃗": "\\vec", "́": "\\acute"}
_FUNCTIONS = {"sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "lim", "max", "min", "sup", "inf"}
_FUNCTIONS |= {"sinh", "cosh", "tanh", "det", "arg", "deg", "gcd"}


def _val(parent, prop: str, name: str, default: str | None = None) -> str | None:
    """m:{prop}/m:{name}/@m:val of an object's properties."""
    pr = parent.find(_m(prop))
    element = pr.find(_m(name)) if pr is not None else None
    if element is None:
        return default
    return element.get(_m("val"), default)


def _run_text(run) -> str:
    text = "".join(t.text or "" for t in run.iter(_m("t")))
    return "".join(_symbol(ch) for ch in text)


def _symbol(ch: str) -> str:
    latex = _SYMBOLS.get(ch) or _NARY.get(ch)
    return f"{latex} " if latex and latex[-1].isalpha() else (latex or ch)


def _arg(parent, name: str) -> str:
    child = parent.find(_m(name))
    return latex(child).strip() if child is not None else ""


def _delimited(element) -> str:
    begin = _val(element, "dPr", "begChr", "(")
    end = _val(element, "dPr", "endChr", ")")
    separator = _val(element, "dPr", "sepChr", "|")
    inner = separator.join(latex(e).strip() for e in element.findall(_m("e")))
    left = {"{": "\\{", "": "."}.get(begin, begin)
    right = {"}": "\\}", "": "."}.get(end, end)
    return f"\\left{left}{inner}\\right{right}"


def _nary(element) -> str:
    op = _val(element, "naryPr", "chr", "∫")
    command = _NARY.get(op, op)
    sub, sup = _arg(element, "sub"), _arg(element, "sup")
    limits = (f"_{{{sub}}}" if sub else "") + (f"^{{{sup}}}" if sup else "")
    return f"{command}{limits}{_arg(element, 'e')}"


def _function(element) -> str:
    name_element = element.find(_m("fName"))
    name = latex(name_element).strip() if name_element is not None else ""
    if name in _FUNCTIONS:
        name = "\\" + name
    elif name.isalpha():
        name = f"\\operatorname{{{name}}}"
    return f"{name}{{{_arg(element, 'e')}}}"


def _limit(element, lower: bool) -> str:
    base = _arg(element, "e")
    limit = _arg(element, "lim")
    if base in _FUNCTIONS:
        base = "\\" + base
    return f"{base}_{{{limit}}}" if lower else f"{base}^{{{limit}}}"


def _group(element) -> str:
    char = _val(element, "groupChrPr", "chr", "⏟")
    command = "\\overbrace" if char == "⏞" else "\\underbrace"
    return f"{command}{{{_arg(element, 'e')}}}"


def _accent(element) -> str:
    command = _ACCENTS.get(_val(element, "accPr", "chr", "\u0302") or "", "\\hat")
    return f"{command}{{{_arg(element, 'e')}}}"


def _matrix(element) -> str:
    rows = [" & ".join(latex(e).strip() for e in row.findall(_m("e"))) for row in element.findall(_m("mr"))]
    return "\\begin{matrix}" + " \\\\ ".join(rows) + "\\end{matrix}"


def _radical(element) -> str:
    degree = _arg(element, "deg")
    return f"\\sqrt[{degree}]{{{_arg(element, 'e')}}}" if degree else f"\\sqrt{{{_arg(element, 'e')}}}"


def _fraction(element) -> str:
    num, den = _arg(element, "num"), _arg(element, "den")
    if _val(element, "fPr", "type") == "noBar":
        return f"\\genfrac{{}}{{}}{{0pt}}{{}}{{{num}}}{{{den}}}"
    if _val(element, "fPr", "type") == "lin":
        return f"{num}/{den}"
    return f"\\frac{{{num}}}{{{den}}}"


_OBJECTS = {
    "f": _fraction,
    "sSup": lambda e: f"{_arg(e, 'e')}^{{{_arg(e, 'sup')}}}",
    "sSub": lambda e: f"{_arg(e, 'e')}_{{{_arg(e, 'sub')}}}",
    "sSubSup": lambda e: f"{_arg(e, 'e')}_{{{_arg(e, 'sub')}}}^{{{_arg(e, 'sup')}}}",
    "sPre": lambda e: f"{{}}_{{{_arg(e, 'sub')}}}^{{{_arg(e, 'sup')}}}{_arg(e, 'e')}",
    "rad": _radical,
    "d": _delimited,
    "nary": _nary,
    "func": _function,
    "limLow": lambda e: _limit(e, lower=True),
    "limUpp": lambda e: _limit(e, lower=False),
    "groupChr": _group,
    "bar": lambda e: f"\\overline{{{_arg(e, 'e')}}}",
    "acc": _accent,
    "m": _matrix,
    "eqArr": lambda e: " \\\\ ".join(latex(x).strip() for x in e.findall(_m("e"))),
    "r": _run_text,
}


def latex(element) -> str:
    """The LaTeX of an OMML element and everything inside it."""
    name = etree.QName(element).localname if isinstance(element.tag, str) else ""
    if etree.QName(element).namespace == M and name in _OBJECTS:
        return _OBJECTS[name](element)
    if name.endswith("Pr"):  # properties: formatting, never text
        return ""
    return "".join(latex(child) for child in element if isinstance(child.tag, str))


def equation(element) -> str:
    """An m:oMath or m:oMathPara as one line of LaTeX, without the $ delimiters."""
    maths = [element] if etree.QName(element).localname == "oMath" else element.findall(_m("oMath"))
    return " \\\\ ".join(" ".join(latex(m).split()) for m in maths)
