"""Diagnostics and exceptions: what libave reports through the context's handler, copied into
Python objects while the handler runs (the C diagnostic is borrowed for that call only)."""
from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import _lib
from ._lib import lib


@dataclass
class Diagnostic:
    """One diagnostic: severity ('error', 'warning', 'note', 'remark'), location, the code
    ('parse', 'verify', a pass name, 'runtime'), the message, its notes, and the counterexample
    of a failed invariant check (None when there is none)."""
    severity: str
    message: str
    file: str = ""
    line: int = 0
    column: int = 0
    code: str = ""
    notes: List["Diagnostic"] = field(default_factory=list)
    counterexample: Optional[Dict[str, str]] = None
    text: str = field(default="", repr=False)  # rendered as the tools render it (clang style)

    def __str__(self) -> str:
        if self.text:
            return self.text.rstrip("\n")
        loc = "%s:%d:%d: " % (self.file, self.line, self.column) if self.file else ""
        return "%s%s: %s" % (loc, self.severity, self.message)


def _copy(d: _lib.Handle, render: bool) -> Diagnostic:
    sev = lib.aveDiagnosticGetSeverity(d)
    notes = [_copy(lib.aveDiagnosticGetNote(d, i), False) for i in range(lib.aveDiagnosticGetNumNotes(d))]
    n = lib.aveDiagnosticGetNumCounterexampleEntries(d)
    cex = None
    if n > 0:
        cex = {_lib.s(lib.aveDiagnosticGetCounterexampleKey(d, i)):
               _lib.s(lib.aveDiagnosticGetCounterexampleValue(d, i)) for i in range(n)}
    text = ""
    if render:
        need = lib.aveDiagnosticFormat(d, 0, None, 0)
        buf = ctypes.create_string_buffer(need + 1)
        lib.aveDiagnosticFormat(d, 0, buf, need + 1)
        text = buf.value.decode("utf-8", "replace")
    return Diagnostic(
        severity=_lib.SEVERITIES[sev] if 0 <= sev < len(_lib.SEVERITIES) else str(sev),
        message=_lib.s(lib.aveDiagnosticGetMessage(d)),
        file=_lib.s(lib.aveDiagnosticGetFile(d)),
        line=lib.aveDiagnosticGetLine(d),
        column=lib.aveDiagnosticGetColumn(d),
        code=_lib.s(lib.aveDiagnosticGetCode(d)),
        notes=notes,
        counterexample=cex,
        text=text,
    )


# The handler runs on the thread that caused the diagnostic, which is the thread inside the
# libave call; each thread collects into its own list, so concurrent compiles never mix.
_local = threading.local()


def _on_diag(d: _lib.Handle, _user: Optional[int]) -> None:
    sink = getattr(_local, "sink", None)
    if sink is not None:
        sink.append(_copy(d, True))


HANDLER = _lib.DIAG_HANDLER(_on_diag)  # kept alive for the process


class Collect:
    """`with Collect() as diags:` gathers the diagnostics this thread's libave calls report."""

    def __enter__(self) -> List[Diagnostic]:
        self.prev = getattr(_local, "sink", None)
        self.diags: List[Diagnostic] = []
        _local.sink = self.diags
        return self.diags

    def __exit__(self, *exc: object) -> None:
        _local.sink = self.prev
        if self.prev is not None:
            self.prev.extend(self.diags)


class Error(Exception):
    """A libave call failed: `result` names the AveResult ('AVE_ERROR_PARSE', ...),
    `diagnostics` holds what libave reported."""

    def __init__(self, what: str, result: int, diagnostics: List[Diagnostic]):
        self.result = _lib.result_name(result)
        self.diagnostics = diagnostics
        errs = [d for d in diagnostics if d.severity == "error"] or diagnostics
        detail = "\n".join(str(d) for d in errs)
        super().__init__("%s failed (%s)%s" % (what, self.result, ":\n" + detail if detail else ""))


class CompileError(Error):
    """Parsing, verifying, checking or compiling a kernel failed. `diagnostics[i].line`,
    `.column`, `.notes` and `.counterexample` say where and why."""


class LaunchWarning(UserWarning):
    """A launch succeeded but libave warned about it (an output with elements no CTA wrote, on
    the host device): issued through Python's `warnings`, the Diagnostic in `.diagnostic`."""

    def __init__(self, diagnostic: "Diagnostic"):
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic


class LaunchError(Error):
    """A launch was refused by libave, or the kernel failed while running (the host device
    reports races, deadlocks and out-of-bounds accesses)."""


class DeviceError(Error):
    """A device could not be opened, or a buffer or stream operation on it failed."""
