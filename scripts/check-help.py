#!/usr/bin/env python3
"""check-help.py BIN_DIR [SRC_DIR] -- the tools' help, docs and man pages against what the code
accepts and registers.

For each tool (ave check, ave compile, ave run, ave-opt, ave-rt-run) the options its argument
parser compares against (string literals in str(n)cmp / opt_value calls of the parsing function)
must appear in its --help, in its section of docs/driver.md and in its man page's SYNOPSIS; and
every option its --help lists must be one it accepts. Every pass of passes/passes.def must be in
ave-opt --help, docs/passes.md (with each of its options) and ave-opt.1; every target of
ir/targets.def in the targets line of ave-opt --help and ave compile --help, docs/targets.md
and ave.1. Prints one line per mismatch and exits 1 when there is any.
"""
import os
import re
import subprocess
import sys

# tool: (help command, [(source file, parsing function)], docs/driver.md heading, man page,
# the line of the man page's SYNOPSIS that starts the tool's block)
COMMON = ("tools/cmd_check.c", "driver_common_opt")
TOOLS = {
    "ave": (["ave", "--help"], [("tools/ave.c", "main"), COMMON], "`ave`", "ave.1", "ave"),
    "ave check": (["ave", "check", "--help"], [("tools/cmd_check.c", "cmd_check"), COMMON],
                  "`ave check`", "ave.1", "ave check"),
    "ave compile": (["ave", "compile", "--help"], [("tools/cmd_compile.c", "parse_args"), COMMON],
                    "`ave compile`", "ave.1", "ave compile"),
    "ave run": (["ave", "run", "--help"], [("tools/cmd_run.c", "parse_opts"), COMMON],
                "`ave run`", "ave.1", "ave run"),
    "ave-opt": (["ave-opt", "--help"], [("tools/ave-opt.c", "main")], "`ave-opt`", "ave-opt.1",
                "ave-opt"),
    "ave-rt-run": (["ave-rt-run", "--help"], [("tools/ave-rt-run.c", "parse")], "`ave-rt-run`",
                   "ave-rt-run.1", "ave-rt-run"),
}
# Spellings the parsers test character by character, and aliases the docs need not repeat.
IMPLICIT = {"-O0", "-O1", "-O2", "-O3", "-h"}

problems = []


def problem(where, what):
    problems.append(f"check-help: {where}: {what}")


def function_body(text, name):
    """The body of C function `name` (its definition: the name at the start of a line)."""
    m = re.search(r"^%s\s*\([^;{]*\)\s*\{" % re.escape(name), text, re.M)
    if not m:
        return None
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i]


def option_name(word):
    return re.split(r"[=\[]", word, 1)[0]


def accepted(src, sources):
    """The options the parsing functions compare their arguments with."""
    opts = set()
    for path, fn in sources:
        with open(os.path.join(src, path)) as f:
            body = function_body(f.read(), fn)
        if body is None:
            problem(path, f"no function '{fn}' to read the options from")
            continue
        for lit in re.findall(r'str(?:n)?cmp\(\s*[^,()]+,\s*"(-[-A-Za-z][^"]*)"', body):
            opts.add(option_name(lit))
        for lit in re.findall(r'opt_value\([^;]*?"(-[-A-Za-z][^"]*)"\)', body):
            opts.add(option_name(lit))
    return opts


def listed(text):
    """The options a text names: words that start with '-' after a blank, '[', '|', '(', ','."""
    # Quoted words name other commands' options ("from 'ave compile --emit=bundle'").
    text = re.sub(r"'[^'\n]*'", " ", text.replace("`", " "))
    return {option_name(m) for m in re.findall(r"(?:(?<=^)|(?<=[\s\[|(,]))(-{1,2}[A-Za-z][-A-Za-z0-9]*)",
                                               text, re.M)}


def roff_text(s):
    s = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\c", "", s)
    s = s.replace("\\-", "-").replace("\\(em", "--").replace("\\e", "\\")
    return "\n".join(re.sub(r"^\.(B|I|BR|BI|IR|RB|RI|IB|TP|PP|IP|RS|RE|SY|OP|YS|br|nf|fi)\b ?",
                            "", line) for line in s.splitlines())


def section(text, start, stop):
    """Lines from the one matching `start` up to the next matching `stop`."""
    out, on = [], False
    for line in text.splitlines():
        if on and re.match(stop, line):
            break
        if re.match(start, line):
            on = True
        if on:
            out.append(line)
    return "\n".join(out) if on else None


def man_synopsis(src, page, block):
    path = os.path.join(src, "docs", "man", page)
    if not os.path.exists(path):
        problem(f"docs/man/{page}", "missing")
        return None
    with open(path) as f:
        syn = section(roff_text(f.read()), r"\.SH SYNOPSIS", r"\.SH ")
    if syn is None:
        problem(f"docs/man/{page}", "no SYNOPSIS section")
        return None
    # A page for several commands (ave.1) has one block per command in its SYNOPSIS.
    lines = syn.splitlines()
    starts = [i for i, l in enumerate(lines) if re.match(r"^\s*ave(-\S+)?(\s+(check|compile|run))?\b", l)]
    blocks = {}
    for k, i in enumerate(starts):
        head = re.match(r"^\s*(ave(-\S+)?(\s+(check|compile|run))?)\b", lines[i]).group(1)
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        blocks.setdefault(" ".join(head.split()), []).extend(lines[i:end])
    if block not in blocks:
        problem(f"docs/man/{page}", f"no '{block}' in SYNOPSIS")
        return None
    return "\n".join(blocks[block])


def run(bindir, cmd):
    exe = os.path.join(bindir, cmd[0])
    p = subprocess.run([exe] + cmd[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        problem(" ".join(cmd), f"exit status {p.returncode}")
    return p.stdout


def registry(src, path, macro):
    with open(os.path.join(src, path)) as f:
        text = f.read()
    return re.findall(r'^%s\((?:\w+,\s*)?"([^"]+)"(.*)$' % macro, text, re.M)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: check-help.py BIN_DIR [SRC_DIR]")
    bindir = sys.argv[1]
    src = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(__file__), "..")
    with open(os.path.join(src, "docs", "driver.md")) as f:
        driver_md = f.read()

    for tool, (cmd, sources, heading, page, block) in TOOLS.items():
        opts = accepted(src, sources) - IMPLICIT
        help_text = run(bindir, cmd)
        in_help = listed(help_text)
        doc = section(driver_md, r"## " + re.escape(heading) + r"\s*$", r"## ")
        if doc is None:
            problem("docs/driver.md", f"no section '## {heading}'")
        syn = man_synopsis(src, page, block)
        for o in sorted(opts):
            if o not in in_help:
                problem(" ".join(cmd), f"'{o}' is accepted but not in the help")
            if doc is not None and o not in listed(doc):
                problem("docs/driver.md", f"{tool}: '{o}' is accepted but not documented")
            if syn is not None and o not in listed(syn):
                problem(f"docs/man/{page}", f"{tool}: '{o}' is accepted but not in the SYNOPSIS")
        for o in sorted(in_help - opts - IMPLICIT):
            problem(" ".join(cmd), f"the help lists '{o}', which {tool} does not accept")

    # The pass registry.
    opt_help = run(bindir, ["ave-opt", "--help"])
    help_passes = section(opt_help, r"passes:", r"\S") or ""
    help_passes = {l.split()[0] for l in help_passes.splitlines()[1:] if l.strip()}
    with open(os.path.join(src, "docs", "passes.md")) as f:
        passes_md = f.read()
    with open(os.path.join(src, "docs", "man", "ave-opt.1")) if os.path.exists(
            os.path.join(src, "docs", "man", "ave-opt.1")) else open(os.devnull) as f:
        opt_man = roff_text(f.read())
    passes = registry(src, "passes/passes.def", "PASS")
    for name, rest in passes:
        if name not in help_passes:
            problem("ave-opt --help", f"pass '{name}' is registered but not listed")
        if not re.search(r"^\|\s*`%s`\s*\|" % re.escape(name), passes_md, re.M):
            problem("docs/passes.md", f"pass '{name}' is registered but has no row")
        if not re.search(r"\b%s\b" % re.escape(name), opt_man):
            problem("docs/man/ave-opt.1", f"pass '{name}' is registered but not named")
        m = re.search(r'"([^"]*)"\)\s*$', rest)
        for key in (m.group(1).split() if m else []):
            if not re.search(r"`%s=" % re.escape(key), passes_md):
                problem("docs/passes.md", f"option '{key}' of pass '{name}' is not documented")
    for name in sorted(help_passes - {n for n, _ in passes}):
        problem("ave-opt --help", f"lists pass '{name}', which is not registered")

    # The target registry.
    targets = [n for n, _ in registry(src, "ir/targets.def", "TARGET")]
    with open(os.path.join(src, "docs", "targets.md")) as f:
        targets_md = f.read()
    ave_man_path = os.path.join(src, "docs", "man", "ave.1")
    ave_man = roff_text(open(ave_man_path).read()) if os.path.exists(ave_man_path) else ""
    for cmd in (["ave-opt", "--help"], ["ave", "compile", "--help"]):
        line = re.search(r"^targets: (.*)$", run(bindir, cmd), re.M)
        got = [t.strip() for t in line.group(1).split(",")] if line else []
        if sorted(got) != sorted(targets):
            problem(" ".join(cmd), f"targets {got}, the registry has {targets}")
    for name in targets:
        if not re.search(r"`%s`" % re.escape(name), targets_md):
            problem("docs/targets.md", f"target '{name}' is registered but not described")
        if not re.search(r"\b%s\b" % re.escape(name), ave_man):
            problem("docs/man/ave.1", f"target '{name}' is registered but not named")

    for p in problems:
        print(p)
    print(f"check-help: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
