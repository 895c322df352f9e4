"""Regenerates src/plylog/v1/ from the protos in ../../proto/plylog/v1/.

The generated code is committed, so the package builds from this folder
alone, and a change to it shows in review. Run with a Python that has the
pinned generators of requirements-generate.txt (not the package's runtime
dependencies: any venv will do):

    python3 -m venv /tmp/plylog-gen
    /tmp/plylog-gen/bin/pip install -r requirements-generate.txt
    /tmp/plylog-gen/bin/python generate.py          # rewrites src/plylog/v1/
    /tmp/plylog-gen/bin/python generate.py --check  # fails if it is stale

For each proto it writes the messages and enums (`*_pb2.py`), their type
stubs (`*_pb2.pyi`) and the gRPC stubs (`*_pb2_grpc.py`), with
grpcio-tools, and the Connect client (`*_connect.py`, for the protos with a
service) with protoc-gen-connectrpc on google.protobuf's messages. `--check`
also fails when pyproject.toml's dependency floors are below what that code
asks for at import (grpcio and protobuf check their versions then).
"""

import argparse
import filecmp
import importlib.metadata
import pathlib
import re
import shutil
import sys
import tempfile
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
PROTO = HERE.parents[1] / "proto"
PACKAGE = HERE / "src" / "plylog" / "v1"
# What protoc writes; the rest of src/plylog/v1/ (__init__.py) is ours.
GENERATED = re.compile(r".*(_pb2\.pyi?|_pb2_grpc\.py|_connect\.py)$")


def pins():
    """The generators' versions pinned in requirements-generate.txt."""
    text = (HERE / "requirements-generate.txt").read_text()
    return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", text, re.MULTILINE))


def check_generators():
    """Fails unless the installed generators are the pinned ones."""
    wrong = []
    for name, pinned in pins().items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed != pinned:
            wrong.append(f"{name}=={pinned} (installed: {installed or 'none'})")
    if wrong:
        sys.exit(
            "generate.py needs the generators of requirements-generate.txt: "
            + ", ".join(wrong)
            + f"; `{sys.executable} -m pip install -r {HERE / 'requirements-generate.txt'}`"
        )


def generate(out):
    """Writes the generated code of every plylog/v1 proto under `out`."""
    from grpc_tools import protoc

    plugin = pathlib.Path(sys.executable).parent / "protoc-gen-connectrpc"
    if not plugin.exists():
        plugin = shutil.which("protoc-gen-connectrpc")
    if not plugin:
        sys.exit("no protoc-gen-connectrpc beside this Python or on the PATH")
    include = pathlib.Path(protoc.__file__).parent / "_proto"
    files = sorted(str(p.relative_to(PROTO)) for p in (PROTO / "plylog" / "v1").glob("*.proto"))
    code = protoc.main(
        [
            "protoc",
            f"-I{PROTO}",
            f"-I{include}",
            f"--python_out={out}",
            f"--pyi_out={out}",
            f"--grpc_python_out={out}",
            f"--plugin=protoc-gen-connectrpc={plugin}",
            f"--connectrpc_out={out}",
            "--connectrpc_opt=protobuf=google",
            *files,
        ]
    )
    if code != 0:
        sys.exit(f"protoc failed with {code}")
    return pathlib.Path(out) / "plylog" / "v1"


def generated_names(folder):
    return sorted(p.name for p in folder.iterdir() if GENERATED.match(p.name))


def version(text):
    """A release number as a tuple, padded to three parts (0.13 == 0.13.0)."""
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def floors_problems(folder):
    """What pyproject.toml's dependencies lack for the code in `folder`."""
    project = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    ranges = {}
    for requirement in requirements:
        name, spec = re.match(r"([A-Za-z0-9_.-]+)\s*(.*)", requirement.split(";")[0]).groups()
        ranges[name.lower()] = dict(re.findall(r"(>=|<)\s*([0-9.]+)", spec))
    needed = {}
    for path in folder.iterdir():
        text = path.read_text()
        if grpc := re.search(r"^GRPC_GENERATED_VERSION = '([0-9.]+)'", text, re.MULTILINE):
            needed["grpcio"] = grpc.group(1)
        if pb := re.search(r"^# Protobuf Python Version: ([0-9.]+)", text, re.MULTILINE):
            needed["protobuf"] = pb.group(1)
        if connect := re.search(r"protoc-gen-connectrpc-py v([0-9.]+)", text):
            needed["connectrpc"] = connect.group(1)
    problems = []
    for name, gen in needed.items():
        floor = ranges.get(name, {}).get(">=")
        if floor is None or version(floor) < version(gen):
            problems.append(f"{name}>={gen} (the generated code's; pyproject.toml says >={floor})")
        ceiling = ranges.get(name, {}).get("<")
        # protobuf's gencode runs on its own major's runtimes; connectrpc is
        # before 1.0, where a minor release may break the generated code.
        major_only = name != "connectrpc" or version(gen)[0] >= 1
        bound = f"{version(gen)[0] + 1}" if major_only else f"0.{version(gen)[1] + 1}"
        if ceiling is None or version(ceiling) > version(bound):
            problems.append(f"{name}<{bound} (pyproject.toml says <{ceiling})")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="generate into a temporary directory and fail if src/plylog/v1/ differs",
    )
    args = parser.parse_args()
    check_generators()
    with tempfile.TemporaryDirectory(prefix="plylog-gen-") as out:
        fresh = generate(out)
        names = generated_names(fresh)
        if args.check:
            committed = generated_names(PACKAGE)
            differ = sorted(set(names) ^ set(committed))
            differ += [n for n in names if n in committed and not filecmp.cmp(fresh / n, PACKAGE / n, shallow=False)]
            problems = floors_problems(PACKAGE)
            if differ or problems:
                if differ:
                    print("src/plylog/v1/ is not what the protos generate:", ", ".join(sorted(differ)))
                    print(f"regenerate: {sys.executable} {HERE / 'generate.py'}")
                if problems:
                    print("pyproject.toml's dependencies must allow only what the generated code runs on:", "; ".join(problems))
                sys.exit(1)
            print(f"src/plylog/v1/ is current: {', '.join(names)}")
            return
        for stale in set(generated_names(PACKAGE)) - set(names):
            (PACKAGE / stale).unlink()
        for name in names:
            shutil.copyfile(fresh / name, PACKAGE / name)
        print(f"wrote {', '.join(names)} to {PACKAGE}")
        if problems := floors_problems(PACKAGE):
            print("now raise pyproject.toml's dependencies:", "; ".join(problems))
            sys.exit(1)


if __name__ == "__main__":
    main()
