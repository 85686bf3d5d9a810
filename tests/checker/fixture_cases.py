"""Fixture cases as data: ``tests/fixtures/checker/{valid,invalid}/<case>/case.json`` over a base tree.

A case names a base (``tests/fixtures/checker/base/<name>/``, real files from the official v5.1 results, or v6.1 for
``endpoints``), the round it is checked against (optional ``round``, default ``v5.1``), a list of mutations (each
changes one thing), and what the checker must report. :func:`materialize` builds the case tree in a
temporary directory; nothing under ``tests/fixtures`` is ever changed.

Mutation ops (all paths relative to the tree root):

- ``{"op": "mllog_set", "path", "key", "value"}``: set the value of every ``:::MLLOG`` record with ``key``
- ``{"op": "mllog_delete", "path", "key"}`` / ``{"op": "mllog_append", "path", "record"}``
- ``{"op": "mllog_corrupt", "path", "key"}``: cut the JSON of that record's line in half
- ``{"op": "replace", "path", "old", "new"}`` (``old`` must occur) / ``{"op": "regex", "path", "pattern", "repl"}``
- ``{"op": "write", "path", "text"}`` / ``{"op": "delete", "path"}`` / ``{"op": "mkdir", "path"}``
- ``{"op": "copytree", "src", "dst"}`` / ``{"op": "rename", "src", "dst"}``
- ``{"op": "json_set", "path", "key", "value"}`` / ``{"op": "json_delete", "path", "key"}``: ``key`` is a name, or a
  list of names and list indices down to the value (``["latency", "early_stopping_percentiles", "99.0"]``)
- ``{"op": "symlink", "path", "target"}`` / ``{"op": "sparse", "path", "size"}``
- ``{"op": "set_hash", "accuracy_json", "accuracy_txt"}``: rewrite ``hash=`` with the SHA-256 of the JSON
- ``{"op": "copyfile", "src", "dst"}``: copy one file (replacing ``dst``)
- ``{"op": "crlf", "path"}``: convert every LF line break to CRLF (a Windows checkout / editor)
- ``{"op": "int64_ids", "path"}``: rewrite a LoadGen accuracy log's ``data`` / ``token_data`` hex with each int32 id
  widened to a little-endian int64 (``token_count`` unchanged: a SUT that logs int64 ids)
- ``{"op": "truncate_accuracy_log", "path"}``: the truncate_accuracy_log.py form (first and last 4096 characters)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "checker"


def load_cases(kind: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    d = FIXTURES / kind
    if not d.is_dir():
        return out
    for case_dir in sorted(p for p in d.iterdir() if p.is_dir()):
        spec = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
        out.append((case_dir.name, spec))
    return out


def _mllog_lines(text: str) -> list[str]:
    return text.split("\n")


def _edit_mllog(path: Path, key: str, fn: Any) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    prefix = ":::MLLOG "
    hit = False
    out: list[str] = []
    for line in lines:
        if line.startswith(prefix):
            obj = json.loads(line[len(prefix) :])
            if obj.get("key") == key:
                hit = True
                new = fn(obj, line)
                if new is None:
                    continue
                out.append(new)
                continue
        out.append(line)
    if not hit:
        raise AssertionError(f"{path}: no :::MLLOG record with key {key!r}")
    path.write_text("\n".join(out), encoding="utf-8")


def apply(root: Path, m: dict[str, Any]) -> None:
    op = m["op"]
    p = root / m["path"] if "path" in m else None
    if op == "mllog_set":
        assert p is not None

        def set_value(obj: dict[str, Any], _line: str) -> str:
            obj["value"] = m["value"]
            return ":::MLLOG " + json.dumps(obj)

        _edit_mllog(p, m["key"], set_value)
    elif op == "mllog_delete":
        assert p is not None
        _edit_mllog(p, m["key"], lambda _o, _l: None)
    elif op == "mllog_corrupt":
        assert p is not None
        _edit_mllog(p, m["key"], lambda _o, line: line[: len(line) // 2])
    elif op == "mllog_append":
        assert p is not None
        text = p.read_text(encoding="utf-8").rstrip("\n")
        p.write_text(text + "\n:::MLLOG " + json.dumps(m["record"]) + "\n", encoding="utf-8")
    elif op == "replace":
        assert p is not None
        text = p.read_text(encoding="utf-8")
        if m["old"] not in text:
            raise AssertionError(f"{p}: {m['old']!r} not found")
        p.write_text(text.replace(m["old"], m["new"], 1), encoding="utf-8")
    elif op == "regex":
        assert p is not None
        text = p.read_text(encoding="utf-8")
        new, n = re.subn(m["pattern"], m["repl"], text, count=m.get("count", 1))
        if not n:
            raise AssertionError(f"{p}: pattern {m['pattern']!r} not found")
        p.write_text(new, encoding="utf-8")
    elif op == "write":
        assert p is not None
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(m["text"], encoding="utf-8")
    elif op == "delete":
        assert p is not None
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    elif op == "mkdir":
        assert p is not None
        p.mkdir(parents=True, exist_ok=True)
    elif op == "copytree":
        shutil.copytree(root / m["src"], root / m["dst"])
    elif op == "rename":
        (root / m["dst"]).parent.mkdir(parents=True, exist_ok=True)
        os.rename(root / m["src"], root / m["dst"])
    elif op in ("json_set", "json_delete"):
        assert p is not None
        doc = json.loads(p.read_text(encoding="utf-8"))
        keys = m["key"] if isinstance(m["key"], list) else [m["key"]]
        parent = doc
        for k in keys[:-1]:
            parent = parent[k]
        if op == "json_set":
            parent[keys[-1]] = m["value"]
        else:
            del parent[keys[-1]]
        p.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    elif op == "symlink":
        assert p is not None
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(m["target"], p)
    elif op == "sparse":
        assert p is not None
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb") as fh:
            fh.truncate(int(m["size"]))
    elif op == "set_hash":
        digest = hashlib.sha256((root / m["accuracy_json"]).read_bytes()).hexdigest()
        txt = root / m["accuracy_txt"]
        text = re.sub(r"(?m)^hash=\w+$", f"hash={digest}", txt.read_text(encoding="utf-8"))
        txt.write_text(text, encoding="utf-8")
    elif op == "copyfile":
        (root / m["dst"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / m["src"], root / m["dst"])
    elif op == "crlf":
        assert p is not None
        data = p.read_bytes()
        if b"\r\n" in data:
            raise AssertionError(f"{p}: already CRLF")
        p.write_bytes(data.replace(b"\n", b"\r\n"))
    elif op == "int64_ids":
        assert p is not None

        def widen(hm: re.Match[str]) -> str:
            raw = bytes.fromhex(hm.group(2))
            assert len(raw) % 4 == 0, "not int32 ids"
            ids = [int.from_bytes(raw[i : i + 4], "little", signed=True) for i in range(0, len(raw), 4)]
            wide = b"".join(v.to_bytes(8, "little", signed=True) for v in ids)
            return f'{hm.group(1)}{wide.hex().upper()}"'

        text, n = re.subn(r'("(?:data|token_data)" : ")([0-9A-Fa-f]*)"', widen, p.read_text(encoding="utf-8"))
        if not n:
            raise AssertionError(f"{p}: no data fields")
        p.write_text(text, encoding="utf-8")
    elif op == "truncate_accuracy_log":
        assert p is not None
        text = p.read_text(encoding="utf-8")
        assert len(text) > 2 * 4096, "too small to truncate"
        p.write_text(text[:4096] + "\n\n...\n\n" + text[-4096:], encoding="utf-8")
    else:
        raise AssertionError(f"unknown mutation op {op!r}")


def materialize(spec: dict[str, Any], dest: Path) -> Path:
    """Copy the case's base into ``dest`` and apply its mutations; returns the tree root."""
    shutil.copytree(FIXTURES / "base" / spec["base"], dest, symlinks=True)
    for m in spec.get("mutations", []):
        apply(dest, m)
    return dest
