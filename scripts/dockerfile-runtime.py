#!/usr/bin/env python3
"""Reads the Dockerfile's runtime stage (its last) and the build stage's `swift build`, and prints
them as bash assignments for the packaging checks to `eval`:

  BASE_IMAGE SUITE      the runtime stage's FROM and its Debian suite (debian:SUITE[-slim])
  RUN_COMMANDS=( … )    each RUN of the runtime stage, as Docker hands it to /bin/sh -c
  PACKAGES=( … )        the words after `apt-get install` in those RUNs (options dropped)
  BUILD_COMMAND         the build stage's first `swift build …` command
  BUILD_STRIPS          1 when the build stage strips the binary it copies out
  COPY_SOURCE COPY_DEST the runtime stage's COPY --from=build of the binary
  USER_SPEC             USER (uid[:gid])
  ENVIRONMENT=( … )     ENV as KEY=VALUE words
  EXPOSED_PORTS=( … )   EXPOSE
  STOP_SIGNAL           STOPSIGNAL
  HEALTHCHECK_COMMAND=( … ) and ENTRYPOINT=( … ) and COMMAND=( … )   exec-form JSON arrays
  HEALTHCHECK_TIMEOUT   the HEALTHCHECK's --timeout in seconds (Docker's default 30)

Anything the checks would not reproduce faithfully — an instruction they do not know, a shell
form where they expect exec form, a missing piece — is refused with a message and exit 1, so the
Dockerfile cannot change under a check that silently stops following it.

Usage: scripts/dockerfile-runtime.py [Dockerfile]
"""

import json
import re
import shlex
import sys

# Instructions a runtime stage may use that the image check reproduces (or that change nothing
# at run time: LABEL). Anything else fails the parse.
KNOWN = {"FROM", "RUN", "COPY", "USER", "ENV", "EXPOSE", "STOPSIGNAL", "HEALTHCHECK", "ENTRYPOINT", "CMD", "LABEL"}


def refuse(message):
    print(f"dockerfile-runtime: {message}", file=sys.stderr)
    sys.exit(1)


def instructions(text):
    """(KEYWORD, arguments) per instruction: comment lines dropped (also inside a continuation,
    as Docker does), backslash-newline removed."""
    result, pending = [], ""
    for line in text.split("\n"):
        if re.match(r"^\s*#", line) or (not pending and not line.strip()):
            continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        pending += line
        keyword, _, arguments = pending.strip().partition(" ")
        result.append((keyword.upper(), arguments.strip()))
        pending = ""
    if pending:
        refuse("the Dockerfile ends inside a continued line")
    return result


def stages(parsed):
    """Instructions grouped by FROM; each group starts with its FROM."""
    groups = []
    for keyword, arguments in parsed:
        if keyword == "FROM":
            groups.append([])
        elif not groups:
            if keyword == "ARG":
                continue
            refuse(f"{keyword} before the first FROM")
        groups[-1].append((keyword, arguments))
    if len(groups) < 2:
        refuse("expected a build stage and a runtime stage")
    return groups


def exec_form(keyword, arguments):
    try:
        words = json.loads(arguments)
    except json.JSONDecodeError:
        refuse(f"{keyword} is not in exec form (a JSON array): {arguments}")
    if not isinstance(words, list) or not words or not all(isinstance(word, str) for word in words):
        refuse(f"{keyword} is not a JSON array of strings: {arguments}")
    return words


def apt_packages(command):
    packages = []
    for match in re.finditer(r"apt-get\s+install([^&;|]*)", command):
        packages += [re.sub(r"[=:].*$", "", word) for word in match.group(1).split() if not word.startswith("-")]
    return packages


def build_stage(stage, copied):
    """The build command, and whether the binary is stripped, from the RUN that builds the file
    the runtime stage copies out (it must name that file)."""
    runs = [arguments for keyword, arguments in stage if keyword == "RUN"]
    for run in runs:
        match = re.search(r"swift build[^&;|]*", run)
        if match and "--show-bin-path" not in match.group(0):
            if copied not in run:
                refuse(f"the RUN with `swift build` does not produce {copied}, which the runtime stage copies")
            return match.group(0).strip(), int(bool(re.search(rf"strip\s+{re.escape(copied)}", run)))
    refuse("the build stage has no `swift build` command")


def runtime_stage(stage):
    found = {"RUN_COMMANDS": [], "PACKAGES": [], "ENVIRONMENT": [], "EXPOSED_PORTS": [], "COMMAND": []}
    base = stage[0][1].split()
    base = [word for word in base if not word.startswith("--")]
    found["BASE_IMAGE"] = base[0]
    suite = re.fullmatch(r"(?:docker\.io/)?(?:library/)?debian:([a-z]+)(?:-slim)?", base[0])
    if not suite:
        refuse(f"the runtime stage is not FROM debian:SUITE[-slim]: {base[0]}")
    found["SUITE"] = suite.group(1)
    for keyword, arguments in stage[1:]:
        if keyword not in KNOWN:
            refuse(f"the runtime stage uses {keyword}, which scripts/check-runtime-image.sh does not reproduce")
        if keyword == "RUN":
            if found["ENVIRONMENT"]:
                refuse("an ENV before a RUN: the check runs RUN without the image's ENV")
            if arguments.startswith("["):
                refuse("a RUN in exec form: the check runs RUN through /bin/sh -c")
            found["RUN_COMMANDS"].append(arguments)
            found["PACKAGES"] += apt_packages(arguments)
        elif keyword == "COPY":
            words = arguments.split()
            if len(words) != 3 or not words[0].startswith("--from="):
                refuse(f"COPY other than `COPY --from=STAGE SOURCE DEST`: {arguments}")
            if "COPY_SOURCE" in found:
                refuse("more than one COPY in the runtime stage")
            found["COPY_FROM"] = words[0].removeprefix("--from=")
            found["COPY_SOURCE"], found["COPY_DEST"] = words[1], words[2]
        elif keyword == "USER":
            if not re.fullmatch(r"\d+(:\d+)?", arguments):
                refuse(f"USER must be numeric (uid[:gid]): {arguments}")
            found["USER_SPEC"] = arguments
        elif keyword == "ENV":
            words = shlex.split(arguments)
            if not all("=" in word for word in words):
                refuse(f"ENV must be KEY=VALUE: {arguments}")
            found["ENVIRONMENT"] += words
        elif keyword == "EXPOSE":
            found["EXPOSED_PORTS"] += [word.split("/")[0] for word in arguments.split()]
        elif keyword == "STOPSIGNAL":
            found["STOP_SIGNAL"] = arguments
        elif keyword == "HEALTHCHECK":
            options, separator, command = arguments.partition("CMD ")
            if not separator:
                refuse(f"HEALTHCHECK without CMD: {arguments}")
            found["HEALTHCHECK_COMMAND"] = exec_form("HEALTHCHECK CMD", command.strip())
            # Docker's default is 30 s; the check gives the command the same time Docker would.
            timeout = re.search(r"--timeout=(\d+)s", options)
            found["HEALTHCHECK_TIMEOUT"] = timeout.group(1) if timeout else "30"
        elif keyword == "ENTRYPOINT":
            found["ENTRYPOINT"] = exec_form(keyword, arguments)
        elif keyword == "CMD":
            found["COMMAND"] = exec_form(keyword, arguments)
    for required in ("COPY_SOURCE", "USER_SPEC", "HEALTHCHECK_COMMAND", "ENTRYPOINT"):
        if required not in found:
            refuse(f"the runtime stage has no {required.split('_')[0]}")
    if not found["PACKAGES"]:
        refuse("found no `apt-get install` in the runtime stage")
    return found


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "Dockerfile"
    with open(path, encoding="utf-8") as handle:
        groups = stages(instructions(handle.read()))
    found = runtime_stage(groups[-1])
    stage_name = re.search(r"\s+AS\s+(\S+)", groups[0][0][1], re.IGNORECASE)
    copied_from = found.pop("COPY_FROM")
    if not stage_name or stage_name.group(1) != copied_from:
        refuse(f"the runtime stage copies from {copied_from!r}, which is not the first (build) stage")
    found["BUILD_COMMAND"], found["BUILD_STRIPS"] = build_stage(groups[0], found["COPY_SOURCE"])
    for name, value in found.items():
        if isinstance(value, list):
            print(f"{name}=({' '.join(shlex.quote(word) for word in value)})")
        else:
            print(f"{name}={shlex.quote(str(value))}")


main()
