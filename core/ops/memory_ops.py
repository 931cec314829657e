# Made by `make generate` (python -m memwork.core.ops.codegen)
# from core/ops/operations.py:
# do not edit; declare the operation there and generate again.
# ruff: noqa: A002
"""``Memory``'s methods, one per operation (see :mod:`core.ops.operations`).

Each method checks its arguments as every JSON door does (one line naming the
field on a wrong type) and runs the operation's core function with this
``Memory``'s store, clock and audit actor.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class Operations:
    """The operations, as methods; :class:`core.ops.memory.Memory` runs them."""

    def _operation(self, name: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError  # Memory runs it

    def record_failure(
        self,
        report: dict[str, Any],
    ) -> dict[str, Any]:
        """Record a crash report as a failed episode (a fingerprint seen before is counted).

        Call when a run crashes (an exception, a non-zero exit) with its crash report.

        Record a crash report from the failure loop (error class, friction kind, stack
        signature, fingerprint, message, task, phase, exit code), scrubbed, as a failed episode
        (score 0) whose error is its class and message, so its line leads the next contexts'
        failure block. A report whose fingerprint was seen before is not recorded again: it is
        counted on the episode it first became (`repeated`, `count`; the block's line ends
        `(seen <n>x)`) and moves to its new time.

        Args:
            report: the crash report: error_class (required), message, fingerprint,
            stack_signature, friction_kind, task, phase, exit_code; other keys are kept as
            metadata.
        """
        result: dict[str, Any] = self._operation(
            "record_failure",
            {
                "report": report,
            },
        )
        return result

    def observe(
        self,
        session: str,
        text: str,
        *,
        kind: str = "note",
        tags: Iterable[str] = (),
    ) -> dict[str, Any]:
        """Add an observation to a session.

        Note something seen or done during a session.

        Add an observation to a session (at most 500 per session; past it the oldest are dropped
        and counted). Any session id works: an unknown one creates the session, marked implicit.

        Args:
            session: the session's id (any id an agent names works: an unknown one creates the
            session, marked implicit).
            text: what was seen or done (secrets and personal details are redacted).
            kind: tool, note, error, decision, ...
            tags: tags (repeatable on the CLI).
        """
        result: dict[str, Any] = self._operation(
            "observe",
            {
                "session": session,
                "text": text,
                "kind": kind,
                "tags": tags,
            },
        )
        return result

    def start_session(
        self,
        agent: str = "",
        project: str = "",
        title: str = "",
        *,
        session: str | None = None,
    ) -> dict[str, Any]:
        """Start a session.

        Call when a run begins.

        Start a session; its `id` is what observations and working memory take. With `session`,
        the session gets that id of your own (an agent's `run-42`), so it can have a project
        (and see the keys the project shares): a session working memory already made under that
        id is adopted, keeping what it holds; the same start again returns it unchanged; another
        agent or project is a conflict.

        Args:
            agent: the agent's id (default: the caller's agent id).
            project: the project it works on.
            title: a title for the run.
            session: an id of your own for the session (letters, digits, _ - . : @).
        """
        result: dict[str, Any] = self._operation(
            "start_session",
            {
                "agent": agent,
                "project": project,
                "title": title,
                "session": session,
            },
        )
        return result

    def end_session(
        self,
        session: str,
        summary: str = "",
    ) -> dict[str, Any]:
        """End a session.

        Call when a run ends, with a one-paragraph summary of what happened.

        End a session, with a summary of what happened.

        Args:
            session: the session's id (or a unique start or end of it).
            summary: what happened, in a paragraph.
        """
        result: dict[str, Any] = self._operation(
            "end_session",
            {
                "session": session,
                "summary": summary,
            },
        )
        return result

    def summarize_session(
        self,
        session: str,
        summary: str,
    ) -> dict[str, Any]:
        """Set a session's summary.

        Set a session's summary without ending it (or replace an ended session's). While review
        is on, an agent's summary waits as a proposal.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            session: the session's id (or a unique start or end of it).
            summary: what happened, in a paragraph.
        """
        result: dict[str, Any] = self._operation(
            "summarize_session",
            {
                "session": session,
                "summary": summary,
            },
        )
        return result

    def list_sessions(
        self,
    ) -> list[dict[str, Any]]:
        """List sessions.

        Every session, newest first (while agents are isolated, the caller's own and those of no
        agent). Sessions created by the first use of an agent's own id carry `implicit: true`.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_sessions",
            {},
        )
        return result

    def get_session(
        self,
        session: str,
        *,
        order: str = "oldest",
        limit: int | None = None,
    ) -> dict[str, Any]:
        """Show a session and its observations.

        Read a session's timeline (order newest, with a limit) to see what happened.

        One session with its observations, oldest first (`order` newest: newest first, a
        timeline; `limit` N: the newest N).

        Args:
            session: the session's id (or a unique start or end of it).
            order: oldest first, or newest first (a timeline).
            limit: at most N observations, the newest N (default: all).
        """
        result: dict[str, Any] = self._operation(
            "get_session",
            {
                "session": session,
                "order": order,
                "limit": limit,
            },
        )
        return result

    def delete_session(
        self,
        session: str,
    ) -> dict[str, Any]:
        """Forget a session: its observations, working memory and actions, for good.

        Forget a session an agent should not remember (it cannot be undone).

        Delete a session with its observations, its working memory and the actions made in it
        for good: out of every table (their links too), every search cache and the next context.
        The audit log keeps the fact (time, actor, action, id), not the words: their entries'
        summaries become `[forgotten]`, and so does a quote of a forgotten observation in a
        summary `crystallize` wrote (`quotes_blanked`). Lessons that say a forgotten observation
        word for word (`reflect` writes some so) are their own records and stay, named in
        `lessons_quoting` for `lesson delete`. Store checkpoints keep their copies until deleted
        (`checkpoints_may_hold` lists those taken since the session started); a Redis server's
        append-only file keeps old bytes until it is rewritten.

        Args:
            session: the session's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "delete_session",
            {
                "session": session,
            },
        )
        return result

    def delete_observations(
        self,
        observations: Iterable[str],
    ) -> dict[str, Any]:
        """Forget single observations, for good.

        Forget observations that hold something that must not be remembered.

        Delete single observations for good: out of every table (their links too), every search
        cache and the next context. The audit log keeps the fact (time, actor, action, id), not
        the words: their entries' summaries become `[forgotten]`, and so does a quote of a
        forgotten observation in a summary `crystallize` wrote (`quotes_blanked`). Lessons that
        say a forgotten observation word for word (`reflect` writes some so) are their own
        records and stay, named in `lessons_quoting` for `lesson delete`. Store checkpoints keep
        their copies until deleted (`checkpoints_may_hold` lists those taken since the session
        started); a Redis server's append-only file keeps old bytes until it is rewritten.

        Args:
            observations: the observations (obs_… or <session>/obs_…; all must exist).
        """
        result: dict[str, Any] = self._operation(
            "delete_observations",
            {
                "observations": observations,
            },
        )
        return result

    def forget(
        self,
        kind: str,
        id: str,
    ) -> dict[str, Any]:
        """Forget a session or an observation, for good.

        Forget a session or an observation for privacy: it leaves memory for good (cannot be
        undone).

        Delete a session (with its observations and working memory) or an observation for good:
        out of every table (their links too), every search cache and the next context. The audit
        log keeps the fact (time, actor, action, id), not the words: their entries' summaries
        become `[forgotten]`, and so does a quote of a forgotten observation in a summary
        `crystallize` wrote (`quotes_blanked`). Lessons that say a forgotten observation word
        for word (`reflect` writes some so) are their own records and stay, named in
        `lessons_quoting` for `lesson delete`. Store checkpoints keep their copies until deleted
        (`checkpoints_may_hold` lists those taken since the session started); a Redis server's
        append-only file keeps old bytes until it is rewritten.

        Args:
            kind: what to forget.
            id: its id (an observation also as <session>/obs_…).
        """
        result: dict[str, Any] = self._operation(
            "forget",
            {
                "kind": kind,
                "id": id,
            },
        )
        return result

    def action_create(
        self,
        title: str,
        *,
        session: str | None = None,
        project: str | None = None,
        priority: int = 0,
        after: Iterable[str] = (),
    ) -> dict[str, Any]:
        """Add a work item (pending).

        Plan work: one action per step you or another agent must take, with `after` for what has
        to be done first.

        Add a work item, pending. `after` lists the actions it waits for: it joins the frontier
        once every one of them is done. Each carries `after`, `waiting_for` (the dependencies
        not done yet) and `workable`. While the store's review is on, an agent's call waits for
        a person: the result is the proposal ("proposed": true).

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            title: what to do, in one line.
            session: the session it belongs to.
            project: the project it belongs to.
            priority: higher goes first (default 0).
            after: actions it waits for (repeatable; a cycle is refused).
        """
        result: dict[str, Any] = self._operation(
            "action_create",
            {
                "title": title,
                "session": session,
                "project": project,
                "priority": priority,
                "after": after,
            },
        )
        return result

    def action_update(
        self,
        action: str,
        *,
        status: str | None = None,
        title: str | None = None,
        note: str | None = None,
        priority: int | None = None,
        after: Iterable[str] = (),
    ) -> dict[str, Any]:
        """Change a work item's status, title or priority, or add a note.

        Say you started (active), finished (done) or are stuck on (blocked) an action.

        Change an action: its status (pending, active, blocked, done, cancelled), title or
        priority, add a timestamped note, or make it wait for more actions (a dependency that
        would close a cycle is refused, naming the cycle). Only what is given changes. While the
        store's review is on, an agent's new title or priority (what the context shows, and in
        what order) waits for a person: the result is the proposal ("proposed": true); status,
        notes and dependencies go live.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            action: the action's id (or a unique start or end of it).
            status: its new status.
            title: a new title.
            note: a note to add (timestamped).
            priority: a new priority.
            after: more actions it waits for (repeatable; a cycle is refused).
        """
        result: dict[str, Any] = self._operation(
            "action_update",
            {
                "action": action,
                "status": status,
                "title": title,
                "note": note,
                "priority": priority,
                "after": after,
            },
        )
        return result

    def list_actions(
        self,
        *,
        status: str | None = None,
        project: str | None = None,
    ) -> list[dict[str, Any]]:
        """List work items.

        Every action (of a status, of a project), open ones first, each group by priority then
        age, with `after`, `waiting_for` and `workable`.

        Args:
            status: only actions in this status.
            project: only this project's actions.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_actions",
            {
                "status": status,
                "project": project,
            },
        )
        return result

    def get_action(
        self,
        action: str,
    ) -> dict[str, Any]:
        """One work item with its dependencies.

        One action with its notes, what it waits for and whether it can be worked on.

        Args:
            action: the action's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "get_action",
            {
                "action": action,
            },
        )
        return result

    def frontier(
        self,
        *,
        project: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """What can be worked on now.

        Ask what to work on next.

        The actions that can be worked on now: pending or active, every dependency done; highest
        priority first, then oldest first. The context shows the top 5.

        Args:
            project: this project's actions (and those of no project).
            limit: at most N actions.
        """
        result: list[dict[str, Any]] = self._operation(
            "frontier",
            {
                "project": project,
                "limit": limit,
            },
        )
        return result

    def add_lesson(
        self,
        text: str,
        *,
        scope: str = "global",
        confidence: float | None = None,
        tags: Iterable[str] = (),
        on_duplicate: str = "keep-both",
        decay_rate: float | None = None,
        source: str = "agent",
    ) -> dict[str, Any]:
        """Add a lesson (re-adding the same words reinforces).

        Save durable knowledge worth carrying to future tasks, as one imperative line.

        Save a lesson. Re-adding the same words (once case and spacing are normalised)
        reinforces it. A near-duplicate (>= 90 similar, same scope) may be new advice, so by
        default it is kept as a lesson of its own and reported (`action` kept-both,
        `near_duplicate_of`, `similarity`; lint lists the pair); `on_duplicate` reinforce folds
        it into the old one, supersede replaces it. A lesson that says the opposite of another
        (a negation, an antonym verb such as enable/disable, a reversed before/after) is never a
        near-duplicate: it is kept and `contradicts` lists the other, as `lesson show` and lint
        do. Added at confidence <= 0.1, a lesson is kept but starts forgotten
        (`starts_forgotten`). Re-adding with a `decay_rate` sets the lesson's rate.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            text: the lesson, as one imperative line.
            scope: global, task:<task id> or project:<project>.
            confidence: 0.0-1.0 (default 0.5).
            tags: tags (repeatable on the CLI).
            on_duplicate: what a near-duplicate does: keep both (it may be new advice),
            reinforce it, or supersede it.
            decay_rate: confidence lost per week without reinforcement, 0.0-1.0 (default 0.05; 0
            never decays).
            source: who wrote the lesson, kept on the record (the workbench says tui).
        """
        result: dict[str, Any] = self._operation(
            "add_lesson",
            {
                "text": text,
                "scope": scope,
                "confidence": confidence,
                "tags": tags,
                "on_duplicate": on_duplicate,
                "decay_rate": decay_rate,
                "source": source,
            },
        )
        return result

    def list_lessons(
        self,
        *,
        all: bool = False,
    ) -> list[dict[str, Any]]:
        """List lessons.

        Live lessons, best first, with their effective (decayed) confidence; `all` adds
        forgotten, deleted and superseded ones. Each carries `effective_confidence`,
        `forgotten`, `state` and `effect`.

        Args:
            all: include forgotten, deleted and superseded.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_lessons",
            {
                "all": all,
            },
        )
        return result

    def get_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Show a lesson.

        One lesson with its computed fields, its other wordings, its effect on its task's scores
        and `contradicts` (live lessons it negates now).

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "get_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def reinforce_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Reinforce a lesson.

        Call when a lesson proved right again.

        Raise a lesson's confidence (+10% of what it lacks) and restart its decay.

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "reinforce_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def weaken_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Weaken a lesson.

        Call when a lesson misled you.

        Lower a lesson's confidence.

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "weaken_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def pin_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Pin a lesson.

        Pin a lesson: a pinned lesson does not decay.

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "pin_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def unpin_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Unpin a lesson.

        Unpin a lesson: it decays again from its last reinforcement.

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "unpin_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def forget_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Forget a lesson (it can be unforgotten).

        Forget a lesson (soft: `restore` brings it back).

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "forget_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def restore_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Restore a lesson.

        Make a forgotten lesson live: its decay starts again from now and its confidence is
        raised to at least 0.3 (a higher one is kept); `restored_from` is the confidence it had.

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "restore_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def unforget_lesson(
        self,
        lesson: str,
    ) -> dict[str, Any]:
        """Undo forgetting a lesson.

        Undo `forget`: the lesson is live again exactly as it was (its confidence and decay
        clock untouched), unlike `restore`, which brings it back as if reinforced now. Only a
        lesson forgotten by hand can be unforgotten; one that has also decayed away since stays
        forgotten (restore it).

        Args:
            lesson: the lesson's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "unforget_lesson",
            {
                "lesson": lesson,
            },
        )
        return result

    def delete_lessons(
        self,
        lessons: Iterable[str],
    ) -> dict[str, Any]:
        """Delete lessons for good, their words with them.

        Delete a lesson that holds something no agent should remember; it cannot be undone
        (`lesson forget` hides one and can be).

        Delete lessons for good (`forget` only hides one): the record with every wording it had,
        its text among other lessons' wordings (`wordings_removed`), its links, and the words of
        its audit entries and of the review proposals that wrote or would edit it
        (`[forgotten]`; a pending one is rejected). A lesson it had replaced is forgotten rather
        than brought back (`superseded_forgotten`). Store checkpoints keep their copies until
        deleted (`checkpoints_may_hold`).

        Args:
            lessons: the lessons (whole ids, or their last characters; all must exist).
        """
        result: dict[str, Any] = self._operation(
            "delete_lessons",
            {
                "lessons": lessons,
            },
        )
        return result

    def edit_lesson(
        self,
        lesson: str,
        *,
        text: str | None = None,
        scope: str | None = None,
        tags: Iterable[str] | None = None,
        confidence: float | None = None,
        decay_rate: float | None = None,
    ) -> dict[str, Any]:
        """Change a lesson's text, scope, tags, confidence or decay rate.

        Change a lesson's text, scope, tags, confidence or decay rate; the old text joins its
        wordings.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            lesson: the lesson's id (or a unique start or end of it).
            text: the new text (the old one is kept among its wordings).
            scope: the new scope.
            tags: the new tags (replace the old ones; repeatable on the CLI).
            confidence: the new confidence, 0.0-1.0.
            decay_rate: the new decay rate: confidence lost per week, 0.0-1.0.
        """
        result: dict[str, Any] = self._operation(
            "edit_lesson",
            {
                "lesson": lesson,
                "text": text,
                "scope": scope,
                "tags": tags,
                "confidence": confidence,
                "decay_rate": decay_rate,
            },
        )
        return result

    def merge_lessons(
        self,
        keep: str,
        absorb: Iterable[str],
    ) -> dict[str, Any]:
        """Merge near-duplicate lessons into one.

        Merge near-duplicates of one scope into `keep`: the others are superseded by it, their
        wordings join its history, it keeps the highest confidence of the group and the sum of
        their reinforcements.

        Args:
            keep: the lesson that stays.
            absorb: the lessons it absorbs (superseded by it).
        """
        result: dict[str, Any] = self._operation(
            "merge_lessons",
            {
                "keep": keep,
                "absorb": absorb,
            },
        )
        return result

    def add_rule(
        self,
        text: str,
        *,
        scope: str = "global",
    ) -> dict[str, Any]:
        """Add a manual rule.

        A manual rule; `outcome` says whether it was added, already active (unchanged) or
        reactivated as the newest of its scope. While the store's review is on, an agent's call
        waits for a person: the result is the proposal ("proposed": true).

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            text: the rule, one line ([WORKS]/[AVOID] prefixes set its polarity).
            scope: global or task:<task id>.
        """
        result: dict[str, Any] = self._operation(
            "add_rule",
            {
                "text": text,
                "scope": scope,
            },
        )
        return result

    def list_rules(
        self,
        *,
        all: bool = False,
        scope: str | None = None,
    ) -> list[dict[str, Any]]:
        """List active rules.

        Rules (active ones unless `all`), global first; derived `[WORKS]`/`[AVOID]` rules come
        from episodes.

        Args:
            all: include inactive rules.
            scope: only this scope.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_rules",
            {
                "all": all,
                "scope": scope,
            },
        )
        return result

    def activate_rule(
        self,
        rule: str,
    ) -> dict[str, Any]:
        """Switch a rule on (as the newest of its scope).

        Switch a rule on as the newest of its scope (the oldest past the window goes inactive).

        Args:
            rule: the rule's id.
        """
        result: dict[str, Any] = self._operation(
            "activate_rule",
            {
                "rule": rule,
            },
        )
        return result

    def deactivate_rule(
        self,
        rule: str,
    ) -> dict[str, Any]:
        """Switch a rule off.

        Switch a rule off: it stays, inactive, out of every context.

        Args:
            rule: the rule's id.
        """
        result: dict[str, Any] = self._operation(
            "deactivate_rule",
            {
                "rule": rule,
            },
        )
        return result

    def list_cards(
        self,
    ) -> list[dict[str, Any]]:
        """List mistake cards, most seen first.

        Every mistake card, ranked as the context ranks them: seen most, then seen last.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_cards",
            {},
        )
        return result

    def get_card(
        self,
        card: str,
    ) -> dict[str, Any]:
        """Show a mistake card.

        One mistake card (a card merged away answers with the card that absorbed it).

        Args:
            card: the mistake card's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "get_card",
            {
                "card": card,
            },
        )
        return result

    def edit_card(
        self,
        card: str,
        *,
        lesson: str | None = None,
        evidence: str | None = None,
    ) -> dict[str, Any]:
        """Edit a mistake card's lesson or evidence.

        Edit a mistake card's lesson or evidence (each cut to 300 characters, with an ellipsis).

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            card: the mistake card's id (or a unique start or end of it).
            lesson: the card's lesson (cut to 300 characters).
            evidence: the card's evidence (cut to 300 characters).
        """
        result: dict[str, Any] = self._operation(
            "edit_card",
            {
                "card": card,
                "lesson": lesson,
                "evidence": evidence,
            },
        )
        return result

    def merge_cards(
        self,
        keep: str,
        absorb: str,
    ) -> dict[str, Any]:
        """Merge one mistake card into another.

        Merge card `absorb` into `keep`: counts add up and the episode range widens; the
        absorbed card's id is kept in `merged_from` (asking for it finds `keep`).

        Args:
            keep: the card that stays.
            absorb: the card merged into it.
        """
        result: dict[str, Any] = self._operation(
            "merge_cards",
            {
                "keep": keep,
                "absorb": absorb,
            },
        )
        return result

    def set_slot(
        self,
        label: str,
        text: str,
        *,
        limit: int | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Create or overwrite a slot.

        Keep standing instructions or facts that every context must lead with.

        Create or overwrite a pinned slot: text that leads every context (persona, preferences,
        standing instructions). An edit past the slot's limit is refused, never cut; a read-only
        slot refuses every edit.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            label: the slot's label (letters, digits and _ - . /).
            text: the slot's whole content.
            limit: its limit in characters (default 2000).
            description: what belongs in it.
        """
        result: dict[str, Any] = self._operation(
            "set_slot",
            {
                "label": label,
                "text": text,
                "limit": limit,
                "description": description,
            },
        )
        return result

    def append_slot(
        self,
        label: str,
        text: str,
    ) -> dict[str, Any]:
        """Append text to a slot.

        Add a line to a pinned slot (a new user preference you learned, say).

        Add a line to the end of a pinned slot (joined with a newline).

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            label: the slot's label (letters, digits and _ - . /).
            text: the line to add.
        """
        result: dict[str, Any] = self._operation(
            "append_slot",
            {
                "label": label,
                "text": text,
            },
        )
        return result

    def replace_in_slot(
        self,
        label: str,
        old: str,
        new: str,
    ) -> dict[str, Any]:
        """Replace OLD with NEW in a slot.

        Replace every occurrence of `old` in a pinned slot; `replaced` counts them.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            label: the slot's label (letters, digits and _ - . /).
            old: the text to replace (it must occur).
            new: the replacement.
        """
        result: dict[str, Any] = self._operation(
            "replace_in_slot",
            {
                "label": label,
                "old": old,
                "new": new,
            },
        )
        return result

    def get_slot(
        self,
        label: str,
    ) -> dict[str, Any]:
        """Show a slot.

        Read a pinned slot before editing it.

        One pinned slot with its content, size (`chars`) and limit (`over_limit`).

        Args:
            label: the slot's label (letters, digits and _ - . /).
        """
        result: dict[str, Any] = self._operation(
            "get_slot",
            {
                "label": label,
            },
        )
        return result

    def list_slots(
        self,
    ) -> list[dict[str, Any]]:
        """List slots.

        The pinned slots (labels, sizes against their limits); they lead every context.

        The pinned slots in context order, each with `chars` and `over_limit`.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_slots",
            {},
        )
        return result

    def delete_slot(
        self,
        label: str,
    ) -> dict[str, Any]:
        """Delete a slot.

        Delete a slot (a checkpoint brings it back).

        Args:
            label: the slot's label (letters, digits and _ - . /).
        """
        result: dict[str, Any] = self._operation(
            "delete_slot",
            {
                "label": label,
            },
        )
        return result

    def create_slot(
        self,
        label: str,
        *,
        limit: int | None = None,
        description: str = "",
    ) -> dict[str, Any]:
        """Create a new, empty slot.

        Create a new, empty slot; a label that exists is refused (`set` overwrites).

        Args:
            label: the slot's label (letters, digits and _ - . /).
            limit: its limit in characters (default 2000).
            description: what belongs in it.
        """
        result: dict[str, Any] = self._operation(
            "create_slot",
            {
                "label": label,
                "limit": limit,
                "description": description,
            },
        )
        return result

    def move_slot(
        self,
        label: str,
        position: int,
    ) -> dict[str, Any]:
        """Move a slot to a position in the context's order.

        Move a slot to `position` (0 is first) in the order slots lead the context.

        Args:
            label: the slot's label (letters, digits and _ - . /).
            position: its new place, from 0 (first).
        """
        result: dict[str, Any] = self._operation(
            "move_slot",
            {
                "label": label,
                "position": position,
            },
        )
        return result

    def lock_slot(
        self,
        label: str,
    ) -> dict[str, Any]:
        """Make a slot read-only.

        Make a slot read-only: every edit is refused until it is unlocked.

        Args:
            label: the slot's label (letters, digits and _ - . /).
        """
        result: dict[str, Any] = self._operation(
            "lock_slot",
            {
                "label": label,
            },
        )
        return result

    def unlock_slot(
        self,
        label: str,
    ) -> dict[str, Any]:
        """Make a read-only slot editable again.

        Make a read-only slot editable again.

        Args:
            label: the slot's label (letters, digits and _ - . /).
        """
        result: dict[str, Any] = self._operation(
            "unlock_slot",
            {
                "label": label,
            },
        )
        return result

    def set_profile(
        self,
        project: str,
        text: str,
        *,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """Set a project's profile.

        Describe the project you work on, once, for every future session of it.

        Create or replace a project's profile: a block of text (2,000 characters by default,
        like a slot; past the limit is refused, never cut) that `context --project P` shows
        right after the pinned slots. While the store's review is on, an agent's call waits for
        a person: the result is the proposal ("proposed": true).

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            project: the project.
            text: what the project is (secrets are removed).
            limit: its limit in characters (default 2000).
        """
        result: dict[str, Any] = self._operation(
            "set_profile",
            {
                "project": project,
                "text": text,
                "limit": limit,
            },
        )
        return result

    def get_profile(
        self,
        project: str,
    ) -> dict[str, Any]:
        """A project's profile.

        One project's profile, with its size (`chars`) and limit (`over_limit`).

        Args:
            project: the project.
        """
        result: dict[str, Any] = self._operation(
            "get_profile",
            {
                "project": project,
            },
        )
        return result

    def list_profiles(
        self,
    ) -> list[dict[str, Any]]:
        """Every project's profile.

        Every project profile, by project.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_profiles",
            {},
        )
        return result

    def wm_set(
        self,
        session: str | None,
        key: str,
        value: Any,
        *,
        ttl: float | None = None,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Set a key.

        Keep short-lived state for this run.

        Keep short-lived state for a session under `key` (keys starting with `_` are reserved);
        with `ttl` the key disappears after that many seconds. The session is any id: one no
        session has yet (an agent's own `run-42`: letters, digits, `_ - . : @`, up to 128)
        creates the session, marked implicit, on the first write; reads of it are empty. With
        `scope` (`project:<P>` or `agent:<A>`) the key is shared instead: every session of that
        project or agent sees it, unless it has a key of its own by that name (the session's own
        key wins, then the agent's, then the project's). TTLs and `wm_default_ttl` apply to
        shared keys too.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            key: the working-memory key (a leading _ is reserved).
            value: the value (the CLI stores the text as typed).
            ttl: seconds until the key disappears.
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
        """
        result: dict[str, Any] = self._operation(
            "wm_set",
            {
                "session": session,
                "key": key,
                "value": value,
                "ttl": ttl,
                "scope": scope,
            },
        )
        return result

    def wm_get(
        self,
        session: str | None,
        key: str,
        *,
        scope: str | None = None,
        default: Any = None,
    ) -> dict[str, Any]:
        """Get a key.

        Read back state kept for this run.

        A live key's entry (an expired key is not found), with `scope`: where it came from
        (`session`, or the `agent:<A>` / `project:<P>` scope the session inherits it from), and
        `found` true. With `scope`, that scope's key. With a non-null `default`, a missing key
        answers `value: default, found: false`.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            key: the working-memory key (a leading _ is reserved).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
            default: the answer's value when the key is missing or expired, instead of not found
            (the CLI takes the text as typed).
        """
        result: dict[str, Any] = self._operation(
            "wm_get",
            {
                "session": session,
                "key": key,
                "scope": scope,
                "default": default,
            },
        )
        return result

    def wm_delete(
        self,
        session: str | None,
        key: str,
        *,
        scope: str | None = None,
        missing_ok: bool = False,
    ) -> dict[str, Any]:
        """Delete a key.

        Call when state kept under `key` no longer applies.

        Remove a working-memory key of the session (never one it inherits: the error names the
        scope to delete it from), or of `scope`; the answer carries `deleted` true. With
        `missing_ok`, a key that is not there (or only inherited) writes nothing and answers
        `{key, deleted: false, scope: null}` instead of not found.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            key: the working-memory key (a leading _ is reserved).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
            missing_ok: a key that is not there is no error: the answer says deleted false.
        """
        result: dict[str, Any] = self._operation(
            "wm_delete",
            {
                "session": session,
                "key": key,
                "scope": scope,
                "missing_ok": missing_ok,
            },
        )
        return result

    def wm_list(
        self,
        session: str | None,
        *,
        scope: str | None = None,
    ) -> list[dict[str, Any]]:
        """List live keys.

        Every live key of the session, inherited ones included, sorted, with the seconds each
        has left and `scope` (where it came from); with `scope`, that scope's.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
        """
        result: list[dict[str, Any]] = self._operation(
            "wm_list",
            {
                "session": session,
                "scope": scope,
            },
        )
        return result

    def wm_keys(
        self,
        session: str | None,
        pattern: str = "*",
        *,
        scope: str | None = None,
    ) -> list[dict[str, Any]]:
        """List live key names matching a glob.

        The names of the session's live keys (inherited ones included) that match `pattern` (a
        glob), sorted; with `scope`, that scope's. `wm list` says where each came from.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            pattern: a glob (* ? [abc]; default every key).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
        """
        result: list[dict[str, Any]] = self._operation(
            "wm_keys",
            {
                "session": session,
                "pattern": pattern,
                "scope": scope,
            },
        )
        return result

    def wm_exists(
        self,
        session: str | None,
        key: str,
        *,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Whether a key is live.

        Whether `key` is live in the session, inherited ones included (an expired key does not
        exist): `{key, exists, scope}` (`scope`: where it came from, null when it does not
        exist); the CLI prints true or false and exits 0 either way.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            key: the working-memory key (a leading _ is reserved).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
        """
        result: dict[str, Any] = self._operation(
            "wm_exists",
            {
                "session": session,
                "key": key,
                "scope": scope,
            },
        )
        return result

    def wm_get_all(
        self,
        session: str | None,
        *,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Every live key's value.

        Every live key's value, by key (an empty object when there is none), inherited keys
        included: `_scopes` (present when a key was inherited) maps each inherited key to its
        scope (a leading `_` is reserved, so it never meets a key).

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
        """
        result: dict[str, Any] = self._operation(
            "wm_get_all",
            {
                "session": session,
                "scope": scope,
            },
        )
        return result

    def wm_clear(
        self,
        session: str | None,
        *,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """Delete every user key.

        Start the session's key-value state afresh (the task state stays).

        Delete every user key of the session; its task state, scratchpad and working-memory
        checkpoints stay, and so do the keys it inherits. With `scope`, every key of that scope.
        Returns the keys cleared.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
        """
        result: dict[str, Any] = self._operation(
            "wm_clear",
            {
                "session": session,
                "scope": scope,
            },
        )
        return result

    def wm_stats(
        self,
        session: str | None,
        *,
        scope: str | None = None,
    ) -> dict[str, Any]:
        """What the working memory holds.

        Counts: `total_keys` (user keys, plus the task state and the scratchpad when present),
        `user_keys`, `checkpoints`, `scratchpad_entries`, `has_task_state`, `ttl_keys` (keys
        with a TTL), `inherited_keys` (keys seen from a scope, not held by the session),
        `scope_keys` (live keys per scope the session inherits from), `using_fallback` (true
        while a Redis store does not answer and working memory is kept in the process's memory).
        With `scope`, that scope's counts.

        Args:
            session: the session's id (any id an agent names works; not needed with scope).
            scope: project:<project> or agent:<agent>: the keys every session of that project or
            agent sees, instead of the session's own.
        """
        result: dict[str, Any] = self._operation(
            "wm_stats",
            {
                "session": session,
                "scope": scope,
            },
        )
        return result

    def wm_task(
        self,
        session: str,
        *,
        task_id: str | None = None,
        description: str | None = None,
        step: int | None = None,
        total: int | None = None,
        progress: float | None = None,
        status: str | None = None,
        if_exists: bool = False,
    ) -> dict[str, Any] | None:
        """Show or update the task state.

        Track the session's current task.

        Track the session's current task: only the fields given change; progress is clamped to
        0-100. Progress follows step / total until the caller gives `progress`; from then on
        step updates leave it as given (`progress_given: true`) until another `progress` or a
        new task id. With no field, returns the task state (null when none). An update with no
        task starts one (task id `unknown` unless given); with `if_exists` it writes nothing and
        answers null instead.

        Args:
            session: the session's id (any id an agent names works).
            task_id: the task's id (a new one starts a new task).
            description: what the task is.
            step: the current step.
            total: the number of steps.
            progress: percent done, clamped to 0-100.
            status: its status (pending, active, done, ...).
            if_exists: update only a task the session has: without one, write nothing, answer
            null.
        """
        result: dict[str, Any] | None = self._operation(
            "wm_task",
            {
                "session": session,
                "task_id": task_id,
                "description": description,
                "step": step,
                "total": total,
                "progress": progress,
                "status": status,
                "if_exists": if_exists,
            },
        )
        return result

    def scratch_add(
        self,
        session: str,
        text: str,
    ) -> dict[str, Any]:
        """Append a scratchpad entry.

        Jot a note for later in this run.

        Append a timestamped note to the session's scratchpad (1000 entries, oldest dropped).

        Args:
            session: the session's id (any id an agent names works).
            text: the note.
        """
        result: dict[str, Any] = self._operation(
            "scratch_add",
            {
                "session": session,
                "text": text,
            },
        )
        return result

    def scratch_list(
        self,
        session: str,
    ) -> list[dict[str, Any]]:
        """List scratchpad entries.

        The session's scratchpad notes, oldest first.

        Args:
            session: the session's id (any id an agent names works).
        """
        result: list[dict[str, Any]] = self._operation(
            "scratch_list",
            {
                "session": session,
            },
        )
        return result

    def scratch_clear(
        self,
        session: str,
    ) -> dict[str, Any]:
        """Empty the scratchpad.

        Empty the session's scratchpad (keys and task state stay); returns how many notes went.

        Args:
            session: the session's id (any id an agent names works).
        """
        result: dict[str, Any] = self._operation(
            "scratch_clear",
            {
                "session": session,
            },
        )
        return result

    def create_wm_checkpoint(
        self,
        session: str,
        *,
        description: str = "",
    ) -> dict[str, Any]:
        """Snapshot the working memory.

        Copy the session's working memory (keys, task, scratchpad) into a checkpoint (a uuid4).

        Args:
            session: the session's id (any id an agent names works).
            description: what the checkpoint is for.
        """
        result: dict[str, Any] = self._operation(
            "create_wm_checkpoint",
            {
                "session": session,
                "description": description,
            },
        )
        return result

    def list_wm_checkpoints(
        self,
        session: str,
    ) -> list[dict[str, Any]]:
        """List checkpoints.

        The session's working-memory checkpoints, oldest first.

        Args:
            session: the session's id (any id an agent names works).
        """
        result: list[dict[str, Any]] = self._operation(
            "list_wm_checkpoints",
            {
                "session": session,
            },
        )
        return result

    def restore_wm_checkpoint(
        self,
        session: str,
        checkpoint: str,
    ) -> dict[str, Any]:
        """Restore a checkpoint.

        Replace the session's working memory with a checkpoint's.

        Args:
            session: the session's id (any id an agent names works).
            checkpoint: the working-memory checkpoint's id.
        """
        result: dict[str, Any] = self._operation(
            "restore_wm_checkpoint",
            {
                "session": session,
                "checkpoint": checkpoint,
            },
        )
        return result

    def delete_wm_checkpoint(
        self,
        session: str,
        checkpoint: str,
    ) -> dict[str, Any]:
        """Delete a checkpoint.

        Delete a working-memory checkpoint.

        Args:
            session: the session's id (any id an agent names works).
            checkpoint: the working-memory checkpoint's id.
        """
        result: dict[str, Any] = self._operation(
            "delete_wm_checkpoint",
            {
                "session": session,
                "checkpoint": checkpoint,
            },
        )
        return result

    def create_checkpoint(
        self,
        *,
        description: str = "",
    ) -> dict[str, Any]:
        """Snapshot the store.

        A named copy of every table but the audit log (its id is a uuid4).

        Args:
            description: what the checkpoint is for.
        """
        result: dict[str, Any] = self._operation(
            "create_checkpoint",
            {
                "description": description,
            },
        )
        return result

    def list_checkpoints(
        self,
    ) -> list[dict[str, Any]]:
        """List checkpoints.

        Every store checkpoint, oldest first, with its record counts.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_checkpoints",
            {},
        )
        return result

    def diff_checkpoint(
        self,
        checkpoint: str,
        other: str | None = None,
    ) -> dict[str, Any]:
        """What changed since a checkpoint.

        Per table, the records added, removed and changed (with the changed fields) between a
        checkpoint and now, or two checkpoints.

        Args:
            checkpoint: the checkpoint's id (or a unique start or end of it).
            other: a second checkpoint (default: the store now).
        """
        result: dict[str, Any] = self._operation(
            "diff_checkpoint",
            {
                "checkpoint": checkpoint,
                "other": other,
            },
        )
        return result

    def restore_checkpoint(
        self,
        checkpoint: str,
    ) -> dict[str, Any]:
        """Restore a checkpoint.

        Put the store back as a checkpoint holds it, after taking an automatic checkpoint of the
        current state; returns that automatic checkpoint (restoring it undoes the restore). It
        is also the repair: it works on a store whose table files are damaged or missing, moves
        each damaged file aside into the store's damaged/<time>/ (never deleted) and leaves
        those tables out of the automatic checkpoint; `damaged` lists each (`table`, `reason`,
        `moved_to`, and `restored`: whether the checkpoint's copy replaced it). With the
        checkpoints table itself damaged, the checkpoint is found among the snapshots on disk
        (its full id or a unique start), and every snapshot is kept as a recovered checkpoint
        (with the record it keeps of itself). On a folder store whose store.json cannot be read
        (the CLI), it rebuilds one from the table files and the log and keeps the damaged file
        in damaged/; a damaged log is kept there too. While review is on, restoring a checkpoint
        taken while it was off would turn it off: without the curator key that waits as a
        proposal ("proposed": true); the curator's restore is recorded in the queue. While
        agents are isolated, it rewinds every agent's memory: refused to an agent without the
        curator key.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            checkpoint: the checkpoint's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "restore_checkpoint",
            {
                "checkpoint": checkpoint,
            },
        )
        return result

    def delete_checkpoint(
        self,
        checkpoint: str,
    ) -> dict[str, Any]:
        """Delete a checkpoint.

        Delete a store checkpoint and its snapshot.

        Args:
            checkpoint: the checkpoint's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "delete_checkpoint",
            {
                "checkpoint": checkpoint,
            },
        )
        return result

    def consolidate(
        self,
    ) -> dict[str, Any]:
        """Distil recent episodes into rules.

        Distil the last 100 episodes into global `[HIGH SCORE …]` rules now (it also runs after
        every 20 recorded episodes); an external consolidator's rules
        (`MEMWORK_CONSOLIDATE_CMD`) read `[CONSOLIDATED] <rule>`, as the episodic library writes
        them, and one that fails falls back to the heuristic, reported in `fallback_reason`.
        With a model endpoint (`MEMWORK_LLM_URL`, `MEMWORK_LLM_MODEL`, the key in
        `MEMWORK_LLM_API_KEY` or `GROQ_API_KEY`) the model writes the `[CONSOLIDATED]` rules
        from the last 30 episodes instead; while review is on an agent's are proposed
        (`proposed`), and an endpoint that fails or answers malformed is an error with nothing
        written. `engine` says which did the work: llm, external or heuristic.
        """
        result: dict[str, Any] = self._operation(
            "consolidate",
            {},
        )
        return result

    def reflect(
        self,
        session: str,
    ) -> dict[str, Any]:
        """Turn a session's observations into lessons.

        Read a session's observations and write the lessons worth keeping, tagged `reflected`
        (scoped to the session's project when it has one): a model writes them when an endpoint
        is configured (`MEMWORK_LLM_URL`), else the heuristic keeps the observations of kind
        lesson, insight, learning or decision and turns errors into `Avoid: …` (`engine` and
        `fallback_reason` say so). While review is on, an agent's lessons wait as proposals. A
        session without observations is refused; an endpoint that fails or answers malformed is
        an error with nothing written.

        Args:
            session: the session's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "reflect",
            {
                "session": session,
            },
        )
        return result

    def crystallize(
        self,
        session: str,
    ) -> dict[str, Any]:
        """Write a session's summary from its observations.

        Write a session's summary from its observations (the session stays active or ended as it
        was): a model writes the paragraph when an endpoint is configured (`MEMWORK_LLM_URL`),
        else the heuristic counts and quotes them (`engine` and `fallback_reason` say so). While
        review is on, an agent's summary waits as a `session summarize` proposal. A session
        without observations is refused; an endpoint that fails or answers malformed is an error
        with nothing written.

        Args:
            session: the session's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "crystallize",
            {
                "session": session,
            },
        )
        return result

    def export(
        self,
    ) -> dict[str, Any]:
        """The whole store as one JSON document.

        Take a whole copy of memory (every table, the audit log included) as one JSON document:
        it can be large.

        The whole store as one JSON document (stdout without FILE; the other doors return it).
        FILE is written through a temp file beside it and must be a regular file or absent (a
        folder, a device or a symbolic link is refused); a new FILE is private (0600). While
        agents are isolated (`config isolation agent`) it is an operator's tool: refused to an
        agent without the curator key.
        """
        result: dict[str, Any] = self._operation(
            "export",
            {},
        )
        return result

    def search(
        self,
        query: str,
        *,
        kinds: Iterable[str] | None = None,
        limit: int = 10,
        since: str | None = None,
        until: str | None = None,
        session: str | None = None,
    ) -> list[dict[str, Any]]:
        """Search every kind of memory.

        Recall what you remember about something: ask a question or give a few words.

        Recall over every kind of memory, best first, for a question: BM25 over stemmed words
        (more and rarer words first), a typo tolerated; words side by side, and records written
        when the question points at ('last Friday', 'Nov 28'), rank higher; too few matches are
        filled by related records, marked `filled`. `kinds` accepts plurals; `since`/`until`
        bound when a record was made; `session` keeps one session's. Each hit is `{kind, id,
        title, score}` (score: relevance within one query); `get_record` reads one whole.

        Args:
            query: what to look for (typos tolerated).
            kinds: lesson, rule, card, episode, observation, slot, wm, session, checkpoint
            (repeatable).
            limit: at most N hits (default 10).
            since: recorded at or after WHEN (ISO instant or date, or a span back: 12h, 7d).
            until: recorded at or before WHEN (ISO instant or date, or a span back: 12h, 7d).
            session: only what belongs to this session.
        """
        result: list[dict[str, Any]] = self._operation(
            "search",
            {
                "query": query,
                "kinds": kinds,
                "limit": limit,
                "since": since,
                "until": until,
                "session": session,
            },
        )
        return result

    def get_record(
        self,
        id: str,
    ) -> dict[str, Any]:
        """Print any record by its id (as search names it).

        Read a record a search found, whole.

        Any record a search returns, read whole by its id: `{kind, id, record}`. Episodes,
        lessons (with their computed fields), rules, mistake cards, slots, sessions (with their
        observations), observations (`<session>/<id>`), working memory (`<session>/<key>`,
        `<session>/task`, `<session>/scratch/<n>`), checkpoints, proposals, imports (`imp_…`,
        with the note each kept) and the Letta agents an import brought (`letta:<name or id>`:
        name, system prompt, blocks).

        Args:
            id: the record's id, as a search hit gives it (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "get_record",
            {
                "id": id,
            },
        )
        return result

    def link(
        self,
        source: str,
        target: str,
        *,
        kind: str = "about",
        note: str = "",
    ) -> dict[str, Any]:
        """Link two records (a relation of a kind).

        Say how two memories relate (a lesson about a file, a note about a task).

        Link record A to B with a relation: `about` (A is about a slot, a task, a file, another
        record), `after` (action A waits for action B; a cycle is refused), or any lower-case
        word. The same link twice is one link (`created` false). derived_from, sighted_in,
        supersedes and merged_into are kept by memwork and refused here.

        Args:
            source: the record the link starts from (an id, a slot's label, an agent's session
            id).
            target: the record it points to, or task:T, project:P, file:PATH, url:U.
            kind: the relation: about, after (an action waiting for another), or any word.
            note: why (kept with the link).
        """
        result: dict[str, Any] = self._operation(
            "link",
            {
                "source": source,
                "target": target,
                "kind": kind,
                "note": note,
            },
        )
        return result

    def unlink(
        self,
        source: str,
        target: str,
        *,
        kind: str | None = None,
    ) -> list[dict[str, Any]]:
        """Remove links between two records.

        Remove the links from A to B (of one kind, else every kind a person may remove); returns
        them.

        Args:
            source: the record the links start from.
            target: what they point to.
            kind: only links of this kind.
        """
        result: list[dict[str, Any]] = self._operation(
            "unlink",
            {
                "source": source,
                "target": target,
                "kind": kind,
            },
        )
        return result

    def links(
        self,
        id: str,
    ) -> dict[str, Any]:
        """A record's links, both ways.

        See what a record is related to: where a rule came from, what a lesson is about.

        A record's links: `outgoing` (what it links to) and `incoming` (what links to it),
        oldest first, each with the other end's kind, title and whether it still exists. A card
        merged away is found through its `merged_into` link.

        Args:
            id: the record's id (as get takes it).
        """
        result: dict[str, Any] = self._operation(
            "links",
            {
                "id": id,
            },
        )
        return result

    def history(
        self,
        *,
        table: str | None = None,
        record: str | None = None,
        actor: str | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """The audit log, newest first.

        See who changed a record and when.

        The audit log, newest first: who changed what, when. `record` takes an id, or its first
        or last 4+ characters; `actor` cli also matches cli:<agent>. Entries an import brought
        carry `imported` (the CLI's line ends with `(imported)`).

        Args:
            table: entries about this table (lessons, episodes, ...).
            record: entries about this record (id, prefix or tail).
            actor: entries by this actor (cli also matches cli:<agent>).
            limit: at most N entries (default 50).
        """
        result: list[dict[str, Any]] = self._operation(
            "history",
            {
                "table": table,
                "record": record,
                "actor": actor,
                "limit": limit,
            },
        )
        return result

    def stats(
        self,
    ) -> dict[str, Any]:
        """Counts, per-task scores and rules, mistake and card counts, top cards.

        Counts per table; per task its episodes, mean score (three decimals) and active rules;
        active rules (global and per task); distinct mistakes and successes; the number of
        mistake cards and the top five (the episodic library's summary, and more).
        """
        result: dict[str, Any] = self._operation(
            "stats",
            {},
        )
        return result

    def doctor(
        self,
    ) -> dict[str, Any]:
        """Check data, schema and locks; repairs nothing.

        Check that the memory store is healthy (after an error that mentions the store).

        Checks data, schema, journal, the log, links, permissions, lock, snapshots and every
        record against its model (a record commands would fail on is named with its field; a
        table file replaced by a folder is a problem, not a crash; review on with no curator
        registered is a warning), and a Redis server's settings, keys that are not memwork's,
        tables the manifest does not list, the lock's holder; reports, repairs nothing. A store
        in use is checked as it stands: what writers change while the checks read (a fold
        replacing table files, a commit's journal, a checkpoint being taken) is never reported
        as damage; checks that find something while the store changed run again, and a problem
        is confirmed by a run holding the lock for as long as it takes. For each damaged or
        missing table it names the newest checkpoint holding a readable copy, and prints the
        `memwork checkpoint restore ID` that repairs them all. Exit 0 when nothing is a problem
        (a commit a kill interrupted, or a log record a crash cut short, is only a note: the
        next open completes or drops it), 1 otherwise; the CLI's last line is `store is
        healthy`, or `store is usable; N warnings above` when something is a warning (a Redis
        that does not fsync each write, a log record recovered past a damaged header, the lock
        held by a writer elsewhere); a store it cannot open (a Redis that wants a password) is
        one line, exit 2; the other doors answer `ok` false instead of exit 1. On a first run
        (no store at the default location yet) the CLI says where the first write will create it
        and gives the `MEMWORK_DB=` line, exit 0 (`exists` false); a path given by --db or
        MEMWORK_DB that does not exist is exit 2.
        """
        result: dict[str, Any] = self._operation(
            "doctor",
            {},
        )
        return result

    def set_config(
        self,
        key: str,
        value: str,
    ) -> dict[str, Any]:
        """Set a store setting.

        Store settings, kept in the store (its `meta` table: checkpoints, copies and exports
        carry them): `review on|off` (agents' lesson adds and edits, card edits and slot edits
        wait for review), `context_log on|off` (every context an agent asks for records the
        lessons and slots it injected, audit action `inject`), `embedder off|wordllama` (when a
        search's words find fewer records than asked for, the records nearest its meaning fill
        the rest, below every word match; a passage in Latin letters has its words' best records
        put in order by meaning too; off by default, `MEMWORK_EMBEDDER` overrides it),
        `wm_default_ttl off|SECONDS` (the TTL of a working-memory key set without one),
        `isolation shared|agent` (agent: each agent reads only its own sessions, observations,
        working memory and episodes, plus global records; turning it off takes the curator key).
        An unknown key or value is refused, naming the allowed ones. Turning review on registers
        a curator when the store has none (the key given, else the user's key file); turning it
        off is a decision: without the curator key it waits as a proposal ("proposed": true),
        the curator's is recorded in the queue.

        While the store's review is on, the result is the proposal ("proposed": True).

        Args:
            key: the setting: review, context_log or embedder.
            value: its value: on or off (embedder: off or wordllama).
        """
        result: dict[str, Any] = self._operation(
            "set_config",
            {
                "key": key,
                "value": value,
            },
        )
        return result

    def get_config(
        self,
        key: str,
    ) -> dict[str, Any]:
        """Print a setting's value.

        A store setting's value (its default when never set).

        Args:
            key: the setting: review, context_log or embedder.
        """
        result: dict[str, Any] = self._operation(
            "get_config",
            {
                "key": key,
            },
        )
        return result

    def list_config(
        self,
    ) -> list[dict[str, Any]]:
        """Every setting with its value.

        Every store setting with its value, whether it was set, and what it does.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_config",
            {},
        )
        return result

    def list_proposals(
        self,
        *,
        all: bool = False,
    ) -> list[dict[str, Any]]:
        """Pending proposals, oldest first.

        Proposals waiting for review, oldest first (`all`: decided ones too), each with what it
        would change and its flags (near-duplicate, contradicts, no longer applies); `nearest`
        is the most similar live lesson, and slot edits carry `before`, `after` and `diff`.

        Args:
            all: include decided proposals.
        """
        result: list[dict[str, Any]] = self._operation(
            "list_proposals",
            {
                "all": all,
            },
        )
        return result

    def get_proposal(
        self,
        proposal: str,
    ) -> dict[str, Any]:
        """One proposal with its diff.

        One proposal with what it would change, its flags and its diff.

        Args:
            proposal: the proposal's id (or a unique start or end of it).
        """
        result: dict[str, Any] = self._operation(
            "get_proposal",
            {
                "proposal": proposal,
            },
        )
        return result

    def approve_proposal(
        self,
        proposal: str,
        *,
        edit: str | None = None,
        whole_slot: bool = False,
    ) -> dict[str, Any]:
        """Make a proposal live.

        Make a proposal live as proposed (or with `edit` as its text: the lesson, the slot's new
        content, the appended text, the replacement, the rule; with `whole_slot`, `edit` is a
        slot proposal's whole new content, written as a set: the way out of an append or replace
        whose text is gone), checked against the store as it is now: a refusal leaves it
        pending. Only the store's curator decides (`--curator-key FILE`; without it, or with
        another key, the proposal stays pending). Every decision is audited; a decided proposal
        cannot be decided again.

        Args:
            proposal: the proposal's id (or a unique start or end of it).
            edit: approve with this text instead.
            whole_slot: with edit on a slot proposal: the text is the slot's whole new content.
        """
        result: dict[str, Any] = self._operation(
            "approve_proposal",
            {
                "proposal": proposal,
                "edit": edit,
                "whole_slot": whole_slot,
            },
        )
        return result

    def reject_proposal(
        self,
        proposal: str,
        *,
        why: str = "",
    ) -> dict[str, Any]:
        """Turn a proposal down.

        Turn a proposal down; it is kept with the reason. Only the store's curator decides
        (`--curator-key FILE`).

        Args:
            proposal: the proposal's id (or a unique start or end of it).
            why: the reason (kept with it).
        """
        result: dict[str, Any] = self._operation(
            "reject_proposal",
            {
                "proposal": proposal,
                "why": why,
            },
        )
        return result

    def merge_proposal(
        self,
        proposal: str,
        lesson: str,
    ) -> dict[str, Any]:
        """Reinforce a lesson instead.

        Reinforce a live lesson with a proposed one instead of adding it (its wording joins the
        lesson's history). Only the store's curator decides (`--curator-key FILE`).

        Args:
            proposal: the proposal's id (or a unique start or end of it).
            lesson: the live lesson to reinforce.
        """
        result: dict[str, Any] = self._operation(
            "merge_proposal",
            {
                "proposal": proposal,
                "lesson": lesson,
            },
        )
        return result

    def issue_agent_token(
        self,
        agent: str,
    ) -> dict[str, Any]:
        """Issue an agent its own HTTP token (shown once).

        Issue a new random token for an agent and show it once: the store keeps only its digest,
        the agent and when it was made. Over HTTP a request whose bearer token is this token
        acts as that agent and no other. While review is on this needs the curator key.

        Args:
            agent: the agent the token acts as.
        """
        result: dict[str, Any] = self._operation(
            "issue_agent_token",
            {
                "agent": agent,
            },
        )
        return result

    def list_agent_tokens(
        self,
    ) -> list[dict[str, Any]]:
        """The agents that hold tokens, and when each was made.

        Every agent token's agent and creation time (never the token or its digest).
        """
        result: list[dict[str, Any]] = self._operation(
            "list_agent_tokens",
            {},
        )
        return result

    def revoke_agent_token(
        self,
        agent: str,
    ) -> dict[str, Any]:
        """Revoke every token of an agent.

        Remove every token of an agent: the next HTTP request carrying one is refused (401). An
        agent with no token is not found. While review is on this needs the curator key.

        Args:
            agent: the agent whose tokens end.
        """
        result: dict[str, Any] = self._operation(
            "revoke_agent_token",
            {
                "agent": agent,
            },
        )
        return result

    def lint(
        self,
    ) -> list[dict[str, Any]]:
        """Findings a curator should look at (exit 0).

        What a curator should look at: slots over their limit or untouched for 30 days, slots
        and lessons with the same content, lessons that contradict each other, unmerged
        near-duplicate lessons, `[AVOID]` rules a live lesson contradicts, `[HIGH SCORE …]`
        rules that repeat a newer one's summary (`duplicate_rule`) or that no recent episode
        gives any more (`stale_rule`), links whose record is no longer in the store
        (`dangling_link`). A list of `{kind, records, message}`; the CLI prints a line each and
        the count on stderr, and exits 0 whatever it finds.
        """
        result: list[dict[str, Any]] = self._operation(
            "lint",
            {},
        )
        return result
