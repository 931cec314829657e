"""The Rules & lessons pane's forms: add a lesson, add a rule, edit a lesson.

Each runs through the app's single write path (:meth:`tui.app.MemworkApp.write`):
a refusal shows in the open form, a success toasts and refreshes the panes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.base.errors import InvalidInput
from ...core.base.text import clip
from ...core.domain.targets import unknown_scope
from .. import external_editor
from ..screens.clusters import ClustersScreen
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen
from ..widgets.bars import plural

if TYPE_CHECKING:
    from .lessons import LessonsPane


def _tags(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _number(text: str, field: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise InvalidInput(field, f"must be a number between 0 and 1 (got {text!r})") from None


async def checked_scope(pane: LessonsPane, scope: str, kept: list[str]) -> str:
    """``scope`` if it names what the store knows. A space in a task or project name
    is refused (a typo: ``task:deploy api``); an unknown name is said first and kept
    on a second ctrl+s (``kept`` remembers it), since a new task is a fair thing to
    write a lesson for. Either way the message offers the nearest known name."""
    scope = scope.strip() or "global"
    if scope in kept:
        return scope
    problem = unknown_scope(scope, await pane.workbench.io(pane.service.targets))
    if problem is None:
        return scope
    if any(ch.isspace() for ch in scope):
        raise InvalidInput("scope", problem)
    kept.append(scope)
    raise InvalidInput("scope", f"{problem}; ctrl+s again keeps it")


def add_lesson(pane: LessonsPane) -> None:
    """A new lesson (an existing one with the same text is reinforced, and says so)."""
    kept: list[str] = []

    async def submit(values: dict[str, str]) -> Any:
        saved = await pane.workbench.write(
            "add_lesson",
            text=values["content"],
            scope=await checked_scope(pane, values["scope"], kept),
            confidence=_number(values["confidence"], "confidence"),
            tags=_tags(values["tags"]),
            source="tui",
            done=lambda result: (
                f"Already known: reinforced “{clip(result['content'], 50)}”"
                if result["action"] == "reinforced"
                else "Lesson added (a near-duplicate of another: m merges them)"
                if result["near_duplicate_of"]
                else "Lesson added"
            ),
        )
        if saved is not None:
            pane.select_lesson_after_load(saved["id"])
        return saved

    pane.app.push_screen(
        FormScreen(
            "Add a lesson",
            [
                Field("content", "Lesson", multiline=True),
                Field("scope", "Scope", "global", help="global, task:<id> or project:<name>"),
                Field("confidence", "Confidence", "0.5", help="0 to 1"),
                Field("tags", "Tags", "", placeholder="comma separated"),
            ],
            submit,
            save_label="Add",
        )
    )


def add_rule(pane: LessonsPane) -> None:
    """A manual rule; once added it is selected in the rules list."""
    kept: list[str] = []

    async def submit(values: dict[str, str]) -> Any:
        added = await pane.workbench.write(
            "add_rule",
            text=values["text"],
            scope=await checked_scope(pane, values["scope"], kept),
            done=lambda result: (
                f"Rule {result['outcome']}: {clip(result['text'], 50)}"
                if result["outcome"] != "unchanged"
                else f"Already a rule: {clip(result['text'], 50)}"
            ),
        )
        if added:
            pane.select_rule_after_load(added["id"])
        return added

    pane.app.push_screen(
        FormScreen(
            "New rule",
            [
                Field("text", "Rule", placeholder="[AVOID] … or [WORKS] … or plain text"),
                Field("scope", "Scope", "global", help="global or task:<task id>"),
            ],
            submit,
            save_label="Add",
        )
    )


def edit_lesson(pane: LessonsPane, lesson: dict[str, Any]) -> None:
    """Edit a lesson's text, scope, stored confidence, tags and decay rate."""
    kept: list[str] = [lesson["scope"]]  # its own scope, known or not, stays as it is

    async def submit(values: dict[str, str]) -> Any:
        return await pane.workbench.write(
            "edit_lesson",
            lesson=lesson["id"],
            text=values["content"],
            scope=await checked_scope(pane, values["scope"], kept),
            tags=_tags(values["tags"]),
            confidence=_number(values["confidence"], "confidence"),
            decay_rate=_number(values["decay_rate"], "decay_rate"),
            done="Lesson saved",
        )

    pane.app.push_screen(
        FormScreen(
            "Edit lesson",
            [
                Field("content", "Lesson", lesson["content"], multiline=True),
                Field("scope", "Scope", lesson["scope"]),
                Field("confidence", "Stored confidence", f"{lesson['confidence']:.2f}"),
                Field("tags", "Tags", ", ".join(lesson.get("tags", []))),
                Field("decay_rate", "Decay per week", f"{lesson.get('decay_rate', 0.05):g}"),
            ],
            submit,
        )
    )


async def edit_in_editor(pane: LessonsPane, lesson: dict[str, Any]) -> None:
    """Edit a lesson's text in $EDITOR, saved through the ``edit_lesson`` operation."""

    async def save(text: str) -> Any:
        return await pane.workbench.write(
            "edit_lesson", lesson=lesson["id"], text=text, done="Lesson saved"
        )

    await external_editor.edit_and_save(
        pane.workbench, f"lesson {lesson['id']}", lesson["content"], save
    )


def merge_near_duplicates(pane: LessonsPane) -> None:
    """Pick a group of near-duplicate lessons and merge it into its strongest."""
    now = pane.service.now
    groups = pane.service.near_duplicate_groups(list(pane.lessons.values()))
    if not groups:
        pane.app.notify("No near-duplicate lessons (similarity >= 90 within a scope)")
        return

    async def chosen(group: list[dict[str, Any]] | None) -> None:
        if group:
            keep, *rest = group
            await pane.workbench.write(
                "merge_lessons",
                keep=keep["id"],
                absorb=[x["id"] for x in rest],
                done=f"Merged {len(rest)} into “{keep['content'][:40]}”",
                restore_point=f"merging {len(rest) + 1} lessons",
            )

    pane.app.push_screen(ClustersScreen(groups, now), chosen)


def delete_lesson(pane: LessonsPane, lesson: dict[str, Any]) -> None:
    """Ask, then delete ``lesson`` for good (its words leave the store and the history)."""

    async def answered(yes: bool | None) -> None:
        if not yes:
            return
        await pane.workbench.write(
            "delete_lessons",
            lessons=[lesson["id"]],
            done=lambda r: "Lesson deleted for good" + _deleted_note(r),
        )

    pane.app.push_screen(
        ConfirmScreen(
            "Delete this lesson for good?",
            f"“{lesson['content']}”\n\nIt leaves the store with every wording it had, its "
            "links and the words of its history; this cannot be undone (f forgets a lesson "
            "and u brings it back). A store checkpoint taken since keeps its copy until you "
            "delete it.",
            confirm="Delete",
        ),
        answered,
    )


def _deleted_note(result: dict[str, Any]) -> str:
    notes = []
    if replaced := result.get("superseded_forgotten"):
        notes.append(f"{plural(len(replaced), 'lesson')} it had replaced forgotten (u restores)")
    if held := result.get("checkpoints_may_hold"):
        notes.append(
            f"{plural(len(held), 'checkpoint')} taken since "
            f"{'keeps' if len(held) == 1 else 'keep'} a copy until deleted"
        )
    return f"; {'; '.join(notes)}" if notes else ""


def forget_lesson(pane: LessonsPane, lesson: dict[str, Any]) -> None:
    """Ask, then forget ``lesson`` (soft: ``u`` brings it back exactly as it was)."""

    async def answered(yes: bool | None) -> None:
        if not yes:
            return
        done = await pane.workbench.write(
            "forget_lesson",
            lesson=lesson["id"],
            done=f"Forgotten: “{clip(lesson['content'], 40)}” (u brings it back)",
        )
        if done is not None:
            pane.last_forgotten = lesson["id"]
            pane.forgotten_here.add(lesson["id"])

    pane.app.push_screen(
        ConfirmScreen(
            "Forget this lesson?",
            f"“{lesson['content']}”\n\nIt leaves the context and the list; "
            "u brings it back (x shows forgotten lessons).",
            confirm="Forget",
        ),
        answered,
    )
