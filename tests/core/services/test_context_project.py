"""`memwork context --project P`: that project's lessons count as matching."""

from __future__ import annotations

T0 = "2026-11-01T12:00:00Z"


def _lessons(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_a_projects_lessons_rank_as_matching_with_project(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Global habit", "--confidence", "0.8", now=T0)
    cli(
        "lesson",
        "add",
        "Billing uses cents",
        "--scope",
        "project:billing",
        "--confidence",
        "0.7",
        now=T0,
    )
    cli("lesson", "add", "Search reindexes nightly", "--scope", "project:search", now=T0)

    # Without --project a project lesson is weighted below every global one.
    plain = _lessons(cli("context", now=T0).out)
    assert plain.index("- Global habit") < plain.index("- Billing uses cents")

    # With it, that project's lesson matches fully (0.7 x 1.0 beats 0.8 x 0.75) and
    # other projects' lessons are left out, as another task's lessons are.
    billing = _lessons(cli("context", "--project", "billing", now=T0).out)
    assert billing == ["- Billing uses cents", "- Global habit"]
    searching = _lessons(cli("context", "--project", "search", "--task", "t", now=T0).out)
    assert "- Billing uses cents" not in searching
    assert "- Search reindexes nightly" in searching
