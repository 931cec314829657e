/* The recall index's scoring loops, compiled.
 *
 * engine.py sums BM25 a word at a time over its postings (slot and term frequency,
 * two int32 arrays) and then picks the best records. In numpy that is five passes over
 * each word's postings with temporaries between them; in plain Python, a bytecode loop
 * per posting. Here it is one pass, with the GIL released.
 *
 * Every step is the same IEEE operation, in the same order, as the Python it stands
 * for, so the scores are the same to the bit with or without this module (built with
 * contraction into fused multiply-adds turned off: setup.py). engine.py works without
 * it: a machine with no C compiler installs memwork all the same.
 *
 * Every slot read from postings is checked against the arrays' lengths: a damaged
 * index file raises ValueError, never reads or writes outside them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A hint that ``p`` will be read soon (nothing where the compiler has no such hint). */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static PyObject *
out_of_range(Py_ssize_t at, int32_t slot)
{
    PyErr_Format(PyExc_ValueError, "postings: slot %d at %zd is outside the index", slot, at);
    return NULL;
}

/* What a summing loop reads and writes: the scores, a column of 8 bytes per slot
 * (lengths, or their BM25 norms), a word's postings and an optional mask. */
typedef struct {
    Py_buffer acc, column, docs, tfs, mask;
    int have_mask;
    Py_ssize_t size, postings;
} sums;

/* The mask taken and every size checked (the others are parsed by the caller);
 * release_sums() lets go of them all, whether this succeeded or not. */
static int
check_sums(sums *s, PyObject *mask_obj, const char *name)
{
    s->have_mask = mask_obj != Py_None;
    if (s->have_mask && PyObject_GetBuffer(mask_obj, &s->mask, PyBUF_SIMPLE) < 0) {
        s->have_mask = 0;
        return -1;
    }
    if (s->docs.len % 4 || s->tfs.len != s->docs.len) {
        PyErr_Format(PyExc_ValueError,
                     "%s: postings' slots and counts must be int32 arrays of one length", name);
        return -1;
    }
    s->size = s->acc.len / 8;
    s->postings = s->docs.len / 4;
    if (s->acc.len % 8 || s->column.len != s->acc.len ||
        (s->have_mask && s->mask.len != s->size)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: acc, the column by slot (8 bytes each) and mask must cover the same "
                     "slots",
                     name);
        return -1;
    }
    return 0;
}

static PyObject *
release_sums(sums *s, Py_ssize_t bad)
{
    PyObject *result = NULL;
    if (bad >= 0)
        out_of_range(bad, ((const int32_t *)s->docs.buf)[bad]);
    else if (!PyErr_Occurred())
        result = Py_NewRef(Py_None);
    PyBuffer_Release(&s->acc);
    PyBuffer_Release(&s->column);
    PyBuffer_Release(&s->docs);
    PyBuffer_Release(&s->tfs);
    if (s->have_mask)
        PyBuffer_Release(&s->mask);
    return result;
}

/* The pass both summing loops make over a word's postings, the GIL released: each
 * slot checked against the scores (``bad`` takes the first posting outside them),
 * a slot the mask leaves out skipped, and STEP run with ``slot`` and ``tf`` (the
 * posting's count as a double) for the others. */
#define EACH_POSTING(s, bad, STEP)                                                        \
    do {                                                                                  \
        const int32_t *docs_ = (s).docs.buf, *tfs_ = (s).tfs.buf;                         \
        const unsigned char *mask_ = (s).have_mask ? (s).mask.buf : NULL;                 \
        Py_BEGIN_ALLOW_THREADS                                                            \
        for (Py_ssize_t i_ = 0; i_ < (s).postings; i_++) {                                \
            int32_t slot = docs_[i_];                                                     \
            if (slot < 0 || slot >= (s).size) {                                           \
                (bad) = i_;                                                               \
                break;                                                                    \
            }                                                                             \
            if (mask_ && !mask_[slot])                                                    \
                continue;                                                                 \
            double tf = (double)tfs_[i_];                                                 \
            STEP;                                                                         \
        }                                                                                 \
        Py_END_ALLOW_THREADS                                                              \
    } while (0)

PyDoc_STRVAR(add_scaled_doc,
"add_scaled(acc, norms, docs, tfs, kp1, mask=None)\n--\n\n"
"For each posting (slot d, count tf): acc[d] += tf * kp1 / (norms[d] + tf).\n"
"acc and norms are float64 arrays of one length; docs and tfs int32 arrays. A slot\n"
"whose byte in mask is 0 is left alone.");

static PyObject *
add_scaled(PyObject *self, PyObject *args)
{
    sums s;
    double kp1;
    PyObject *mask_obj = Py_None;
    if (!PyArg_ParseTuple(args, "w*y*y*y*d|O", &s.acc, &s.column, &s.docs, &s.tfs, &kp1,
                          &mask_obj))
        return NULL;
    Py_ssize_t bad = -1;
    if (check_sums(&s, mask_obj, "add_scaled") < 0)
        return release_sums(&s, bad);
    double *a = s.acc.buf;
    const double *norms = s.column.buf;
    EACH_POSTING(s, bad, a[slot] += tf * kp1 / (norms[slot] + tf));
    return release_sums(&s, bad);
}

PyDoc_STRVAR(add_by_length_doc,
"add_by_length(acc, lens, docs, tfs, kp1, k, one_b, b, mean, long_from, long_weight,\n"
"              mask=None)\n--\n\n"
"For each posting (slot d, count tf), with L = lens[d]:\n"
"acc[d] += kp1 * tf / (tf + k * (one_b + b * L / mean\n"
"                                 + long_weight * max(0.0, L / long_from - 1.0))).\n"
"acc is a float64 array, lens an int64 array of as many slots; docs and tfs int32.\n"
"A slot whose byte in mask is 0 is left alone.");

static PyObject *
add_by_length(PyObject *self, PyObject *args)
{
    sums s;
    double kp1, k, one_b, b, mean, long_from, long_weight;
    PyObject *mask_obj = Py_None;
    if (!PyArg_ParseTuple(args, "w*y*y*y*ddddddd|O", &s.acc, &s.column, &s.docs, &s.tfs, &kp1,
                          &k, &one_b, &b, &mean, &long_from, &long_weight, &mask_obj))
        return NULL;
    Py_ssize_t bad = -1;
    if (check_sums(&s, mask_obj, "add_by_length") < 0)
        return release_sums(&s, bad);
    double *a = s.acc.buf;
    const int64_t *lens = s.column.buf;
    /* As Python evaluates the line it stands for, left to right. */
    EACH_POSTING(s, bad, {
        double length = (double)lens[slot];
        double over = length / long_from - 1.0;
        a[slot] = a[slot] + kp1 * tf
                                / (tf + k * (one_b + b * length / mean
                                             + long_weight * (over > 0.0 ? over : 0.0)));
    });
    return release_sums(&s, bad);
}

/* An optional column of ``keep_where``: its buffer, held while the call runs. */
typedef struct {
    Py_buffer view;
    int held;
} column;

static int
take_column(PyObject *obj, column *col, Py_ssize_t size, Py_ssize_t width, const char *name)
{
    col->held = 0;
    if (obj == Py_None)
        return 0;
    if (PyObject_GetBuffer(obj, &col->view, PyBUF_SIMPLE) < 0)
        return -1;
    col->held = 1;
    if (col->view.len != size * width) {
        PyErr_Format(PyExc_ValueError, "keep_where: %s must hold one value per slot", name);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(keep_where_doc,
"keep_where(size, kinds, allowed, sessions, session, times, since, until, expires, now)\n"
"--\n\n"
"Which of size slots a filter lets through, as a bytearray (1: kept). Each test is\n"
"skipped when its column is None: kinds (int8 codes) must have their byte in allowed\n"
"(256 bytes) set; sessions (int32) must equal session; times (float64) must be at or\n"
"after since and at or before until, either None for no bound (a NaN time is never\n"
"kept); expires (float64) must be after now.");

static PyObject *
keep_where(PyObject *self, PyObject *args)
{
    Py_ssize_t size, session;
    PyObject *kinds_obj, *allowed_obj, *sessions_obj, *times_obj, *since_obj, *until_obj;
    PyObject *expires_obj, *now_obj;
    if (!PyArg_ParseTuple(args, "nOOOnOOOOO", &size, &kinds_obj, &allowed_obj, &sessions_obj,
                          &session, &times_obj, &since_obj, &until_obj, &expires_obj, &now_obj))
        return NULL;
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "keep_where: size must be at least 0");
        return NULL;
    }
    double since = 0, until = 0, now = 0;
    int has_since = since_obj != Py_None, has_until = until_obj != Py_None;
    int has_now = now_obj != Py_None;
    if ((has_since && (since = PyFloat_AsDouble(since_obj)) == -1.0 && PyErr_Occurred()) ||
        (has_until && (until = PyFloat_AsDouble(until_obj)) == -1.0 && PyErr_Occurred()) ||
        (has_now && (now = PyFloat_AsDouble(now_obj)) == -1.0 && PyErr_Occurred()))
        return NULL;
    PyObject *result = NULL;
    column kinds, allowed, sessions, times, expires;
    kinds.held = allowed.held = sessions.held = times.held = expires.held = 0;
    if (take_column(kinds_obj, &kinds, size, 1, "kinds") < 0 ||
        take_column(allowed_obj, &allowed, 256, 1, "allowed") < 0 ||
        take_column(sessions_obj, &sessions, size, 4, "sessions") < 0 ||
        take_column(times_obj, &times, size, 8, "times") < 0 ||
        take_column(expires_obj, &expires, size, 8, "expires") < 0)
        goto done;
    if (kinds.held != allowed.held) {
        PyErr_SetString(PyExc_ValueError, "keep_where: kinds and allowed come together");
        goto done;
    }
    result = PyByteArray_FromStringAndSize(NULL, size);
    if (!result)
        goto done;
    unsigned char *out = (unsigned char *)PyByteArray_AS_STRING(result);
    const unsigned char *code = kinds.held ? kinds.view.buf : NULL;
    const unsigned char *ok = allowed.held ? allowed.view.buf : NULL;
    const int32_t *in_session = sessions.held ? sessions.view.buf : NULL;
    const double *at = times.held ? times.view.buf : NULL;
    const double *until_when = expires.held ? expires.view.buf : NULL;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t slot = 0; slot < size; slot++) {
        int keep = 1;
        if (code && !ok[code[slot]])
            keep = 0;
        if (in_session && in_session[slot] != session)
            keep = 0;
        /* Written as the Python is: a NaN time or expiry fails every comparison. */
        if (at && ((has_since && !(at[slot] >= since)) || (has_until && !(at[slot] <= until))))
            keep = 0;
        if (until_when && has_now && !(until_when[slot] > now))
            keep = 0;
        out[slot] = (unsigned char)keep;
    }
    Py_END_ALLOW_THREADS
done:
    if (kinds.held)
        PyBuffer_Release(&kinds.view);
    if (allowed.held)
        PyBuffer_Release(&allowed.view);
    if (sessions.held)
        PyBuffer_Release(&sessions.view);
    if (times.held)
        PyBuffer_Release(&times.view);
    if (expires.held)
        PyBuffer_Release(&expires.view);
    if (PyErr_Occurred())
        Py_CLEAR(result);
    return result;
}

/* A min-heap of (score, age, slot), the least at the root: by score, then age, then
 * slot. A record's age is a number its id gives it (engine.py's ``age_key``: the later
 * made, the larger), the same in every process, so equal scores are ordered the same
 * way whoever indexed the records in whatever order; 0 where no ages are given. */
typedef struct {
    double score;
    Py_ssize_t slot;
    int64_t age;
} entry;

static int
below(const entry *x, const entry *y)
{
    return x->score < y->score ||
           (x->score == y->score && (x->age < y->age || (x->age == y->age && x->slot < y->slot)));
}

static void
sift_down(entry *heap, Py_ssize_t size, Py_ssize_t at)
{
    for (;;) {
        Py_ssize_t least = at, left = 2 * at + 1, right = left + 1;
        if (left < size && below(&heap[left], &heap[least]))
            least = left;
        if (right < size && below(&heap[right], &heap[least]))
            least = right;
        if (least == at)
            return;
        entry swap = heap[at];
        heap[at] = heap[least];
        heap[least] = swap;
        at = least;
    }
}

/* ``e`` added to a heap of ``held`` entries, sifted up to its place. */
static void
push(entry *heap, Py_ssize_t held, entry e)
{
    Py_ssize_t at = held;
    heap[at] = e;
    while (at) {
        Py_ssize_t up = (at - 1) / 2;
        if (!below(&heap[at], &heap[up]))
            break;
        entry swap = heap[at];
        heap[at] = heap[up];
        heap[up] = swap;
        at = up;
    }
}

static int
best_first(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (below(a, b))
        return 1;
    return below(b, a) ? -1 : 0;
}

/* Which of n (at most 32) scores are above ``floor`` (or, with ``or_equal``, at least
 * it), bit i for a[i]: one comparison each (false for a NaN), no branch. Called with
 * ``or_equal`` a constant, so each caller's loop is compiled for its own comparison. */
static inline uint32_t
beats(const double *a, Py_ssize_t n, double floor, int or_equal)
{
    uint32_t bits = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        bits |= (uint32_t)(or_equal ? a[i] >= floor : a[i] > floor) << i;
    return bits;
}

#if defined(__SSE2__)
/* Eight of beats()'s comparisons, four pairs at a time, packed to bytes. */
static inline __m128d
beat_pair(const double *a, __m128d least, int or_equal)
{
    __m128d x = _mm_loadu_pd(a);
    return or_equal ? _mm_cmpge_pd(x, least) : _mm_cmpgt_pd(x, least);
}

/* beats() of 32 scores, two a compare (every x86-64 has SSE2). */
static inline uint32_t
beats_32(const double *a, double floor, int or_equal)
{
    __m128d least = _mm_set1_pd(floor);
    /* Four pairs at a time, packed to bytes, then the bytes' high bits: no chain of
     * sixteen shifts and ors, each waiting on the one before. */
    uint32_t bits = 0;
    for (int i = 0; i < 32; i += 8) {
        __m128i ab = _mm_packs_epi32(_mm_castpd_si128(beat_pair(a + i, least, or_equal)),
                                     _mm_castpd_si128(beat_pair(a + i + 2, least, or_equal)));
        __m128i cd = _mm_packs_epi32(_mm_castpd_si128(beat_pair(a + i + 4, least, or_equal)),
                                     _mm_castpd_si128(beat_pair(a + i + 6, least, or_equal)));
        __m128i all = _mm_packs_epi16(_mm_packs_epi32(ab, cd), _mm_setzero_si128());
        bits |= (uint32_t)(_mm_movemask_epi8(all) & 0xff) << i;
    }
    return bits;
}
#else
static inline uint32_t
beats_32(const double *a, double floor, int or_equal)
{
    return beats(a, 32, floor, or_equal);
}
#endif

/* The index of the highest bit set in ``bits`` (not 0). */
static inline int
highest_bit(uint32_t bits)
{
#if defined(__GNUC__) || defined(__clang__)
    return 31 - __builtin_clz(bits);
#else
    int top = 31;
    while (!(bits >> top & 1))
        top--;
    return top;
#endif
}

/* The entries of ``e[0..n)`` rearranged so that the best ``k`` (0 < k <= n) come first,
 * in no order (best_first's order: the better score, of equal scores the higher slot):
 * a selection, as C++'s nth_element, each step partitioning around the median of three.
 * No two entries are equal (their slots differ), so no run of ties slows it. */
static void
select_best(entry *e, Py_ssize_t n, Py_ssize_t k)
{
    Py_ssize_t low = 0, high = n - 1;
    while (high > low) {
        Py_ssize_t mid = low + (high - low) / 2;
        /* The median of three at ``mid``, the first and last ordered about it. */
        if (below(&e[low], &e[mid])) {
            entry t = e[low]; e[low] = e[mid]; e[mid] = t;
        }
        if (below(&e[low], &e[high])) {
            entry t = e[low]; e[low] = e[high]; e[high] = t;
        }
        if (below(&e[mid], &e[high])) {
            entry t = e[mid]; e[mid] = e[high]; e[high] = t;
        }
        entry pivot = e[mid];
        Py_ssize_t i = low, j = high;
        /* Hoare's partition: better than the pivot to the left, worse to the right. */
        while (i <= j) {
            while (below(&pivot, &e[i]))
                i++;
            while (below(&e[j], &pivot))
                j--;
            if (i <= j) {
                entry t = e[i]; e[i] = e[j]; e[j] = t;
                i++;
                j--;
            }
        }
        /* [low, j] are at least as good as the pivot, [i, high] at most as good, and
         * anything between them is the pivot itself. */
        if (k - 1 <= j)
            high = j;
        else if (k - 1 >= i)
            low = i;
        else
            return;
    }
}

/* The best k of some scores as they are met, kept in a pool: each score above
 * ``floor`` goes in, and when the pool is full the best k are selected and the least
 * of them is the new floor. An insertion costs a store, where a heap of the best k
 * cost a sift through its levels, a mispredicted branch at each, for every slot that
 * beat the floor (~a third of the summing pass's time at 100k short notes). */
typedef struct {
    entry *pool;
    Py_ssize_t held, room, k;
    double floor; /* 0 until the pool first fills: only scores above 0 count */
    const int64_t *ages; /* each slot's age (NULL: none, ties go to the higher slot) */
    entry least;          /* with ages: the entry the floor is, which an entry must beat */
} picker;

/* Room for a pool picking the best ``k`` (at most ``size``) of ``size`` scores; 0
 * (no memory) when it cannot be had. */
static int
picker_init(picker *p, Py_ssize_t k, Py_ssize_t size)
{
    Py_ssize_t room = 4 * k + 64;
    p->room = room < size ? room : size;
    p->held = 0;
    p->k = k;
    p->floor = 0.0;
    p->ages = NULL;
    /* Nothing of score 0 goes in, whatever its age. */
    p->least.score = 0.0;
    p->least.slot = PY_SSIZE_T_MAX;
    p->least.age = INT64_MAX;
    p->pool = PyMem_RawMalloc((size_t)(p->room > 0 ? p->room : 1) * sizeof(entry));
    return p->pool != NULL;
}

/* Make room in a full pool: the best k kept, their least the floor. */
static void
picker_cut(picker *p)
{
    select_best(p->pool, p->held, p->k);
    p->held = p->k;
    Py_ssize_t least = 0;
    for (Py_ssize_t i = 1; i < p->k; i++)
        if (below(&p->pool[i], &p->pool[least]))
            least = i;
    p->floor = p->pool[least].score;
    p->least = p->pool[least];
}

/* The best k, best first, in pool[0..held). */
static void
picker_done(picker *p)
{
    if (p->held > p->k) {
        select_best(p->pool, p->held, p->k);
        p->held = p->k;
    }
    qsort(p->pool, (size_t)p->held, sizeof(entry), best_first);
}

/* The scores of ``window`` (slots ``start`` to ``end`` - 1, the first at ``window[0]``),
 * from the last down, put to the picker: a score is looked at only where it can beat
 * the floor, and a block of slots that cannot is passed over after one branch-free
 * pass. A score equal to the floor goes in only when its age (then its slot) is above
 * the floor entry's, so which of equal scores are kept does not hang on the order the
 * slots come in. Without ages every age is 0: met from the last slot down, a score
 * equal to the floor never beats it, and those blocks are looked over for scores above
 * it alone, as they are while the floor is 0 (nothing of score 0 goes in). Blocks are
 * counted from ``end``. */
static void
keep_best(const double *window, Py_ssize_t start, Py_ssize_t end, picker *p)
{
    if (!p->k)
        return;
    const double *a = window - start; /* a[slot], slot in [start, end) */
    const int64_t *ages = p->ages;
    for (; end > start; end -= 32) {
        Py_ssize_t from = end - start > 32 ? end - 32 : start;
        /* Which of the block's slots can beat the floor, a bit each, the last slot's
         * the highest: read from the highest bit down with no branch per slot (whether
         * a slot beats the floor is a coin toss the processor cannot predict). */
        int or_equal = ages && p->floor > 0.0;
        uint32_t bits;
        if (or_equal)
            bits = end - from == 32 ? beats_32(a + from, p->floor, 1)
                                    : beats(a + from, end - from, p->floor, 1);
        else
            bits = end - from == 32 ? beats_32(a + from, p->floor, 0)
                                    : beats(a + from, end - from, p->floor, 0);
        while (bits) {
            int top = highest_bit(bits);
            bits &= ~((uint32_t)1 << top);
            Py_ssize_t slot = from + top;
            entry e = {a[slot], slot, 0};
            /* Only a score equal to the floor reads its age to be weighed. */
            if (!(e.score > p->floor)) {
                if (!ages)
                    continue; /* the floor rose since the block was looked at */
                e.age = ages[slot];
                if (!below(&p->least, &e))
                    continue;
            }
            if (p->held == p->room) {
                picker_cut(p);
                e.age = ages ? ages[slot] : 0;
                if (!below(&p->least, &e))
                    continue;
            }
            if (ages)
                e.age = ages[slot];
            p->pool[p->held++] = e;
        }
    }
}

/* The ``held`` entries of ``heap`` as a list of (slot, score) pairs, or of (score,
 * slot) pairs when ``score_first``. */
static PyObject *
best_list(entry *heap, Py_ssize_t held, int score_first)
{
    PyObject *result = PyList_New(held);
    if (!result)
        return NULL;
    for (Py_ssize_t i = 0; i < held; i++) {
        PyObject *pair = score_first ? Py_BuildValue("(dn)", heap[i].score, heap[i].slot)
                                     : Py_BuildValue("(nd)", heap[i].slot, heap[i].score);
        if (!pair) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, i, pair);
    }
    return result;
}

/* ``obj`` (None, or an int64 buffer of one age per slot) into ``view``; the ages, or
 * NULL for None. ``size``: the slots it must cover (-1: any number). -1 in *bad, with
 * the error set (naming ``name``), when it cannot be read so. */
static const int64_t *
take_ages(PyObject *obj, Py_ssize_t size, Py_buffer *view, int *held, const char *name, int *bad)
{
    *held = 0;
    *bad = 0;
    if (obj == Py_None)
        return NULL;
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
        *bad = 1;
        return NULL;
    }
    *held = 1;
    if (view->len % 8 || (size >= 0 && view->len != 8 * size)) {
        PyErr_Format(PyExc_ValueError, "%s: ages must be int64, one per slot", name);
        *bad = 1;
        return NULL;
    }
    return view->buf;
}

PyDoc_STRVAR(best_doc,
"best(acc, k, ages=None)\n--\n\n"
"The k best slots of acc (a float64 array) scoring above 0, as (slot, score) pairs,\n"
"best first; of equal scores, the higher age first (ages: int64, one per slot), then\n"
"the higher slot. Fewer when fewer score.");

static PyObject *
best(PyObject *self, PyObject *args)
{
    Py_buffer acc, ages_view;
    Py_ssize_t k;
    PyObject *ages_obj = Py_None;
    int ages_held = 0, bad = 0;
    if (!PyArg_ParseTuple(args, "y*n|O", &acc, &k, &ages_obj))
        return NULL;
    PyObject *result = NULL;
    picker pick = {NULL, 0, 0, 0, 0.0};
    if (acc.len % 8 || k < 0) {
        PyErr_SetString(PyExc_ValueError, "best: acc must be float64 and k at least 0");
        goto done;
    }
    Py_ssize_t size = acc.len / 8;
    const int64_t *ages = take_ages(ages_obj, size, &ages_view, &ages_held, "best", &bad);
    if (bad)
        goto done;
    if (k > size)
        k = size;
    if (!picker_init(&pick, k, size)) {
        PyErr_NoMemory();
        goto done;
    }
    pick.ages = ages;
    const double *a = acc.buf;
    Py_BEGIN_ALLOW_THREADS
    keep_best(a, 0, size, &pick);
    picker_done(&pick);
    Py_END_ALLOW_THREADS
    result = best_list(pick.pool, pick.held, 0);
done:
    PyMem_RawFree(pick.pool);
    if (ages_held)
        PyBuffer_Release(&ages_view);
    PyBuffer_Release(&acc);
    return result;
}

/* The best k (at most the dict's size) of ``scores`` (a dict of int slot -> float
 * score) into ``heap``, best first (of equal scores, the higher slot first); how many,
 * or -1 with the error set (its message naming ``name``). */
static Py_ssize_t
best_into(PyObject *scores, Py_ssize_t k, entry *heap, const char *name, const int64_t *ages,
          Py_ssize_t n_ages)
{
    Py_ssize_t held = 0, at = 0;
    PyObject *key, *value;
    while (k && PyDict_Next(scores, &at, &key, &value)) {
        /* Checked first: a value of another type could run Python code (its
         * __float__) that changes the dict under this loop. */
        if (!PyLong_Check(key) || !(PyFloat_Check(value) || PyLong_Check(value))) {
            PyErr_Format(PyExc_TypeError, "%s: scores holds int -> float", name);
            return -1;
        }
        Py_ssize_t slot = PyLong_AsSsize_t(key);
        double score = PyFloat_AsDouble(value);
        if (PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "%s: scores holds int -> float", name);
            return -1;
        }
        int64_t age = 0;
        if (ages) {
            if (slot < 0 || slot >= n_ages) {
                PyErr_Format(PyExc_ValueError, "%s: slot %zd has no age", name, slot);
                return -1;
            }
            age = ages[slot];
        }
        entry e = {score, slot, age};
        if (held < k)
            push(heap, held++, e);
        else if (below(&heap[0], &e)) {
            heap[0] = e;
            sift_down(heap, held, 0);
        }
    }
    qsort(heap, (size_t)held, sizeof(entry), best_first);
    return held;
}

PyDoc_STRVAR(best_of_doc,
"best_of(scores, k, ages=None)\n--\n\n"
"The k best of scores (a dict of int slot -> float score) as (score, slot) pairs, best\n"
"first; of equal scores, the higher age first (ages: int64 by slot), then the higher\n"
"slot: without ages, sorted(zip(scores.values(), scores.keys()), reverse=True)[:k],\n"
"without sorting them all.");

static PyObject *
best_of(PyObject *self, PyObject *args)
{
    PyObject *scores, *ages_obj = Py_None;
    Py_ssize_t k;
    Py_buffer ages_view;
    int ages_held = 0, bad = 0;
    if (!PyArg_ParseTuple(args, "O!n|O", &PyDict_Type, &scores, &k, &ages_obj))
        return NULL;
    if (k < 0) {
        PyErr_SetString(PyExc_ValueError, "best_of: k must be at least 0");
        return NULL;
    }
    const int64_t *ages = take_ages(ages_obj, -1, &ages_view, &ages_held, "best_of", &bad);
    if (bad) {
        if (ages_held)
            PyBuffer_Release(&ages_view);
        return NULL;
    }
    Py_ssize_t size = PyDict_GET_SIZE(scores);
    if (k > size)
        k = size;
    entry *heap = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(entry));
    PyObject *result = NULL;
    if (!heap)
        PyErr_NoMemory();
    else {
        Py_ssize_t held = best_into(scores, k, heap, "best_of", ages,
                                    ages_held ? ages_view.len / 8 : 0);
        result = held < 0 ? NULL : best_list(heap, held, 1);
    }
    PyMem_Free(heap);
    if (ages_held)
        PyBuffer_Release(&ages_view);
    return result;
}

/* Slots summed and looked over together by sum_best(): 32 KB of scores, which stay in
 * the nearest caches from their sums to their look. */
#define WINDOW 4096

/* One word's postings as sum_best() reads them. */
typedef struct {
    Py_buffer docs, tfs;
    double kp1;
    Py_ssize_t next; /* postings left to read, from the last one down */
} word;

/* A slot's BM25 length term into ``by``: norm[length[slot]] with lengths, else
 * norm[slot]. 0 when the slot's length is past the table (a damaged column). */
static inline int
norm_at(const double *norm, Py_ssize_t n_norms, const uint16_t *length, Py_ssize_t slot,
        double *by)
{
    if (!length) {
        *by = norm[slot];
        return 1;
    }
    if (length[slot] >= n_norms)
        return 0;
    *by = norm[length[slot]];
    return 1;
}

/* The first of ``count`` postings from ``at`` on whose slot is at least ``slot`` (their
 * slots rise): a gallop, then a halving, so the slots asked for in rising order cost a
 * few looks each. */
static Py_ssize_t
gallop(const int32_t *docs, Py_ssize_t count, Py_ssize_t at, int32_t slot)
{
    Py_ssize_t step = 1, low = at, high = at;
    while (high < count && docs[high] < slot) {
        low = high + 1;
        high += step;
        step *= 2;
    }
    if (high > count)
        high = count;
    while (low < high) {
        Py_ssize_t mid = low + (high - low) / 2;
        if (docs[mid] < slot)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

static int
by_slot(const void *x, const void *y)
{
    Py_ssize_t a = *(const Py_ssize_t *)x, b = *(const Py_ssize_t *)y;
    return (a > b) - (a < b);
}

/* A slot's link, or -1 where it has none or it points outside the slots. */
static inline Py_ssize_t
link_of(const int32_t *links, Py_ssize_t slot, Py_ssize_t size)
{
    int32_t to = links[slot];
    return to >= 0 && to < size ? (Py_ssize_t)to : -1;
}

/* Into ``acc``, the whole sum of the best ``held`` and of every slot up to two links
 * from them, each summed as the pass sums a slot (word after word, from 0), or 0 where
 * ``allowed`` leaves it out: what around() reads. ``near`` has room for 7 slots per
 * held one, ``cursor`` for one per word. -1, or a slot longer than the norms reach. */
static Py_ssize_t
sum_near(double *acc, Py_ssize_t size, const double *norm, Py_ssize_t n_norms,
         const uint16_t *length, const unsigned char *allowed, const word *words, Py_ssize_t n,
         const entry *best, Py_ssize_t held, const int32_t *prev, const int32_t *next,
         Py_ssize_t *near, Py_ssize_t *cursor)
{
    Py_ssize_t count = 0;
    for (Py_ssize_t h = 0; h < held; h++) {
        Py_ssize_t slot = best[h].slot;
        near[count++] = slot;
        Py_ssize_t sides[2] = {link_of(prev, slot, size), link_of(next, slot, size)};
        for (int s = 0; s < 2; s++) {
            if (sides[s] < 0)
                continue;
            near[count++] = sides[s];
            Py_ssize_t before = link_of(prev, sides[s], size);
            Py_ssize_t after = link_of(next, sides[s], size);
            if (before >= 0)
                near[count++] = before;
            if (after >= 0)
                near[count++] = after;
        }
    }
    qsort(near, (size_t)count, sizeof(Py_ssize_t), by_slot);
    for (Py_ssize_t t = 0; t < n; t++)
        cursor[t] = 0;
    for (Py_ssize_t j = 0; j < count; j++) {
        Py_ssize_t slot = near[j];
        if (j && slot == near[j - 1])
            continue;
        double sum = 0.0, by = 0.0;
        int have_norm = 0; /* looked up at the first word that holds the slot, as the
                            * pass does: a slot no word holds is never asked its length */
        if (!allowed || allowed[slot]) {
            for (Py_ssize_t t = 0; t < n; t++) {
                const int32_t *docs = words[t].docs.buf;
                Py_ssize_t at = cursor[t] = gallop(docs, words[t].docs.len / 4, cursor[t],
                                                   (int32_t)slot);
                if (at < words[t].docs.len / 4 && docs[at] == slot) {
                    if (!have_norm && !(have_norm = norm_at(norm, n_norms, length, slot, &by)))
                        return slot;
                    double tf = (double)((const int32_t *)words[t].tfs.buf)[at];
                    sum += tf * words[t].kp1 / (by + tf);
                }
            }
        }
        acc[slot] = sum;
    }
    return -1;
}

PyDoc_STRVAR(sum_best_doc,
"sum_best(acc, norms, words, k, mask=None, lengths=None, links=None, ages=None)\n--\n\n"
"add_scaled() for each (kp1, docs, tfs) of words in turn, into acc (float64, its\n"
"values before are not read), then best(acc, k); a slot whose byte in mask is 0 is\n"
"left at 0. The same sums in the same order, so the same acc and the same pairs, made\n"
"a window of slots at a time from the last window down (each window's sums looked\n"
"over while they are in the cache), which asks each word's slots to rise. If one\n"
"word's do not, the index of the first such word in words is returned instead (acc\n"
"is then partly summed). With lengths (uint16, one per slot), norms is by length\n"
"instead of by slot: a slot's norm is norms[lengths[slot]].\n\n"
"With links, (prev, next): int32 per slot, the slot before and after each (-1: none),\n"
"each window is summed in a buffer of its own and acc is written only at the best k\n"
"and the slots up to two links from them (what around() reads), each with the sum a\n"
"whole pass gives it (0 where mask leaves it out); the rest of acc is not written.\n\n"
"With ages (int64 per slot), of equal scores the higher age is picked first, as\n"
"best(acc, k, ages) picks.");

static PyObject *
sum_best(PyObject *self, PyObject *args)
{
    Py_buffer acc, norms;
    PyObject *words_obj, *mask_obj = Py_None, *lengths_obj = Py_None, *links_obj = Py_None;
    PyObject *ages_obj = Py_None;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "w*y*On|OOOO", &acc, &norms, &words_obj, &k, &mask_obj,
                          &lengths_obj, &links_obj, &ages_obj))
        return NULL;
    Py_buffer ages_view;
    int ages_held = 0, ages_bad = 0;
    PyObject *result = NULL, *seq = NULL;
    Py_buffer mask, lengths, prev_buf, next_buf;
    int have_mask = 0, have_lengths = 0, have_links = 0;
    double *own = NULL;
    Py_ssize_t *near = NULL, *cursor = NULL;
    word *words = NULL;
    picker pick = {NULL, 0, 0, 0, 0.0};
    Py_ssize_t n = 0, taken = 0;
    Py_ssize_t size = acc.len / 8;
    if (lengths_obj != Py_None) {
        if (PyObject_GetBuffer(lengths_obj, &lengths, PyBUF_SIMPLE) < 0)
            goto done;
        have_lengths = 1;
    }
    if (acc.len % 8 || norms.len % 8 || (!have_lengths && norms.len != acc.len) ||
        (have_lengths && lengths.len != 2 * size) || k < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "sum_best: acc and norms must be float64 arrays of one length (or "
                        "lengths uint16 of acc's), k at least 0");
        goto done;
    }
    if (mask_obj != Py_None) {
        if (PyObject_GetBuffer(mask_obj, &mask, PyBUF_SIMPLE) < 0)
            goto done;
        have_mask = 1;
        if (mask.len != size) {
            PyErr_SetString(PyExc_ValueError, "sum_best: mask must cover the same slots");
            goto done;
        }
    }
    if (links_obj != Py_None) {
        if (!PyArg_ParseTuple(links_obj, "y*y*;sum_best: links is (prev, next)", &prev_buf,
                              &next_buf))
            goto done;
        have_links = 1;
        if (prev_buf.len != 4 * size || next_buf.len != 4 * size) {
            PyErr_SetString(PyExc_ValueError,
                            "sum_best: links must be int32 arrays of one slot each");
            goto done;
        }
    }
    const int64_t *ages = take_ages(ages_obj, size, &ages_view, &ages_held, "sum_best", &ages_bad);
    if (ages_bad)
        goto done;
    seq = PySequence_Fast(words_obj, "sum_best: words must be a sequence");
    if (!seq)
        goto done;
    n = PySequence_Fast_GET_SIZE(seq);
    words = PyMem_Calloc((size_t)(n ? n : 1), sizeof(word));
    if (!words) {
        PyErr_NoMemory();
        goto done;
    }
    for (; taken < n; taken++) {
        word *w = &words[taken];
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, taken),
                              "dy*y*;sum_best: words holds (kp1, docs, tfs)", &w->kp1, &w->docs,
                              &w->tfs))
            goto done;
        if (w->docs.len % 4 || w->tfs.len != w->docs.len) {
            taken++; /* its buffers are held: released below */
            PyErr_SetString(PyExc_ValueError,
                            "sum_best: postings' slots and counts must be int32 arrays of one "
                            "length");
            goto done;
        }
        w->next = w->docs.len / 4;
    }
    if (k > size)
        k = size;
    if (!picker_init(&pick, k, size)) {
        PyErr_NoMemory();
        goto done;
    }
    pick.ages = ages;
    if (have_links) {
        own = PyMem_RawMalloc(WINDOW * sizeof(double));
        near = PyMem_RawMalloc((size_t)(7 * (k ? k : 1)) * sizeof(Py_ssize_t));
        cursor = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
        if (!own || !near || !cursor) {
            PyErr_NoMemory();
            goto done;
        }
    }
    double *whole = acc.buf, *a = whole;
    const double *norm = norms.buf;
    /* By length: 2 bytes a slot read where 8 were (and a table of a few cache lines),
     * which at 100k records is 600 KB less to bring in for each query. */
    const uint16_t *length = have_lengths ? lengths.buf : NULL;
    Py_ssize_t n_norms = norms.len / 8;
    const unsigned char *allowed = have_mask ? mask.buf : NULL;
    Py_ssize_t bad = -1, unsorted = -1, long_slot = -1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t end = size; end > 0 && bad < 0 && unsorted < 0 && long_slot < 0;
         end -= WINDOW) {
        Py_ssize_t start = end > WINDOW ? end - WINDOW : 0;
        /* With links, the window's sums stay in a buffer the caches keep: a[slot] is
         * own[slot - start], and acc is not written out (800 KB a query at 100k). */
        a = own ? own - start : whole;
        memset(a + start, 0, (size_t)(end - start) * sizeof(double));
        for (Py_ssize_t t = 0; t < n; t++) {
            word *w = &words[t];
            const int32_t *docs = w->docs.buf, *tfs = w->tfs.buf;
            Py_ssize_t i = w->next;
            int32_t above = (int32_t)end; /* the slot read last, or the window's end */
            double kp1 = w->kp1;
            for (; i > 0; i--) {
                int32_t slot = docs[i - 1];
                if (slot < start)
                    break;
                if (slot >= above) {
                    if (slot >= size)
                        bad = t;
                    else
                        unsorted = t;
                    break;
                }
                above = slot;
                if (allowed && !allowed[slot])
                    continue;
                double tf = (double)tfs[i - 1], by;
                if (!norm_at(norm, n_norms, length, slot, &by)) {
                    long_slot = slot;
                    break;
                }
                a[slot] += tf * kp1 / (by + tf);
            }
            w->next = i;
            if (long_slot >= 0)
                break;
            if (bad >= 0 || unsorted >= 0)
                break;
        }
        if (bad < 0 && unsorted < 0 && long_slot < 0)
            keep_best(a + start, start, end, &pick);
    }
    /* A slot below 0 is never read: the last window stops at it, and it is left. */
    for (Py_ssize_t t = 0; t < n && bad < 0 && unsorted < 0 && long_slot < 0; t++)
        if (words[t].next > 0)
            bad = t;
    if (bad < 0 && unsorted < 0 && long_slot < 0) {
        picker_done(&pick);
        if (own)
            long_slot = sum_near(whole, size, norm, n_norms, length, allowed, words, n,
                                 pick.pool, pick.held, prev_buf.buf, next_buf.buf, near,
                                 cursor);
    }
    Py_END_ALLOW_THREADS
    if (long_slot >= 0)
        PyErr_Format(PyExc_ValueError, "sum_best: slot %zd is longer than norms reaches",
                     long_slot);
    else if (bad >= 0)
        PyErr_Format(PyExc_ValueError, "sum_best: word %zd has a slot outside the index", bad);
    else if (unsorted >= 0)
        result = PyLong_FromSsize_t(unsorted);
    else
        result = best_list(pick.pool, pick.held, 0);
done:
    for (Py_ssize_t t = 0; t < taken; t++) {
        PyBuffer_Release(&words[t].docs);
        PyBuffer_Release(&words[t].tfs);
    }
    PyMem_Free(words);
    PyMem_RawFree(pick.pool);
    PyMem_RawFree(own);
    PyMem_RawFree(near);
    PyMem_RawFree(cursor);
    Py_XDECREF(seq);
    if (have_mask)
        PyBuffer_Release(&mask);
    if (have_lengths)
        PyBuffer_Release(&lengths);
    if (have_links) {
        PyBuffer_Release(&prev_buf);
        PyBuffer_Release(&next_buf);
    }
    if (ages_held)
        PyBuffer_Release(&ages_view);
    PyBuffer_Release(&norms);
    PyBuffer_Release(&acc);
    return result;
}

/* Saved rows as the loops read them (a run of texts and the int64 offsets where each
 * row starts, one more offset than rows), checked once. */
typedef struct {
    const int64_t *at;
    Py_ssize_t count;  /* rows */
    const char *base;  /* the first row's first byte */
    Py_ssize_t room;   /* bytes from there to the end of the texts */
} saved_rows;

/* ``texts`` from ``start`` and ``offsets`` as saved rows; -1 (the error set, its
 * message naming ``name``) when they cannot be. */
static int
take_rows(const Py_buffer *texts, Py_ssize_t start, const Py_buffer *offsets, const char *name,
          saved_rows *rows)
{
    if (offsets->len % 8 || offsets->len < 8 || start < 0 || start > texts->len) {
        PyErr_Format(PyExc_ValueError, "%s: offsets must be int64, and start inside the texts",
                     name);
        return -1;
    }
    rows->at = offsets->buf;
    rows->count = offsets->len / 8 - 1;
    rows->base = (const char *)texts->buf + start;
    rows->room = texts->len - start;
    return 0;
}

/* Where row ``row`` lies: bytes ``first`` to ``last`` after ``rows->base``; -1 when it
 * lies outside the texts (a damaged file). */
static int
row_span(const saved_rows *rows, Py_ssize_t row, int64_t *first, int64_t *last)
{
    *first = row >= 0 && row < rows->count ? rows->at[row] : -1;
    *last = *first >= 0 ? rows->at[row + 1] : -1;
    return *first < 0 || *last < *first || *last > rows->room ? -1 : 0;
}

/* The span (as row_span) of the row that item ``i`` of the sequence ``slots`` names; -1
 * with the error set (its message naming ``name``) when the item is not an int or the
 * row lies outside the texts. */
static int
slot_span(const saved_rows *rows, PyObject *slots, Py_ssize_t i, const char *name,
          int64_t *first, int64_t *last)
{
    PyObject *slot = PySequence_Fast_GET_ITEM(slots, i);
    if (!PyLong_Check(slot)) {
        PyErr_Format(PyExc_TypeError, "%s: a slot must be an int", name);
        return -1;
    }
    Py_ssize_t row = PyLong_AsSsize_t(slot);
    if (row == -1 && PyErr_Occurred())
        return -1;
    if (row_span(rows, row, first, last) < 0) {
        PyErr_Format(PyExc_ValueError, "%s: row %zd is outside the texts", name, row);
        return -1;
    }
    return 0;
}

/* ``obj`` as a slot below ``size`` for a prefetch hint, or -1 when it is not one (an
 * error converting it is cleared: the pass that reads the slots reports it). */
static Py_ssize_t
hinted_slot(PyObject *obj, Py_ssize_t size)
{
    Py_ssize_t slot = PyLong_Check(obj) ? PyLong_AsSsize_t(obj) : -1;
    if (slot == -1)
        PyErr_Clear();
    return slot >= 0 && slot < size ? slot : -1;
}

/* The slot of a top list's (slot, score) pair for a prefetch hint (see hinted_slot). */
static Py_ssize_t
hinted_top_slot(PyObject *item, Py_ssize_t size)
{
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2)
        return -1;
    return hinted_slot(PyTuple_GET_ITEM(item, 0), size);
}

/* A hint for the first bytes of row ``row`` (at most rows->count - 1, or -1: none),
 * once its offset is in: an offset outside the texts (a damaged file) is passed over. */
static void
hint_row_text(const saved_rows *rows, Py_ssize_t row)
{
    int64_t first = row >= 0 ? rows->at[row] : -1;
    if (first >= 0 && first < rows->room)
        PREFETCH(rows->base + first);
}

/* Asks for the rows that items 0 to n - 1 of the sequence ``slots`` name to be
 * brought into the cache, all at once: their offsets first, then their first bytes.
 * The rows lie far apart in a mapped file, and read one after the other each waits
 * for its offset and then for its text; asked for together, the waits overlap. Only
 * a hint: an item that is not a slot of the rows is passed over here (the loop that
 * reads the rows reports it). */
static void
prefetch_rows(const saved_rows *rows, PyObject *slots, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t row = hinted_slot(PySequence_Fast_GET_ITEM(slots, i), rows->count);
        if (row >= 0)
            PREFETCH(rows->at + row);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        hint_row_text(rows, hinted_slot(PySequence_Fast_GET_ITEM(slots, i), rows->count));
}

/* Whether ``pat`` (m bytes) is in ``text`` (n bytes) with a space or an end of the
 * text on each side: ``f" {pat} " in f" {text} "`` in Python. The texts are UTF-8, and
 * so a match of their bytes is a match of their characters. */
static int
bounded_in(const char *text, Py_ssize_t n, const char *pat, Py_ssize_t m)
{
    if (m == 0 || m > n)
        return 0;
    for (Py_ssize_t i = 0; i + m <= n; i++) {
        const char *at = memchr(text + i, pat[0], (size_t)(n - m - i + 1));
        if (!at)
            return 0;
        i = at - text;
        if ((i == 0 || text[i - 1] == ' ') && (i + m == n || text[i + m] == ' ') &&
            memcmp(at, pat, (size_t)m) == 0)
            return 1;
    }
    return 0;
}

typedef struct {
    const char *forward, *backward;
    Py_ssize_t forward_len, backward_len;
    double least;
} word_pair;

/* The (forward, backward, least) items of the fast sequence ``pairs``, read by
 * ``format`` (PyArg_ParseTuple's, its message after the ';'); NULL with the error set.
 * The bytes are the items' own: ``pairs`` must outlive them. Freed with PyMem_Free. */
static word_pair *
take_pairs(PyObject *pairs, const char *format)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(pairs);
    word_pair *words = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(word_pair));
    if (!words)
        return (word_pair *)PyErr_NoMemory();
    for (Py_ssize_t p = 0; p < n; p++) {
        char *f, *b;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(pairs, p), format, &f,
                              &words[p].forward_len, &b, &words[p].backward_len,
                              &words[p].least)) {
            PyMem_Free(words);
            return NULL;
        }
        words[p].forward = f;
        words[p].backward = b;
    }
    return words;
}

/* The proximity bonus of one saved row (``size`` bytes at ``row_text``): field by
 * field, pair by pair, the sums in the order engine.py adds them. */
static double
row_bonus(const char *row_text, Py_ssize_t size, const word_pair *words, Py_ssize_t n_pairs)
{
    Py_ssize_t from = 0;
    double bonus = 0.0;
    while (from <= size) {
        const char *field = row_text + from;
        const char *stop = memchr(field, 0x1e, (size_t)(size - from));
        Py_ssize_t field_len = stop ? stop - field : size - from;
        const char *mark = memchr(field, 0x1f, (size_t)field_len);
        if (mark) {
            const char *terms = mark + 1;
            Py_ssize_t len = field_len - (terms - field);
            for (Py_ssize_t p = 0; p < n_pairs; p++) {
                if (bounded_in(terms, len, words[p].forward, words[p].forward_len))
                    bonus += words[p].least;
                else if (bounded_in(terms, len, words[p].backward, words[p].backward_len))
                    bonus += 0.5 * words[p].least;
            }
        }
        from += field_len + 1;
    }
    return bonus;
}

PyDoc_STRVAR(near_pairs_doc,
"near_pairs(texts, start, offsets, slots, pairs)\n--\n\n"
"Each slot's proximity bonus, in the order of slots. Row r of the saved texts is\n"
"texts[start + offsets[r] : start + offsets[r + 1]] (offsets: int64), fields split by\n"
"0x1e, each field's terms after its first 0x1f. pairs: (forward, backward, least)\n"
"with forward and backward two terms joined by a space (UTF-8). For each field, and\n"
"in it each pair: least is added when forward stands in the terms as whole words,\n"
"else 0.5 * least when backward does.");

static PyObject *
near_pairs(PyObject *self, PyObject *args)
{
    Py_buffer texts, offsets;
    Py_ssize_t start;
    PyObject *slots_obj, *pairs_obj;
    if (!PyArg_ParseTuple(args, "y*ny*OO", &texts, &start, &offsets, &slots_obj, &pairs_obj))
        return NULL;
    PyObject *result = NULL, *slots = NULL, *pairs = NULL;
    word_pair *words = NULL;
    saved_rows saved;
    if (take_rows(&texts, start, &offsets, "near_pairs", &saved) < 0)
        goto done;
    slots = PySequence_Fast(slots_obj, "near_pairs: slots must be a sequence");
    pairs = slots ? PySequence_Fast(pairs_obj, "near_pairs: pairs must be a sequence") : NULL;
    if (!pairs)
        goto done;
    Py_ssize_t n_pairs = PySequence_Fast_GET_SIZE(pairs);
    words = take_pairs(pairs, "y#y#d;near_pairs: a pair is (bytes, bytes, float)");
    if (!words)
        goto done;
    Py_ssize_t n_slots = PySequence_Fast_GET_SIZE(slots);
    prefetch_rows(&saved, slots, n_slots);
    result = PyList_New(n_slots);
    if (!result)
        goto done;
    for (Py_ssize_t i = 0; i < n_slots; i++) {
        int64_t first, last;
        if (slot_span(&saved, slots, i, "near_pairs", &first, &last) < 0)
            goto fail;
        double bonus = row_bonus(saved.base + first, (Py_ssize_t)(last - first), words, n_pairs);
        PyObject *value = PyFloat_FromDouble(bonus);
        if (!value)
            goto fail;
        PyList_SET_ITEM(result, i, value);
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    PyMem_Free(words);
    Py_XDECREF(slots);
    Py_XDECREF(pairs);
    PyBuffer_Release(&texts);
    PyBuffer_Release(&offsets);
    return result;
}

PyDoc_STRVAR(proximity_doc,
"proximity(final, k, wanted, most, depth, weight, texts, start, offsets, pairs, ages=None)\n--\n\n"
"engine.py's proximity pass over the candidates' scores ``final`` (a dict slot ->\n"
"score), in one call: of best_of(final, k), the first ``depth`` slots (with ``wanted``\n"
"above 0, only those at or above the ``wanted``-th score less ``most`` and a margin\n"
"for its rounding) each gain ``weight`` times their near_pairs() bonus, in place.\n"
"None once done; when one of those slots is not a row of the saved texts, nothing is\n"
"changed and they are returned (the caller sums their bonuses another way). ages:\n"
"as best_of()'s.");

static PyObject *
proximity(PyObject *self, PyObject *args)
{
    PyObject *final, *pairs_obj, *ages_obj = Py_None;
    Py_ssize_t k, wanted, depth, start;
    double most, weight;
    Py_buffer texts, offsets, ages_view;
    int ages_held = 0, ages_bad = 0;
    if (!PyArg_ParseTuple(args, "O!nndndy*ny*O|O", &PyDict_Type, &final, &k, &wanted, &most,
                          &depth, &weight, &texts, &start, &offsets, &pairs_obj, &ages_obj))
        return NULL;
    const int64_t *ages =
        take_ages(ages_obj, -1, &ages_view, &ages_held, "proximity", &ages_bad);
    PyObject *result = NULL, *pairs = NULL;
    word_pair *words = NULL;
    entry *heap = NULL;
    double *bonuses = NULL;
    saved_rows saved;
    if (ages_bad)
        goto done;
    if (k < 0 || depth < 0) {
        PyErr_SetString(PyExc_ValueError, "proximity: k and depth must be at least 0");
        goto done;
    }
    if (take_rows(&texts, start, &offsets, "proximity", &saved) < 0)
        goto done;
    pairs = PySequence_Fast(pairs_obj, "proximity: pairs must be a sequence");
    if (!pairs)
        goto done;
    Py_ssize_t n_pairs = PySequence_Fast_GET_SIZE(pairs);
    words = take_pairs(pairs, "y#y#d;proximity: a pair is (bytes, bytes, float)");
    if (!words)
        goto done;
    Py_ssize_t size = PyDict_GET_SIZE(final);
    if (k > size)
        k = size;
    heap = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(entry));
    bonuses = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(double));
    if (!heap || !bonuses) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t held =
        best_into(final, k, heap, "proximity", ages, ages_held ? ages_view.len / 8 : 0);
    if (held < 0)
        goto done;
    /* The chosen, kept at the front of heap: engine.py's list in its order. */
    Py_ssize_t chosen = 0, rows_all = 1;
    int barred = wanted > 0 && wanted <= held;
    double bar = 0.0;
    if (barred) {
        double at = heap[wanted - 1].score;
        bar = at - most - 1e-9 * ((at < 0 ? -at : at) + most);
    }
    for (Py_ssize_t i = 0; i < held && i < depth; i++) {
        if (barred && !(heap[i].score >= bar))
            continue;
        heap[chosen++] = heap[i];
        rows_all &= heap[i].slot >= 0 && heap[i].slot < saved.count;
    }
    if (!rows_all) {
        result = PyList_New(chosen);
        for (Py_ssize_t i = 0; result && i < chosen; i++) {
            PyObject *slot = PyLong_FromSsize_t(heap[i].slot);
            if (!slot)
                Py_CLEAR(result);
            else
                PyList_SET_ITEM(result, i, slot);
        }
        goto done;
    }
    for (Py_ssize_t i = 0; i < chosen; i++)
        PREFETCH(saved.at + heap[i].slot);
    for (Py_ssize_t i = 0; i < chosen; i++)
        hint_row_text(&saved, heap[i].slot);
    /* Every bonus first, as engine.py has them before it adds one: a row outside the
     * texts (a damaged file) is refused with final as it was. */
    for (Py_ssize_t i = 0; i < chosen; i++) {
        int64_t first, last;
        if (row_span(&saved, heap[i].slot, &first, &last) < 0) {
            PyErr_Format(PyExc_ValueError, "proximity: row %zd is outside the texts",
                         heap[i].slot);
            goto done;
        }
        bonuses[i] = row_bonus(saved.base + first, (Py_ssize_t)(last - first), words, n_pairs);
    }
    for (Py_ssize_t i = 0; i < chosen; i++) {
        if (!bonuses[i])
            continue;
        PyObject *key = PyLong_FromSsize_t(heap[i].slot);
        PyObject *now = key ? PyDict_GetItemWithError(final, key) : NULL;
        double before = now ? PyFloat_AsDouble(now) : -1.0;
        PyObject *after = now && !PyErr_Occurred() ? PyFloat_FromDouble(before + weight * bonuses[i])
                                                   : NULL;
        int failed = !after || PyDict_SetItem(final, key, after) < 0;
        Py_XDECREF(after);
        Py_XDECREF(key);
        if (failed) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_KeyError, "proximity: a chosen slot left final");
            goto done;
        }
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(words);
    PyMem_Free(heap);
    PyMem_Free(bonuses);
    Py_XDECREF(pairs);
    PyBuffer_Release(&texts);
    PyBuffer_Release(&offsets);
    if (ages_held)
        PyBuffer_Release(&ages_view);
    return result;
}

/* A slot's float in a dict of slots (0.0 when absent); -1 on an error. */
static int
value_in(PyObject *dict, Py_ssize_t key, double *out)
{
    *out = 0.0;
    if (!dict)
        return 0;
    PyObject *k = PyLong_FromSsize_t(key);
    if (!k)
        return -1;
    PyObject *v = PyDict_GetItemWithError(dict, k);
    Py_DECREF(k);
    if (!v)
        return PyErr_Occurred() ? -1 : 0;
    *out = PyFloat_AsDouble(v);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

PyDoc_STRVAR(around_doc,
"around(top, acc, allowed, prev, next, sessions, kinds, session_score, share,\n"
"       neighbour, observation)\n--\n\n"
"The candidates' final scores as a dict, slot -> score: the top (slot, score) pairs\n"
"first, in order, each observation gaining share * session_score[its session]; then\n"
"the slots before and after each top slot that allowed lets through (a byte per\n"
"slot, None: all), in the order met, each starting from its score in acc (a float64\n"
"per slot) plus, when both are non-zero, share * its session's score. Every\n"
"candidate with a slot before or after it then gains neighbour * the larger of\n"
"those two slots' scores in acc. prev, next and sessions are int32 per slot (-1:\n"
"none), kinds int8.");

/* A (slot, score) pair of a top list: the slot, and the score where ``score`` is
 * given; -1 (TypeError naming ``name``) when the item is not one. */
static int
top_pair(PyObject *item, const char *name, Py_ssize_t *slot, double *score)
{
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
        !PyLong_Check(PyTuple_GET_ITEM(item, 0))) {
        PyErr_Format(PyExc_TypeError, "%s: top holds (slot, score)", name);
        return -1;
    }
    *slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0));
    if (*slot == -1 && PyErr_Occurred())
        return -1;
    if (score) {
        *score = PyFloat_AsDouble(PyTuple_GET_ITEM(item, 1));
        if (*score == -1.0 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* Slots met so far, each with where it stands in a list: open addressing over a
 * power of two at least twice the slots it will hold. */
typedef struct {
    Py_ssize_t *slot, *at, mask;
} slot_set;

static int
slot_set_init(slot_set *set, Py_ssize_t most)
{
    Py_ssize_t size = 16;
    while (size < 2 * most)
        size *= 2;
    set->mask = size - 1;
    set->slot = PyMem_Malloc((size_t)size * sizeof(Py_ssize_t));
    set->at = PyMem_Malloc((size_t)size * sizeof(Py_ssize_t));
    if (!set->slot || !set->at)
        return -1;
    for (Py_ssize_t i = 0; i < size; i++)
        set->slot[i] = -1;
    return 0;
}

/* Where ``slot`` stands (-1: not met; then it is put down as standing at ``at``). */
static Py_ssize_t
slot_set_meet(slot_set *set, Py_ssize_t slot, Py_ssize_t at)
{
    Py_ssize_t i = (Py_ssize_t)(((size_t)slot * 0x9E3779B97F4A7C15ull) >> 20) & set->mask;
    while (set->slot[i] >= 0) {
        if (set->slot[i] == slot)
            return set->at[i];
        i = (i + 1) & set->mask;
    }
    set->slot[i] = slot;
    set->at[i] = at;
    return -1;
}

static PyObject *
around(PyObject *self, PyObject *args)
{
    PyObject *top_obj, *allowed_obj, *session_obj;
    Py_buffer acc, prev, next, sessions, kinds, allowed;
    double share, neighbour;
    int observation;
    if (!PyArg_ParseTuple(args, "Oy*Oy*y*y*y*O!ddi", &top_obj, &acc, &allowed_obj, &prev, &next,
                          &sessions, &kinds, &PyDict_Type, &session_obj, &share, &neighbour,
                          &observation))
        return NULL;
    int have_allowed = allowed_obj != Py_None;
    PyObject *final = NULL, *top = NULL;
    Py_ssize_t *order = NULL;
    double *value = NULL;
    slot_set met = {NULL, NULL, 0};
    if (have_allowed && PyObject_GetBuffer(allowed_obj, &allowed, PyBUF_SIMPLE) < 0) {
        have_allowed = 0;
        goto done;
    }
    Py_ssize_t size = acc.len / 8;
    if (acc.len % 8 || prev.len != 4 * size || next.len != 4 * size ||
        sessions.len != 4 * size || kinds.len != size || (have_allowed && allowed.len != size)) {
        PyErr_SetString(PyExc_ValueError,
                        "around: acc, allowed and the columns must cover the same slots");
        goto done;
    }
    top = PySequence_Fast(top_obj, "around: top must be a sequence");
    if (!top)
        goto done;
    const double *a = acc.buf;
    const int32_t *before = prev.buf, *after = next.buf, *in_session = sessions.buf;
    const signed char *kind = kinds.buf;
    const unsigned char *ok = have_allowed ? allowed.buf : NULL;
    PyObject *scores = PyDict_GET_SIZE(session_obj) ? session_obj : NULL;
    Py_ssize_t n_top = PySequence_Fast_GET_SIZE(top), held = 0;
    /* Each candidate's slot and score are kept here and the dict is made once at the
     * end: the same additions, in the same order, as adding to the dict's floats. */
    order = PyMem_Malloc((size_t)(3 * n_top + 1) * sizeof(Py_ssize_t));
    value = PyMem_Malloc((size_t)(3 * n_top + 1) * sizeof(double));
    if (!order || !value || slot_set_init(&met, 3 * n_top + 1) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    /* Checked once here, so the loops below read only inside the columns. */
#define INSIDE(slot) ((slot) >= 0 && (slot) < size)
    /* The columns' slots are far apart: each loop below first asks for what it will
     * read, all at once, so the waits for the cache overlap (a hint only). */
    for (Py_ssize_t i = 0; i < n_top; i++) {
        Py_ssize_t slot = hinted_top_slot(PySequence_Fast_GET_ITEM(top, i), size);
        if (slot >= 0) {
            PREFETCH(before + slot);
            PREFETCH(after + slot);
            PREFETCH(kind + slot);
            PREFETCH(in_session + slot);
        }
    }
    for (Py_ssize_t i = 0; i < n_top; i++) {
        Py_ssize_t slot;
        double score;
        if (top_pair(PySequence_Fast_GET_ITEM(top, i), "around", &slot, &score) < 0)
            goto done;
        if (!INSIDE(slot) || !INSIDE(before[slot] < 0 ? 0 : before[slot]) ||
            !INSIDE(after[slot] < 0 ? 0 : after[slot])) {
            PyErr_Format(PyExc_ValueError, "around: slot %zd is outside the index", slot);
            goto done;
        }
        double gain = 0.0;
        if (scores && kind[slot] == observation && value_in(scores, in_session[slot], &gain) < 0)
            goto done;
        /* (Only a session the scores name adds: x + 0.0 is x, bit for bit.) */
        double v = gain != 0.0 ? score + share * gain : score;
        Py_ssize_t at = slot_set_meet(&met, slot, held);
        if (at >= 0) {
            value[at] = v; /* a slot twice: the later pair, as a dict of them holds */
            continue;
        }
        order[held] = slot;
        value[held++] = v;
    }
    Py_ssize_t tops = held;
    for (Py_ssize_t i = 0; i < tops; i++) {
        int32_t side[2] = {before[order[i]], after[order[i]]};
        for (int k = 0; k < 2; k++) {
            Py_ssize_t j = side[k];
            if (!INSIDE(j))
                continue;
            PREFETCH(a + j);
            PREFETCH(before + j);
            PREFETCH(after + j);
            PREFETCH(in_session + j);
            if (ok)
                PREFETCH(ok + j);
        }
    }
    for (Py_ssize_t i = 0; i < tops; i++) {
        int32_t side[2] = {before[order[i]], after[order[i]]};
        for (int k = 0; k < 2; k++) {
            Py_ssize_t j = side[k];
            if (j < 0 || (ok && !ok[j]) || slot_set_meet(&met, j, held) >= 0)
                continue;
            if (!INSIDE(before[j] < 0 ? 0 : before[j]) || !INSIDE(after[j] < 0 ? 0 : after[j])) {
                PyErr_Format(PyExc_ValueError, "around: slot %zd is outside the index", j);
                goto done;
            }
            double own = a[j], gain = 0.0;
            if (own != 0.0 && share != 0.0) {
                if (value_in(scores, in_session[j], &gain) < 0)
                    goto done;
                own += share * gain;
            }
            order[held] = j;
            value[held++] = own;
        }
    }
    for (Py_ssize_t i = tops; i < held; i++) {
        int32_t x = before[order[i]], z = after[order[i]];
        if (x >= 0)
            PREFETCH(a + x);
        if (z >= 0)
            PREFETCH(a + z);
    }
    for (Py_ssize_t i = 0; i < held; i++) {
        Py_ssize_t c = order[i];
        int32_t x = before[c], z = after[c];
        if (x < 0 && z < 0)
            continue;
        double left = x >= 0 ? a[x] : 0.0, right = z >= 0 ? a[z] : 0.0;
        double near = right > left ? right : left; /* Python's max(left, right) */
        value[i] = value[i] + neighbour * near;
    }
#undef INSIDE
    final = PyDict_New();
    if (!final)
        goto done;
    for (Py_ssize_t i = 0; i < held; i++) {
        PyObject *k = PyLong_FromSsize_t(order[i]), *v = k ? PyFloat_FromDouble(value[i]) : NULL;
        int failed = !v || PyDict_SetItem(final, k, v) < 0;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (failed) {
            Py_CLEAR(final);
            goto done;
        }
    }
done:
    PyMem_Free(order);
    PyMem_Free(value);
    PyMem_Free(met.slot);
    PyMem_Free(met.at);
    Py_XDECREF(top);
    if (have_allowed)
        PyBuffer_Release(&allowed);
    PyBuffer_Release(&acc);
    PyBuffer_Release(&prev);
    PyBuffer_Release(&next);
    PyBuffer_Release(&sessions);
    PyBuffer_Release(&kinds);
    return final;
}

PyDoc_STRVAR(session_sums_doc,
"session_sums(top, sessions, kinds, observation, info, c1, c2, lens)\n--\n\n"
"The session field's BM25 score of each session an observation among the top\n"
"(slot, score) pairs belongs to, as a dict session -> score; {} when every score is 0.\n"
"sessions (int32, -1: none) and kinds (int8) are per slot; info is (kp1, tfs) per\n"
"query word, in the order summed, tfs a dict {session: tf} or an int64 array of tf by\n"
"session (a session past its end holds none); lens the sessions' lengths. A\n"
"session's score sums kp1 * tf / (tf + c1 + c2 * lens[session]) over the words it\n"
"holds.");

static PyObject *
session_sums(PyObject *self, PyObject *args)
{
    PyObject *top_obj, *info_obj, *lens;
    Py_buffer sessions, kinds;
    int observation;
    double c1, c2;
    if (!PyArg_ParseTuple(args, "Oy*y*iOddO!", &top_obj, &sessions, &kinds, &observation,
                          &info_obj, &c1, &c2, &PyList_Type, &lens))
        return NULL;
    PyObject *top = NULL, *info = NULL, *out = NULL;
    Py_ssize_t *wanted = NULL;
    Py_buffer *arrays = NULL; /* per word: its array by session, or .obj NULL for a dict */
    Py_ssize_t n_arrays = 0;
    Py_ssize_t size = kinds.len;
    if (sessions.len != 4 * size) {
        PyErr_SetString(PyExc_ValueError, "session_sums: sessions and kinds must cover the same slots");
        goto done;
    }
    top = PySequence_Fast(top_obj, "session_sums: top must be a sequence");
    info = top ? PySequence_Fast(info_obj, "session_sums: info must be a sequence") : NULL;
    if (!info)
        goto done;
    const int32_t *in_session = sessions.buf;
    const signed char *kind = kinds.buf;
    Py_ssize_t n_top = PySequence_Fast_GET_SIZE(top), n_info = PySequence_Fast_GET_SIZE(info);
    Py_ssize_t n_lens = PyList_GET_SIZE(lens), found = 0;
    wanted = PyMem_Malloc((size_t)(n_top ? n_top : 1) * sizeof(Py_ssize_t));
    if (!wanted) {
        PyErr_NoMemory();
        goto done;
    }
    /* The slots lie far apart: their columns asked for all at once (as around()). */
    for (Py_ssize_t i = 0; i < n_top; i++) {
        Py_ssize_t slot = hinted_top_slot(PySequence_Fast_GET_ITEM(top, i), size);
        if (slot >= 0) {
            PREFETCH(in_session + slot);
            PREFETCH(kind + slot);
        }
    }
    for (Py_ssize_t i = 0; i < n_top; i++) {
        Py_ssize_t slot;
        if (top_pair(PySequence_Fast_GET_ITEM(top, i), "session_sums", &slot, NULL) < 0)
            goto done;
        if (slot < 0 || slot >= size) {
            PyErr_Format(PyExc_ValueError, "session_sums: slot %zd is outside the index", slot);
            goto done;
        }
        Py_ssize_t s = in_session[slot];
        if (s < 0 || kind[slot] != observation)
            continue;
        if (s >= n_lens) {
            PyErr_Format(PyExc_ValueError, "session_sums: session %zd is outside the index", s);
            goto done;
        }
        int seen = 0;
        for (Py_ssize_t j = 0; j < found && !seen; j++)
            seen = wanted[j] == s;
        if (!seen)
            wanted[found++] = s;
    }
    arrays = PyMem_Calloc((size_t)(n_info ? n_info : 1), sizeof(Py_buffer));
    if (!arrays) {
        PyErr_NoMemory();
        goto done;
    }
    for (; n_arrays < n_info; n_arrays++) {
        PyObject *term = PySequence_Fast_GET_ITEM(info, n_arrays);
        if (!PyTuple_Check(term) || PyTuple_GET_SIZE(term) != 2) {
            PyErr_SetString(PyExc_TypeError, "session_sums: info holds (kp1, tfs) pairs");
            goto done;
        }
        PyObject *tfs = PyTuple_GET_ITEM(term, 1);
        if (PyDict_Check(tfs))
            continue;
        if (PyObject_GetBuffer(tfs, &arrays[n_arrays], PyBUF_SIMPLE) < 0) {
            PyErr_SetString(PyExc_TypeError,
                            "session_sums: info holds (kp1, dict or int64 array) pairs");
            goto done;
        }
        if (arrays[n_arrays].len % 8) {
            n_arrays++; /* held: released below */
            PyErr_SetString(PyExc_ValueError, "session_sums: an array of tf must be int64");
            goto done;
        }
    }
    for (Py_ssize_t j = 0; j < found; j++) {
        PREFETCH(PyList_GET_ITEM(lens, wanted[j]));
        for (Py_ssize_t i = 0; i < n_arrays; i++)
            if (arrays[i].obj != NULL && wanted[j] < arrays[i].len / 8)
                PREFETCH((const int64_t *)arrays[i].buf + wanted[j]);
    }
    out = PyDict_New();
    if (!out)
        goto done;
    int any = 0;
    for (Py_ssize_t j = 0; j < found; j++) {
        double value = 0.0, length = PyFloat_AsDouble(PyList_GET_ITEM(lens, wanted[j]));
        if (length == -1.0 && PyErr_Occurred())
            goto fail;
        PyObject *key = PyLong_FromSsize_t(wanted[j]);
        if (!key)
            goto fail;
        for (Py_ssize_t i = 0; i < n_info; i++) {
            PyObject *term = PySequence_Fast_GET_ITEM(info, i);
            double kp1 = PyFloat_AsDouble(PyTuple_GET_ITEM(term, 0)), tf;
            if (arrays[i].obj != NULL) {
                const int64_t *by_session = arrays[i].buf;
                tf = wanted[j] < arrays[i].len / 8 ? (double)by_session[wanted[j]] : 0.0;
            } else {
                PyObject *held = PyDict_GetItemWithError(PyTuple_GET_ITEM(term, 1), key);
                tf = held ? PyFloat_AsDouble(held) : 0.0;
            }
            if (PyErr_Occurred()) {
                Py_DECREF(key);
                goto fail;
            }
            if (tf != 0.0)
                value += kp1 * tf / (tf + c1 + c2 * length);
        }
        any |= value != 0.0;
        PyObject *v = PyFloat_FromDouble(value);
        int failed = !v || PyDict_SetItem(out, key, v) < 0;
        Py_XDECREF(v);
        Py_DECREF(key);
        if (failed)
            goto fail;
    }
    if (!any)
        PyDict_Clear(out);
    goto done;
fail:
    Py_CLEAR(out);
done:
    for (Py_ssize_t i = 0; i < n_arrays; i++)
        if (arrays[i].obj != NULL)
            PyBuffer_Release(&arrays[i]);
    PyMem_Free(arrays);
    PyMem_Free(wanted);
    Py_XDECREF(top);
    Py_XDECREF(info);
    PyBuffer_Release(&sessions);
    PyBuffer_Release(&kinds);
    return out;
}

PyDoc_STRVAR(rows_doc,
"rows(texts, start, offsets, slots)\n--\n\n"
"The saved rows ``slots`` names as str (UTF-8, surrogates passed through): row r is\n"
"texts[start + offsets[r]:start + offsets[r + 1]], offsets int64. A row outside the\n"
"texts (a damaged file) raises ValueError.");

static PyObject *
rows(PyObject *self, PyObject *args)
{
    Py_buffer texts, offsets;
    Py_ssize_t start;
    PyObject *slots_obj;
    if (!PyArg_ParseTuple(args, "y*ny*O", &texts, &start, &offsets, &slots_obj))
        return NULL;
    PyObject *result = NULL, *slots = NULL;
    saved_rows saved;
    if (take_rows(&texts, start, &offsets, "rows", &saved) < 0)
        goto done;
    slots = PySequence_Fast(slots_obj, "rows: slots must be a sequence");
    if (!slots)
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(slots);
    prefetch_rows(&saved, slots, n);
    result = PyList_New(n);
    if (!result)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t first, last;
        if (slot_span(&saved, slots, i, "rows", &first, &last) < 0)
            goto fail;
        PyObject *text = PyUnicode_DecodeUTF8(saved.base + first, (Py_ssize_t)(last - first),
                                              "surrogatepass");
        if (!text)
            goto fail;
        PyList_SET_ITEM(result, i, text);
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_XDECREF(slots);
    PyBuffer_Release(&texts);
    PyBuffer_Release(&offsets);
    return result;
}

static PyMethodDef methods[] = {
    {"add_scaled", add_scaled, METH_VARARGS, add_scaled_doc},
    {"add_by_length", add_by_length, METH_VARARGS, add_by_length_doc},
    {"keep_where", keep_where, METH_VARARGS, keep_where_doc},
    {"best", best, METH_VARARGS, best_doc},
    {"sum_best", sum_best, METH_VARARGS, sum_best_doc},
    {"best_of", best_of, METH_VARARGS, best_of_doc},
    {"near_pairs", near_pairs, METH_VARARGS, near_pairs_doc},
    {"proximity", proximity, METH_VARARGS, proximity_doc},
    {"rows", rows, METH_VARARGS, rows_doc},
    {"around", around, METH_VARARGS, around_doc},
    {"session_sums", session_sums, METH_VARARGS, session_sums_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_scoring",
    "The recall index's scoring loops, compiled (see engine.py).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__scoring(void)
{
    return PyModule_Create(&module);
}
