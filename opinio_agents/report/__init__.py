"""The shareable HTML report of one entity (``opinio report``).

Example:
    >>> from opinio_agents.report import build_report, render_report   # doctest: +SKIP
    >>> html = render_report(build_report(rag, "101"))                   # doctest: +SKIP
"""

from __future__ import annotations

from opinio_agents.report.html import ReportData, build_report, render_report

__all__ = ["ReportData", "build_report", "render_report"]
