# SPDX-License-Identifier: Apache-2.0
"""Sphinx configuration of dpselect's documentation.

One command builds it (docs/build.sh, or the `docs` target of a CMake build with the Python
extension): Doxygen reads the public headers into XML, Breathe renders the C++ reference from it,
autodoc the Python reference from the built package, and MyST the guide (the Markdown pages of
docs/). Warnings are errors there.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import re
import subprocess
from pathlib import Path

from sphinx.ext.autodoc import ClassDocumenter, MethodDocumenter

docs_dir = Path(__file__).resolve().parent
source_root = docs_dir.parent


def _project_version() -> str:
    """The one version number: project(dpselect VERSION x.y.z) in the top CMakeLists.txt."""
    text = (source_root / "CMakeLists.txt").read_text()
    return re.search(r"project\(dpselect VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text).group(1)


project = "dpselect"
author = "The dpselect authors"
copyright = "The dpselect authors, Apache License 2.0"
version = release = _project_version()

extensions = [
    "breathe",
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

# dpselect.dask and dpselect.spark import Dask, PyArrow and PySpark (the package's extras): where
# they are not installed (docs/requirements.txt leaves them out: PySpark alone is 300 MB), autodoc
# reads those modules against mocks. Their public signatures name only dpselect's own types and
# `Any`, so the pages are the same either way.
autodoc_mock_imports = [name for name in ("dask", "pyarrow", "pyspark") if importlib.util.find_spec(name) is None]

# The Markdown pages of docs/ are the guide; pictures/ holds their figures and the script that
# draws them.
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "pictures/*.py", "Doxyfile"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# The C++ reference: Doxygen's XML of include/dpselect, written next to the HTML output.
doxygen_xml = Path(os.environ.get("DPSELECT_DOXYGEN_OUTPUT", docs_dir / "_build" / "doxygen"))
breathe_projects = {"dpselect": str(doxygen_xml / "xml")}
breathe_default_project = "dpselect"
breathe_default_members = ("members",)
breathe_show_include = True
cpp_index_common_prefix = ["dpselect::"]


def _run_doxygen(app) -> None:
    """Regenerates the XML on every build, so the reference never lags the headers."""
    doxygen_xml.mkdir(parents=True, exist_ok=True)
    subprocess.run(["doxygen", "Doxyfile"], cwd=docs_dir, check=True,
                   env={**os.environ, "DOXYGEN_OUTPUT": str(doxygen_xml)})


# The Python reference: the built package (PYTHONPATH), its NumPy-style docstrings.
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
# A class's "Attributes" section as fields: autodoc documents the attributes themselves.
napoleon_use_ivar = True



class _NanobindMethodDocumenter(MethodDocumenter):
    """Documents the methods and static methods of the extension's classes: nanobind functions are
    neither Python functions nor builtins, so autodoc would list them as plain attributes. Their
    signature is the first line of their docstring (autodoc_docstring_signature)."""

    objtype = "nanobindmethod"
    directivetype = "method"
    priority = MethodDocumenter.priority + 1

    @classmethod
    def can_document_member(cls, member, membername, isattr, parent) -> bool:
        return type(member).__name__ == "nb_func" and isinstance(parent, ClassDocumenter)

    def import_object(self, raiseerror: bool = False) -> bool:
        imported = super().import_object(raiseerror)
        if imported and type(self.object).__name__ == "nb_func":
            # A function stored in the class itself (not bound to instances) is a static method.
            self.options = {**self.options, "staticmethod": True}
        return imported

    def add_directive_header(self, sig: str) -> None:
        super().add_directive_header(sig)
        if self.options.get("staticmethod"):
            self.add_line("   :staticmethod:", self.get_sourcename())


def _public_module_names(text: str | None) -> str | None:
    """The extension's classes under the names users import them by (dpselect.X)."""
    return None if text is None else text.replace("dpselect._dpselect.", "dpselect.")


def _public_signature(app, what, name, obj, options, signature, return_annotation):
    return _public_module_names(signature), _public_module_names(return_annotation)


def _public_docstring(app, what, name, obj, options, lines) -> None:
    lines[:] = [_public_module_names(line) for line in lines]


html_theme = "furo"
html_title = f"dpselect {release}"
html_static_path: list[str] = []


# Links from the guide to files of the repository outside docs/ (examples, benchmark results,
# the changelog's sources) point into the source tree the pages were built from: the pages are
# read from a clone, next to it. The `source:` scheme carries the path from the repository root.
_repository_link = re.compile(r"\]\((?!https?:|#|mailto:|source:)([^)\s]+)\)")


def _link_repository_files(app, docname, source) -> None:
    page_dir = (docs_dir / docname).parent

    def rewrite(match: re.Match) -> str:
        target, _, anchor = match.group(1).partition("#")
        path = (page_dir / target).resolve()
        if docs_dir in path.parents and path.suffix == ".md" or not path.exists():
            return match.group(0)  # a guide page (or a broken link: Sphinx reports it)
        if path.suffix in {".png", ".svg", ".jpg"}:
            return match.group(0)  # a picture: Sphinx copies it into the pages
        return f"](source:{path.relative_to(source_root).as_posix()}{'#' + anchor if anchor else ''})"

    source[0] = _repository_link.sub(rewrite, source[0])


def _source_scheme(app, config) -> None:
    root = os.path.relpath(source_root, app.outdir)
    config.myst_url_schemes = {
        "http": None, "https": None, "mailto": None,
        "source": {"url": root + "/{{path}}", "title": "{{path}}"},
    }


class _NamespaceOfEveryHeader(logging.Filter):
    """Breathe declares namespace dpselect once on every header's page; Sphinx's C++ domain calls
    the second a duplicate. Any other duplicate declaration still fails the build."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (getattr(record, "type", None) == "duplicate_declaration"
                    and record.args and record.args[-1] in ("dpselect", "dpselect::noise", "dpselect::mpi"))


def setup(app):
    logging.getLogger("sphinx.sphinx.domains.cpp").addFilter(_NamespaceOfEveryHeader())
    app.connect("builder-inited", _run_doxygen)
    app.connect("config-inited", _source_scheme)
    app.connect("source-read", _link_repository_files)
    app.connect("autodoc-process-signature", _public_signature)
    app.connect("autodoc-process-docstring", _public_docstring)
    app.add_autodocumenter(_NanobindMethodDocumenter)
    app.connect("include-read", lambda app, path, docname, source: _link_repository_files_of(path, source))


def _link_repository_files_of(path, source) -> None:
    """The same rewrite for a file included into a page (the README, the changelog)."""
    relative = (docs_dir / path).resolve().relative_to(source_root)  # path: from the source directory
    _link_repository_files(None, os.path.relpath(relative.with_suffix(""), "docs"), source)
