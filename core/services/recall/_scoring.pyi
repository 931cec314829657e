"""Types of the compiled scoring loops (``_scoring.c``; its docstrings say what each does)."""

from collections.abc import Sequence

from _typeshed import ReadableBuffer, WriteableBuffer

def add_scaled(
    acc: WriteableBuffer,
    norms: ReadableBuffer,
    docs: ReadableBuffer,
    tfs: ReadableBuffer,
    kp1: float,
    mask: ReadableBuffer | None = None,
    /,
) -> None: ...
def add_by_length(
    acc: WriteableBuffer,
    lens: ReadableBuffer,
    docs: ReadableBuffer,
    tfs: ReadableBuffer,
    kp1: float,
    k: float,
    one_b: float,
    b: float,
    mean: float,
    long_from: float,
    long_weight: float,
    mask: ReadableBuffer | None = None,
    /,
) -> None: ...
def keep_where(
    size: int,
    kinds: ReadableBuffer | None,
    allowed: ReadableBuffer | None,
    sessions: ReadableBuffer | None,
    session: int,
    times: ReadableBuffer | None,
    since: float | None,
    until: float | None,
    expires: ReadableBuffer | None,
    now: float | None,
    /,
) -> bytearray: ...
def best(
    acc: ReadableBuffer, k: int, ages: ReadableBuffer | None = None, /
) -> list[tuple[int, float]]: ...
def sum_best(
    acc: WriteableBuffer,
    norms: ReadableBuffer,
    words: Sequence[tuple[float, ReadableBuffer, ReadableBuffer]],
    k: int,
    mask: ReadableBuffer | None = None,
    lengths: ReadableBuffer | None = None,
    links: tuple[ReadableBuffer, ReadableBuffer] | None = None,
    ages: ReadableBuffer | None = None,
    /,
) -> list[tuple[int, float]] | int: ...
def best_of(
    scores: dict[int, float], k: int, ages: ReadableBuffer | None = None, /
) -> list[tuple[float, int]]: ...
def near_pairs(
    texts: ReadableBuffer,
    start: int,
    offsets: ReadableBuffer,
    slots: list[int],
    pairs: list[tuple[bytes, bytes, float]],
    /,
) -> list[float]: ...
def proximity(
    final: dict[int, float],
    k: int,
    wanted: int,
    most: float,
    depth: int,
    weight: float,
    texts: ReadableBuffer,
    start: int,
    offsets: ReadableBuffer,
    pairs: list[tuple[bytes, bytes, float]],
    ages: ReadableBuffer | None = None,
    /,
) -> list[int] | None: ...
def rows(
    texts: ReadableBuffer, start: int, offsets: ReadableBuffer, slots: Sequence[int], /
) -> list[str]: ...
def around(
    top: list[tuple[int, float]],
    acc: ReadableBuffer,
    allowed: ReadableBuffer | None,
    before: ReadableBuffer,
    after: ReadableBuffer,
    sessions: ReadableBuffer,
    kinds: ReadableBuffer,
    session_score: dict[int, float],
    share: float,
    neighbour: float,
    observation: int,
    /,
) -> dict[int, float]: ...
def session_sums(
    top: list[tuple[int, float]],
    sessions: ReadableBuffer,
    kinds: ReadableBuffer,
    observation: int,
    info: Sequence[tuple[float, dict[int, int] | ReadableBuffer]],
    c1: float,
    c2: float,
    lens: list[int],
    /,
) -> dict[int, float]: ...
