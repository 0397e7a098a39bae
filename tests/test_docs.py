"""The README and docs/*.md stay true: every block marked runnable (```python runnable, ```bash runnable) runs as
written, offline, from a temporary folder that looks like the repository root; every other Python or shell block is
listed in NOT_RUN with the reason. docs/README.md explains the convention."""

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = {"python", "bash", "sh", "shell", "console", "powershell", "bat", "cmd"}
RUNNABLE = {"python", "bash"}
TIMEOUT = 300  # seconds for all Python blocks together, and for each shell block

# The first line of each Python or shell block that is not run (its comment left out), and why.
NOT_RUN = {
    "make lab": "starts JupyterLab and waits for you (the first time, it installs the kit)",
    "make test TEST_ARGS='-q -m \"not browser\"'": "runs the whole test suite, this test included",
    "py tools\\kit.py lab": "Windows; the same commands as make, which tests/test_kit.py checks",
    "conda env create -f environment.yml && conda activate coordkit && jupyter lab": "needs conda and the network",
    "make binder-url": "needs a GitHub remote; tests/test_kit.py checks the link it builds",
    ".venv/bin/coordkit reproduce rep-beer-fig1": "every other figure: minutes in all",
    ".venv/bin/coordkit record rep-beer-fig1 --seeds 1 --budget-usd 1.00": "needs ANTHROPIC_API_KEY and spends money",
    "from coordkit import BeerGame, sweep": "needs a Dask scheduler at tcp://scheduler:8786",
    ".venv/bin/coordkit reproduce rep-beer-fig1 --seeds 200 --engine dask": "starts a Dask cluster; minutes of work",
    "from coordkit.agora.library_client import LibraryConversation": (
        "needs an agent served by agora-protocol, which the kit does not install; tests/test_agora_library_live.py "
        "runs it against the library's own server"
    ),
}


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence
    language: str
    runnable: bool
    code: str

    @property
    def first_line(self) -> str:
        return self.code.strip().splitlines()[0].split("  #")[0].strip()

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown page; a fence closes on a line of at least as many backticks."""
    found, lines, index = [], path.read_text(encoding="utf-8").splitlines(), 0
    while index < len(lines):
        opening = re.match(r"^ {0,3}(`{3,})(.*)$", lines[index])
        if not opening:
            index += 1
            continue
        fence, info = opening.group(1), opening.group(2).split()
        end = index + 1
        while end < len(lines) and not re.match(rf"^ {{0,3}}{fence}`*\s*$", lines[end]):
            end += 1
        language = info[0] if info else ""
        code = "\n".join(lines[index + 1 : end])
        found.append(Block(str(path.relative_to(ROOT)), index + 1, language, "runnable" in info[1:], code))
        index = end + 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]
CODE_BLOCKS = [block for block in ALL if block.language in CODE]
SHELL = [block for block in CODE_BLOCKS if block.runnable and block.language == "bash"]
PYTHON_PAGES = sorted({block.page for block in CODE_BLOCKS if block.runnable and block.language == "python"})


def environment() -> dict[str, str]:
    """Offline and keyless: no API key or coordkit setting from the caller; .venv's programs first on PATH."""
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("ANTHROPIC_", "OPENAI_", "COORDKIT_"))
    }
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def workspace(folder: Path) -> Path:
    """A folder that looks like the repository root to a reader's commands: .venv and data/ are links to the real
    ones, and what the commands write (out/, runs/) stays in the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in (".venv", "data"):
        (folder / name).symlink_to(ROOT / name, target_is_directory=True)
    return folder


# Runs each page's Python blocks in order in one namespace, in the page's own workspace; one process for every page.
RUNNER = """
import json, os, sys, traceback
pages, results = json.load(open(sys.argv[1])), {}
for page in pages:
    os.chdir(page["folder"])
    namespace, results[page["page"]] = {"__name__": "__main__"}, None
    for block in page["blocks"]:
        try:
            exec(compile(block["code"], f"{page['page']}:{block['line']}", "exec"), namespace)
        except BaseException:
            results[page["page"]] = f"the block at line {block['line']} failed:\\n" + traceback.format_exc()
            break
json.dump(results, open(sys.argv[2], "w"))
sys.stdout.flush()
os._exit(0)  # a failed block may leave threads behind (a server it started): do not wait for them
"""


@pytest.fixture(scope="module")
def python_results(tmp_path_factory) -> dict[str, str | None]:
    """Every page's runnable Python blocks, run once: page → None, or the failure."""
    folder = tmp_path_factory.mktemp("docs-python")
    pages = [
        {
            "page": page,
            "folder": str(workspace(folder / page.replace("/", "_"))),
            "blocks": [{"line": b.line, "code": b.code} for b in CODE_BLOCKS if b.page == page and b.runnable],
        }
        for page in PYTHON_PAGES
    ]
    (folder / "pages.json").write_text(json.dumps(pages))
    python = ROOT / ".venv" / "bin" / "python"
    files = [str(folder / "pages.json"), str(folder / "results.json")]
    command = [str(python if python.exists() else sys.executable), "-c", RUNNER, *files]
    ran = subprocess.run(command, cwd=folder, env=environment(), capture_output=True, text=True, timeout=TIMEOUT)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads((folder / "results.json").read_text())


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_runnable_python_blocks_run(page, python_results):
    assert python_results[page] is None, python_results[page]


@pytest.mark.parametrize("block", SHELL, ids=str)
def test_runnable_shell_blocks_run(block, tmp_path):
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=workspace(tmp_path / "root"),
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert ran.returncode == 0, f"{block} failed:\n{ran.stdout[-1500:]}\n{ran.stderr[-3000:]}"


def test_every_block_that_is_not_run_says_why():
    unlisted = [
        f"{block}: {block.first_line}"
        for block in CODE_BLOCKS
        if not block.runnable and block.first_line not in NOT_RUN
    ]
    assert not unlisted, "mark these runnable, or list them in NOT_RUN with the reason:\n" + "\n".join(unlisted)
    listed = {block.first_line for block in CODE_BLOCKS if not block.runnable}
    assert not set(NOT_RUN) - listed, f"NOT_RUN lists blocks that are gone: {set(NOT_RUN) - listed}"
    assert SHELL and PYTHON_PAGES


def test_only_python_and_bash_blocks_are_marked_runnable():
    assert not [str(block) for block in ALL if block.runnable and block.language not in RUNNABLE]


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    headings = [
        line.lstrip("#").strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")
    ]
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_links_lead_somewhere(page):
    text = re.sub(r"(`{3,}).*?\1", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)  # not inside code
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if "://" in target:
            continue
        file, _, anchor = target.partition("#")
        linked = (page.parent / file).resolve() if file else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading {anchor!r}")
    assert not broken, "\n".join(broken)


def test_the_readme_opens_with_the_two_commands():
    """A newcomer finds `make lab` and `make test` on the first screen."""
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:30])
    assert "\nmake lab " in first_screen and "\nmake test " in first_screen
