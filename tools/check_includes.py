#!/usr/bin/env python3
"""Checks the include rules of the source tree (docs/layout.md).

    tools/check_includes.py [ROOT]      every #include "..." under ROOT
    tools/check_includes.py --self-test  plants forbidden includes in a
                                         scratch tree and expects each caught

Each folder may include only the folders (or single headers) that RULES
gives it. A violation prints `file:line: includes "path": <rule>` and the
exit code is 1; a source file in a folder that has no rule is a violation
too, so that a new folder gets a rule before it gets code. Includes that do
not name a folder of the tree (<caf/...>, "gloo/...", a header beside the
file) are not checked.
"""
import os
import re
import sys
import tempfile

# The layers below the actors: each may include itself and what is listed.
LOWER = {
    "base": [],
    "http": ["base"],
    "data": ["base"],
    "plan": ["base", "data"],
    "messages": ["base", "data", "plan"],
    "configs": ["base"],
    "gpu": ["base"],
    "models": ["base", "data", "configs", "gpu"],
    "planner": ["base", "data", "plan", "configs"],
}
BELOW_ACTORS = list(LOWER)

# The roles (actors/<role>/: a functional core and its actor shell). Each may
# include the layers below, actors/common and itself, plus the peer headers
# listed here with the reason; anything else of another role is the
# composition root's business (actors/run/).
ROLE_PEERS = {
    "actors/sampler": {},
    "actors/oracle": {},
    "actors/embedding": {},
    "actors/cache": {
        "actors/trainer/trainer_core.hpp": "the partition writes rows into the slots of its trainer's TrainerCore",
        "actors/embedding/shard_store.hpp": "ShardOf: the shard a row is fetched from and written back to",
    },
    "actors/trainer": {
        "actors/sync/sync_scheduler_actor.hpp": "the messages of its sync scheduler (SyncKind)",
    },
    "actors/sync": {},
    "actors/node": {
        "actors/supervisor/supervisor_actor.hpp": "a node process starts the coordinator's supervisor",
        "actors/supervisor/membership.hpp": "the membership messages a node sends",
        "actors/inspector/inspector_actor.hpp": "a node process starts the coordinator's inspector",
    },
    "actors/supervisor": {
        "actors/node/actor_plan.hpp": "the plan of which member hosts which actor, that registrations are checked against",
    },
    "actors/inspector": {},
}

FOLDERS = sorted(set(LOWER) | set(ROLE_PEERS) | {"actors/common", "actors/run", "tools", "tests"})
TOP = sorted({f.split("/")[0] for f in FOLDERS})


def allowed(folder):
    """(prefixes a file of `folder` may include, a one-line statement of the rule)."""
    if folder in LOWER:
        ok = [folder] + LOWER[folder]
        return ok, f"{folder}/ may include only {', '.join(x + '/' for x in ok)}"
    if folder == "actors/common":
        ok = BELOW_ACTORS + ["actors/common"]
        return ok, "actors/common/ may include only the layers below the actors and itself"
    if folder in ROLE_PEERS:
        ok = BELOW_ACTORS + ["actors/common", folder] + list(ROLE_PEERS[folder])
        peers = ", ".join(ROLE_PEERS[folder])
        peers = f"of other roles only {peers}" if peers else "no header of another role"
        return ok, (f"{folder}/ is one role: it may include the layers below the actors, actors/common/ "
                    f"and itself, {peers}; wiring roles together belongs in actors/run/")
    if folder == "actors/run":
        ok = BELOW_ACTORS + ["actors"]
        return ok, "actors/run/ (the composition root) may include every folder but tools/ and tests/"
    if folder == "tools":
        ok = BELOW_ACTORS + ["actors", "tools"]
        return ok, "tools/ may include every folder but tests/"
    if folder == "tests":
        return BELOW_ACTORS + ["actors", "tools", "tests"], ""
    raise KeyError(folder)


def folder_of(rel):
    """The rule folder of a path relative to the root: the longest FOLDERS prefix, or None."""
    best = None
    for f in FOLDERS:
        if rel == f or rel.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def matches(path, prefix):
    return path == prefix or path.startswith(prefix + "/")


INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh", ".cpp.in")


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not d.startswith("build") and d != "subprojects"
                             and not (rel_dir == "." and d in ("runs",)))
        for name in sorted(filenames):
            if name.endswith(SUFFIXES):
                yield os.path.normpath(os.path.join(rel_dir, name))


def check(root):
    """Returns the violations as printable lines."""
    problems = []
    for rel in sources(root):
        rel = rel.replace(os.sep, "/")
        folder = folder_of(rel)
        if folder is None:
            problems.append(f"{rel}: no include rule for its folder: add one to tools/check_includes.py "
                            f"and docs/layout.md")
            continue
        ok, rule = allowed(folder)
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError as e:
            problems.append(f"{rel}: cannot read: {e.strerror}")
            continue
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if ".." in target.split("/"):
                target = os.path.normpath(os.path.join(os.path.dirname(rel), target)).replace(os.sep, "/")
            if target.split("/")[0] not in TOP:
                continue  # external, or a header beside the file
            if folder_of(target) is None and not target.startswith("actors/"):
                continue
            if not any(matches(target, p) for p in ok):
                problems.append(f'{rel}:{number}: includes "{target}": {rule}')
    return problems


def self_test():
    """Plants one forbidden include of each kind and one allowed; expects exactly the forbidden ones."""
    cases = {
        "messages/codec.hpp": ('#include "actors/oracle/x.hpp"\n', True),
        "data/reader.hpp": ('#include "plan/trainer_plan.hpp"\n', True),
        "actors/trainer/core.hpp": ('#include "actors/run/run_parts.hpp"\n', True),
        "actors/oracle/planner.hpp": ('#include "../run/x.hpp"\n', True),
        "actors/newrole/x.hpp": ('#include "base/status.hpp"\n', True),
        "actors/cache/partition.hpp": ('#include "actors/trainer/trainer_core.hpp"\n#include <vector>\n', False),
        "actors/run/driver.cpp": ('#include "actors/oracle/planner.hpp"\n#include "actors/cache/x.hpp"\n', False),
        "plan/trainer_plan.hpp": ('#include "data/sample_block.hpp"\n', False),
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, (text, _) in cases.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write("// test\n" + text)
        problems = check(root)
    flagged = {p.split(":")[0] for p in problems}
    expected = {rel for rel, (_, bad) in cases.items() if bad}
    for p in problems:
        print("caught:", p)
    if flagged != expected:
        print(f"self-test FAILED: flagged {sorted(flagged)}, expected {sorted(expected)}")
        return 1
    print(f"self-test: {len(expected)} forbidden includes caught, {len(cases) - len(expected)} allowed ones passed")
    return 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the layout rules (docs/layout.md)")
        return 1
    print("include rules: every #include follows docs/layout.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
