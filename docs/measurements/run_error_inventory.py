"""Inventory of torch's in-place, view and version-counter error strings.

Reads an installed torch's own files, no source tree needed: the printable
strings of its shared libraries (autograd, ATen and functorch are compiled
into ``libtorch_cpu.so``; the Python bindings into ``libtorch_python.so``)
and the string constants of the ``raise`` statements and error calls of its
``.py`` files (Dynamo, functorch's Python side, ``torch.autograd``, ...).
A string is kept when it reads as an error sentence about writing in place,
views or the version counter (:data:`TOPIC`). Each entry is one literal of
the source: a message that torch assembles from parts (``TORCH_CHECK(c,
"Output ", n, " of ", name, " is a view ...")``) gives one entry per part
that is about the topic.

Run it with the torch to inventory::

    python docs/measurements/run_error_inventory.py --output docs/measurements/error-inventory.json

The file keeps one list per release (a run for another release adds or
replaces that release's list, the others stay); ``tests/test_explain_inventory.py``
checks that every entry has a section with a live repro on docs/errors.md or
a stated reason, and that the installed torch adds none.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import platform
import re
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

#: A C string literal of a shared library: printable ASCII (tabs and newlines too) up to a NUL.
_LITERAL = re.compile(rb"[\t\n\x20-\x7e]{12,}(?=\x00)")
#: What an in-place, view or version-counter error says (searched case-insensitively).
TOPIC = re.compile(
    r"in-place operation|inplace operation|in-place op\b|inplace op\b|modified in-?place|"
    r"modified by an in-?place|modif\w* \w+ in-?place|in-?place update|being used in an in-place|"
    r"(?:mutate|mutating|mutation of) (?:a |an )?captured|version counter|mark_dirty|"
    r"marked as dirty|graph interior|written-to tensor|detach views in-place|"
    r"detached in-place|resize variables|view was created|view of a leaf|is a view and|"
    r"is a view of a view|views? (?:is|are) (?:being )?(?:modified|forbidden)|"
    r"returns multiple views|multiple views|inplace on (?:a )?view|in-place (?:on|into) (?:a )?view|"
    r"(?:can ?not|can't|cannot|unable to) (?:\w+ ){0,3}in-?place|In-place \w+ backward|"
    r"out=\.\.\. arguments|doesn't match the broadcast shape|there exists a Tensor `other`|"
    r"During a grad \(vjp|its base or another view|modify views in-place|modifies inplace",
    re.IGNORECASE,
)
#: Strings that match :data:`TOPIC` but are no error message a user meets.
_NOT_A_MESSAGE = re.compile(
    r"->|^\s*(?:aten|prim|quantized|_?c10d?|mkldnn)::\w+\(|"  # operator schemas
    r"^[A-Za-z_.]+$|"  # a bare name
    r"^\s*(?:def|return|if|for) |^\s*#",  # source text embedded as strings (codegen templates)
)


def _read_only_data(data: bytes) -> bytes:
    """The ``.rodata`` sections of an ELF64 shared library, where its string literals are.

    Reading the whole file finds more, and worse: short literals that the
    compiler builds from immediate values in ``.text`` (torch 2.14.1's CUDA
    wheel shows ``at::RecordFuncti`` glued to a message) and merged tails.
    """
    if data[:5] != b"\x7fELF\x02":
        return data
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    found = []
    for name, _type, _flags, _addr, offset, size in headers:
        title = data[names_at + name : data.index(b"\x00", names_at + name)]
        if title.startswith(b".rodata"):
            found.append(b"\x00" + data[offset : offset + size])
    return b"".join(found)


def _shared_library_strings(lib: Path) -> Iterator[tuple[str, str]]:
    for so in sorted(lib.glob("*.so*")):
        if so.name.startswith(("libcuda", "libnv", "libcu")):
            continue  # CUDA's own libraries, shipped beside torch in some wheels
        data = _read_only_data(so.read_bytes())
        seen: set[str] = set()
        for found in _LITERAL.finditer(data):
            text = found.group().decode("ascii")
            if text not in seen:
                seen.add(text)
                yield f"lib/{so.name}", text


def _is_error_call(node: ast.AST) -> bool:
    """A call that raises or reports: ``SomethingError(...)``, ``unimplemented(...)``, checks."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return bool(
        re.search(
            r"Error$|Exception$|^unimplemented|^_check|^check|^warn$|^raise_|^graph_break", name
        )
    )


def _strings_in(node: ast.AST) -> Iterator[str]:
    """The string constants under ``node``; an f-string's constant parts joined by ``...``."""
    for child in ast.walk(node):
        if isinstance(child, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) else "..." for v in child.values]
            yield "".join(str(p) for p in parts)
        elif isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def _python_strings(root: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if "/testing/" in f"/{relative}" or relative.startswith(("_inductor/codegen", "include/")):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not TOPIC.search(text):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        seen: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) or _is_error_call(node):
                for string in _strings_in(node):
                    if string not in seen:
                        seen.add(string)
                        yield f"{relative}:{getattr(node, 'lineno', 0)}", string


def _component(where: str) -> str:
    if where.startswith("lib/libtorch_python"):
        return "autograd (Python bindings)"
    if where.startswith("lib/"):
        return "C++ (autograd, ATen, functorch)"
    for prefix, name in (
        ("_dynamo/", "Dynamo"),
        ("_functorch/", "functorch"),
        ("func/", "functorch"),
        ("autograd/", "autograd"),
        ("_subclasses/", "fake and functional tensors"),
        ("_higher_order_ops/", "higher-order ops"),
        ("nn/", "torch.nn"),
    ):
        if where.startswith(prefix):
            return name
    return "torch (Python)"


def inventory(torch_dir: Path) -> list[dict[str, str]]:
    """The entries for the torch installed at ``torch_dir``, sorted by text."""
    found: dict[str, dict[str, str]] = {}
    sources = [_shared_library_strings(torch_dir / "lib"), _python_strings(torch_dir)]
    for source in sources:
        for where, text in source:
            text = " ".join(text.split())  # a literal's own spaces at its ends join its parts
            if " " not in text.strip() or not TOPIC.search(text) or _NOT_A_MESSAGE.search(text):
                continue
            entry = found.setdefault(text, {"text": text, "where": where})
            entry.setdefault("component", _component(where))
    return sorted(found.values(), key=lambda e: e["text"])


def _torch_dir() -> tuple[Path, str, str]:
    """The interpreter's torch, found without importing it (a wheel installed --no-deps reads)."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise SystemExit("no torch installed for this interpreter")
    folder = Path(spec.origin).parent
    found = re.search(r"git_version\s*=\s*['\"](\w+)['\"]", (folder / "version.py").read_text())
    return folder, importlib.metadata.version("torch"), found[1] if found else "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    torch_dir, version, git = _torch_dir()
    entries = inventory(torch_dir)
    release = version.split("+")[0]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    runs = json.loads(args.output.read_text()) if args.output.exists() else {"releases": {}}
    runs["releases"][release] = {
        "provenance": {
            "torch": version,
            "torch_git": git,
            "read": "the NUL-ended string literals of the .rodata sections of torch/lib/*.so "
            "and the string constants of "
            "raise statements and error calls in torch/**/*.py",
            "python": platform.python_version(),
            "platform": platform.platform(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git_commit": commit,
            "command": "python "
            + " ".join(["docs/measurements/run_error_inventory.py", *(argv or sys.argv[1:])]),
            "seconds": round(time.perf_counter() - start, 1),
        },
        "entries": entries,
    }
    runs["releases"] = dict(sorted(runs["releases"].items()))
    args.output.write_text(json.dumps(runs, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    print(f"torch {version}: {len(entries)} entries -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
