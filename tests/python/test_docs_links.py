"""Every relative link of the tracked Markdown files (README, docs/, bench/, tutorials/)
points at a file that exists, and every docs/ page is reachable from the README's
documentation list or a page it lists."""

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def markdown_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.md"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [p for p in out.stdout.split("\n") if p]


def links(path):
    text = open(os.path.join(ROOT, path)).read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code is not links
    text = re.sub(r"`[^`\n]*`", "", text)
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):  # http:, mailto:
            continue
        yield os.path.normpath(os.path.join(os.path.dirname(path), target))


def test_every_relative_link_resolves():
    bad = [f"{p}: {t}" for p in markdown_files() for t in links(p)
           if not os.path.exists(os.path.join(ROOT, t))]
    assert not bad, "\n".join(bad)


def test_every_doc_page_is_reachable_from_the_readme():
    seen, todo = set(), ["README.md"]
    while todo:
        page = todo.pop()
        if page in seen or not page.endswith(".md") or not os.path.exists(os.path.join(ROOT, page)):
            continue
        seen.add(page)
        todo += list(links(page))
    docs = [p for p in markdown_files() if p.startswith("docs/")]
    unreachable = [p for p in docs if p not in seen]
    assert not unreachable, unreachable
