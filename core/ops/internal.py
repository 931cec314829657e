"""Operations only the workbench runs, declared like the others but offered by no door.

The workbench writes through the operation runner as every door does (parameters
checked, then audit, isolation and review). A few of its writes are housekeeping a
person's tool does for them and no agent should be offered: they are declared here,
outside :data:`core.ops.operations.OPERATIONS`, so the CLI, ``Memory``, MCP, HTTP and
the generated docs never list them.
"""

from .operations import Op, Param, by_name

#: The workbench's own operations (no door lists them).
INTERNAL: tuple[Op, ...] = (
    Op(
        "take_restore_point",
        "",
        "take an automatic checkpoint before a destructive change",
        "services.checkpoints:restore_point",
        (
            Param(
                "description",
                "str",
                'what the checkpoint comes before ("before deleting slot persona")',
            ),
        ),
        writes=True,
        result="checkpoint",
        doors=("api",),
        doc=(
            "An automatic checkpoint of the whole store, taken before a delete or a merge "
            "made at the workbench; its undo restores it."
        ),
    ),
)

_BY_NAME = {op.name: op for op in INTERNAL}


def workbench_op(name: str) -> Op:
    """The operation the workbench runs under ``name``: its own, or any door's."""
    return _BY_NAME.get(name) or by_name(name)
