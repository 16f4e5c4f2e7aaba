/*
 * C accelerator for the per-record loops of RecordBatch v2 (see _pure.py, its twin).
 *
 * decode_records(buf, pos, end, count, base_offset, base_timestamp, timestamp_override,
 *                record_type) -> list
 * consumer_records(records, lo, hi, cls, topic, partition, timestamp_type, leader_epoch) -> list
 * RecordWriter(batch_size_limit) with append(timestamp, key, value, headers=None)
 * ready(value) -> awaitable returning value at once
 *
 * The producer's fast path (producer/_fastpath.c) appends through the writer and makes its
 * `ready` answers through the C API this module exports as a capsule (_speedups.h).
 *
 * Behaviour must match _pure.py exactly (the tests compare them with hypothesis): the same
 * values in, the same objects or the same exception types out. Every read is checked against
 * the end of the record it belongs to before it happens; nothing is allocated from a length
 * or count before that length or count has been checked against the bytes left.
 */

#include "_speedups.h"

static PyObject *CorruptRecordError; /* owned: kafka_async.errors.CorruptRecordError */

#define MIN_RECORD_SIZE 7
#define HEADER_SIZE 61

/* ------------------------------------------------------------------------------------------
 * Varints
 * ---------------------------------------------------------------------------------------- */

/* Zigzag varint of at most 5 bytes whose raw value fits 32 bits. 0 on error (no exception
 * set; the caller raises CorruptRecordError). */
static inline int
read_varint32(const unsigned char **pp, const unsigned char *end, int64_t *out)
{
    const unsigned char *p = *pp;
    uint64_t raw = 0;
    int shift = 0;
    for (int i = 0; i < 5; i++) {
        if (p >= end)
            return 0;
        unsigned char b = *p++;
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            if (raw >> 32)
                return 0;
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            *pp = p;
            return 1;
        }
        shift += 7;
    }
    return 0;
}

/* Zigzag varlong of at most 10 bytes whose raw value fits 64 bits. */
static inline int
read_varint64(const unsigned char **pp, const unsigned char *end, int64_t *out)
{
    const unsigned char *p = *pp;
    uint64_t raw = 0;
    int shift = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= end)
            return 0;
        unsigned char b = *p++;
        if (i == 9 && (b & 0xFE))
            return 0; /* the tenth byte may only carry bit 63 */
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            *pp = p;
            return 1;
        }
        shift += 7;
    }
    return 0;
}

static inline uint64_t
zigzag(int64_t n)
{
    return ((uint64_t)n << 1) ^ (uint64_t)(n >> 63);
}

static inline Py_ssize_t
varint_size(uint64_t raw)
{
    Py_ssize_t n = 1;
    while (raw > 0x7F) {
        raw >>= 7;
        n++;
    }
    return n;
}

static inline unsigned char *
write_varint(unsigned char *p, uint64_t raw)
{
    while (raw > 0x7F) {
        *p++ = (unsigned char)((raw & 0x7F) | 0x80);
        raw >>= 7;
    }
    *p++ = (unsigned char)raw;
    return p;
}

/* ------------------------------------------------------------------------------------------
 * Decoding
 * ---------------------------------------------------------------------------------------- */

static PyObject *
corrupt(const char *msg)
{
    PyErr_SetString(CorruptRecordError, msg);
    return NULL;
}

/* a + b as a Python int, exact even when int64 overflows (Python ints do not). */
static PyObject *
add_int64(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return PyLong_FromLongLong(r);
    PyObject *pa = PyLong_FromLongLong(a);
    if (pa == NULL)
        return NULL;
    PyObject *pb = PyLong_FromLongLong(b);
    if (pb == NULL) {
        Py_DECREF(pa);
        return NULL;
    }
    PyObject *sum = PyNumber_Add(pa, pb);
    Py_DECREF(pa);
    Py_DECREF(pb);
    return sum;
}

/* Headers of one record: a tuple of (str, bytes | None) tuples. */
static PyObject *
read_headers(const unsigned char **pp, const unsigned char *rec_end)
{
    const unsigned char *p = *pp;
    int64_t count;
    if (!read_varint32(&p, rec_end, &count))
        return corrupt("record header count is truncated or too long");
    if (count < 0 || count * 2 > rec_end - p)
        return corrupt("record header count does not fit in the record");
    PyObject *out = PyTuple_New((Py_ssize_t)count);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        int64_t klen, vlen;
        if (!read_varint32(&p, rec_end, &klen) || klen < 0 || klen > rec_end - p) {
            Py_DECREF(out);
            return corrupt("record header key length is invalid");
        }
        PyObject *key = PyUnicode_DecodeUTF8((const char *)p, (Py_ssize_t)klen, NULL);
        if (key == NULL) {
            Py_DECREF(out);
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                return corrupt("record header key is not valid UTF-8");
            }
            return NULL;
        }
        p += klen;
        PyObject *val;
        if (!read_varint32(&p, rec_end, &vlen)) {
            Py_DECREF(key);
            Py_DECREF(out);
            return corrupt("record header value length is truncated or too long");
        }
        if (vlen >= 0) {
            if (vlen > rec_end - p) {
                Py_DECREF(key);
                Py_DECREF(out);
                return corrupt("record header value overruns the record");
            }
            val = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)vlen);
            if (val == NULL) {
                Py_DECREF(key);
                Py_DECREF(out);
                return NULL;
            }
            p += vlen;
        }
        else if (vlen == -1) {
            val = Py_NewRef(Py_None);
        }
        else {
            Py_DECREF(key);
            Py_DECREF(out);
            return corrupt("negative record header value length");
        }
        PyObject *pair = PyTuple_New(2);
        if (pair == NULL) {
            Py_DECREF(key);
            Py_DECREF(val);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(pair, 0, key);
        PyTuple_SET_ITEM(pair, 1, val);
        PyObject_GC_UnTrack(pair);
        PyTuple_SET_ITEM(out, i, pair);
    }
    PyObject_GC_UnTrack(out);
    *pp = p;
    return out;
}

/* Nullable bytes field (key or value) of length `len` at *pp; NULL with an exception set on
 * error. */
static PyObject *
read_nullable_bytes(const unsigned char **pp, const unsigned char *rec_end, int64_t len,
                    const char *overrun_msg, const char *negative_msg)
{
    if (len >= 0) {
        if (len > rec_end - *pp)
            return corrupt(overrun_msg);
        PyObject *b = PyBytes_FromStringAndSize((const char *)*pp, (Py_ssize_t)len);
        if (b != NULL)
            *pp += len;
        return b;
    }
    if (len == -1)
        return Py_NewRef(Py_None);
    return corrupt(negative_msg);
}

static PyObject *
decode_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "decode_records() takes exactly 8 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t endpos = PyLong_AsSsize_t(args[2]);
    if (endpos == -1 && PyErr_Occurred())
        return NULL;
    long long count = PyLong_AsLongLong(args[3]);
    if (count == -1 && PyErr_Occurred())
        return NULL;
    long long base_offset = PyLong_AsLongLong(args[4]);
    if (base_offset == -1 && PyErr_Occurred())
        return NULL;
    long long base_ts = PyLong_AsLongLong(args[5]);
    if (base_ts == -1 && PyErr_Occurred())
        return NULL;
    PyObject *override = NULL; /* borrowed */
    if (args[6] != Py_None) {
        if (!PyLong_Check(args[6])) {
            PyErr_SetString(PyExc_TypeError, "timestamp_override must be an int or None");
            return NULL;
        }
        override = args[6];
    }
    PyObject *rtype_obj = args[7];
    if (!PyType_Check(rtype_obj) ||
        !PyType_IsSubtype((PyTypeObject *)rtype_obj, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "record_type must be a tuple subclass");
        return NULL;
    }
    PyTypeObject *rtype = (PyTypeObject *)rtype_obj;

    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (pos < 0 || endpos < pos || endpos > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "pos/end lie outside the buffer");
        return NULL;
    }
    if (count < 0 || count > (endpos - pos) / MIN_RECORD_SIZE) {
        PyBuffer_Release(&view);
        PyErr_Format(CorruptRecordError, "record count %lld does not fit in %zd bytes", count,
                     endpos - pos);
        return NULL;
    }
    const unsigned char *base = (const unsigned char *)view.buf;
    const unsigned char *p = base + pos;
    const unsigned char *end = base + endpos;

    PyObject *out = PyList_New((Py_ssize_t)count);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    PyObject *no_headers = PyTuple_New(0);
    if (no_headers == NULL)
        goto error;

    /* Offset deltas increase within a batch (compaction leaves gaps, never reorders). */
    int64_t prev_delta = -1;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        int64_t length, ts_delta, off_delta, klen, vlen;
        if (!read_varint32(&p, end, &length)) {
            corrupt("record length is truncated or too long");
            goto error;
        }
        if (length < MIN_RECORD_SIZE - 1 || length > end - p) {
            corrupt("record length overruns the batch");
            goto error;
        }
        const unsigned char *rec_end = p + length;
        p++; /* attributes: unused in v2 */
        if (!read_varint64(&p, rec_end, &ts_delta)) {
            corrupt("record timestamp delta is truncated or too long");
            goto error;
        }
        if (!read_varint32(&p, rec_end, &off_delta)) {
            corrupt("record offset delta is truncated or too long");
            goto error;
        }
        if (off_delta <= prev_delta) {
            corrupt("record offset deltas do not increase");
            goto error;
        }
        prev_delta = off_delta;
        if (!read_varint32(&p, rec_end, &klen)) {
            corrupt("record key length is truncated or too long");
            goto error;
        }
        PyObject *key = read_nullable_bytes(&p, rec_end, klen, "record key overruns the record",
                                            "negative record key length");
        if (key == NULL)
            goto error;
        if (!read_varint32(&p, rec_end, &vlen)) {
            Py_DECREF(key);
            corrupt("record value length is truncated or too long");
            goto error;
        }
        PyObject *value = read_nullable_bytes(
            &p, rec_end, vlen, "record value overruns the record", "negative record value length");
        if (value == NULL) {
            Py_DECREF(key);
            goto error;
        }
        PyObject *headers;
        if (p < rec_end && *p == 0) {
            headers = Py_NewRef(no_headers);
            p++;
        }
        else {
            headers = read_headers(&p, rec_end);
            if (headers == NULL) {
                Py_DECREF(key);
                Py_DECREF(value);
                goto error;
            }
        }
        if (p != rec_end) {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            corrupt("record length disagrees with its contents");
            goto error;
        }
        PyObject *offset = add_int64(base_offset, off_delta);
        PyObject *ts = override != NULL ? Py_NewRef(override) : add_int64(base_ts, ts_delta);
        if (offset == NULL || ts == NULL) {
            Py_XDECREF(offset);
            Py_XDECREF(ts);
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            goto error;
        }
        PyObject *rec = rtype->tp_alloc(rtype, 5);
        if (rec == NULL) {
            Py_DECREF(offset);
            Py_DECREF(ts);
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            goto error;
        }
        PyTuple_SET_ITEM(rec, 0, offset);
        PyTuple_SET_ITEM(rec, 1, ts);
        PyTuple_SET_ITEM(rec, 2, key);
        PyTuple_SET_ITEM(rec, 3, value);
        PyTuple_SET_ITEM(rec, 4, headers);
        /* Every item is an int, bytes, None or a tuple of str/bytes/None: no reference
         * cycle can pass through a record. Untracking now spares the cyclic GC from scanning
         * each record on every young-generation collection (CPython would untrack plain
         * tuples like these itself, but only after scanning them once). */
        if (PyObject_GC_IsTracked(rec))
            PyObject_GC_UnTrack(rec);
        PyList_SET_ITEM(out, i, rec);
    }
    if (p != end) {
        PyErr_Format(CorruptRecordError, "record count %lld leaves %zd bytes unread in the batch",
                     count, (Py_ssize_t)(end - p));
        goto error;
    }
    Py_DECREF(no_headers);
    PyBuffer_Release(&view);
    return out;

error:
    /* Unfilled list slots are NULL, which list deallocation skips. */
    Py_XDECREF(no_headers);
    Py_DECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Consumer records
 * ---------------------------------------------------------------------------------------- */
/* The fields of the consumer's record class, in constructor order (a
 * `dataclass(slots=True)` whose fields are exactly these). */
#define N_CR_FIELDS 11
static SlotLayout cr_layout = {
    "record", N_CR_FIELDS,
    {"topic", "partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers",
     "leader_epoch", "serialized_key_size", "serialized_value_size"},
};

/* consumer_records(records, lo, hi, cls, topic, partition, timestamp_type, leader_epoch):
 * records[lo:hi] (Record tuples) as instances of `cls`, headers as lists. */
static PyObject *
consumer_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "consumer_records() takes exactly 8 arguments");
        return NULL;
    }
    PyObject *recs = args[0];
    if (!PyList_Check(recs)) {
        PyErr_SetString(PyExc_TypeError, "records must be a list");
        return NULL;
    }
    Py_ssize_t lo = PyLong_AsSsize_t(args[1]);
    if (lo == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t hi = PyLong_AsSsize_t(args[2]);
    if (hi == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(recs);
    if (lo < 0 || hi < lo) {
        PyErr_SetString(PyExc_ValueError, "need 0 <= lo <= hi");
        return NULL;
    }
    if (hi > n)
        hi = n;
    if (lo > hi)
        lo = hi;
    if (!PyType_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "cls must be a type");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[3];
    if (slot_layout(&cr_layout, cls) < 0)
        return NULL;
    PyObject *shared[4] = {args[4], args[5], args[6], args[7]}; /* borrowed */

    PyObject *out = PyList_New(hi - lo);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = lo; i < hi; i++) {
        PyObject *r = PyList_GET_ITEM(recs, i);
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 5) {
            PyErr_SetString(PyExc_TypeError, "records must be Record tuples");
            goto error;
        }
        PyObject *key = PyTuple_GET_ITEM(r, 2);
        PyObject *value = PyTuple_GET_ITEM(r, 3);
        PyObject *hdrs = PyTuple_GET_ITEM(r, 4);
        PyObject *headers = PySequence_List(hdrs);
        if (headers == NULL)
            goto error;
        PyObject *ksize = size_of(key);
        PyObject *vsize = ksize == NULL ? NULL : size_of(value);
        if (vsize == NULL) {
            Py_XDECREF(ksize);
            Py_DECREF(headers);
            goto error;
        }
        PyObject *obj = cls->tp_alloc(cls, 0);
        if (obj == NULL) {
            Py_DECREF(ksize);
            Py_DECREF(vsize);
            Py_DECREF(headers);
            goto error;
        }
        PyObject *vals[N_CR_FIELDS] = {
            Py_NewRef(shared[0]), Py_NewRef(shared[1]), Py_NewRef(PyTuple_GET_ITEM(r, 0)),
            Py_NewRef(PyTuple_GET_ITEM(r, 1)), Py_NewRef(shared[2]), Py_NewRef(key),
            Py_NewRef(value), headers, Py_NewRef(shared[3]), ksize, vsize,
        };
        for (int f = 0; f < N_CR_FIELDS; f++)
            SLOT(obj, cr_layout, f) = vals[f];
        /* Every field is an int, str, bytes or None, or the headers list of (str, bytes |
         * None) tuples: nothing here leads back to the record, so the cyclic GC need not
         * track it. Millions of tracked records that outlive a young collection would
         * otherwise be promoted and trigger repeated full collections (about half the
         * consumer's CPU time). Only an application storing a cycle through a record
         * (record.headers.append(record)) could make one the GC would then not find. */
        if (PyObject_GC_IsTracked(headers))
            PyObject_GC_UnTrack(headers);
        if (PyObject_GC_IsTracked(obj))
            PyObject_GC_UnTrack(obj);
        PyList_SET_ITEM(out, i - lo, obj);
    }
    return out;

error:
    Py_DECREF(out);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * RecordWriter
 * ---------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *buf; /* bytearray, owned */
    long long limit;
    long long count;
    long long base_ts;
    long long max_ts;
} RecordWriter;

static int
writer_init(RecordWriter *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"batch_size_limit", NULL};
    PyObject *limit_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:RecordWriter", kwlist, &limit_obj))
        return -1;
    if (!PyLong_CheckExact(limit_obj)) {
        PyErr_SetString(PyExc_TypeError, "batch_size_limit must be an int");
        return -1;
    }
    int overflow;
    long long limit = PyLong_AsLongLongAndOverflow(limit_obj, &overflow);
    if (limit == -1 && PyErr_Occurred())
        return -1;
    if (overflow)
        limit = overflow > 0 ? LLONG_MAX : LLONG_MIN;
    PyObject *buf = PyByteArray_FromStringAndSize(NULL, HEADER_SIZE);
    if (buf == NULL)
        return -1;
    memset(PyByteArray_AS_STRING(buf), 0, HEADER_SIZE);
    Py_XSETREF(self->buf, buf);
    self->limit = limit;
    self->count = 0;
    self->base_ts = -1;
    self->max_ts = -1;
    return 0;
}

static void
writer_dealloc(RecordWriter *self)
{
    Py_XDECREF(self->buf);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A key, value or header value: NULL (None) or an acquired buffer. */
typedef struct {
    int present;
    Py_buffer view;
} OptBuffer;

static int
get_opt_buffer(PyObject *obj, OptBuffer *out, const char *what)
{
    out->present = 0;
    if (obj == Py_None)
        return 0;
    if (PyObject_GetBuffer(obj, &out->view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "record %s must be bytes-like or None, not %.100s",
                         what, Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    out->present = 1;
    return 0;
}

static void
release_opt_buffer(OptBuffer *b)
{
    if (b->present) {
        PyBuffer_Release(&b->view);
        b->present = 0;
    }
}

typedef struct {
    const char *key;
    Py_ssize_t key_len;
    OptBuffer value;
} HeaderSlot;

static PyObject *writer_append_record(RecordWriter *self, long long ts, PyObject *key_obj,
                                      PyObject *value_obj, PyObject *headers_obj);

static PyObject *
writer_append(RecordWriter *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *names[] = {"timestamp", "key", "value", "headers"};
    PyObject *argv[4] = {NULL, NULL, NULL, Py_None};
    if (nargs > 4) {
        PyErr_SetString(PyExc_TypeError, "append() takes at most 4 arguments");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        argv[i] = args[i];
    if (kwnames != NULL) {
        Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t k = 0; k < nkw; k++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, k);
            int j;
            for (j = 0; j < 4; j++) {
                if (PyUnicode_CompareWithASCIIString(name, names[j]) == 0)
                    break;
            }
            if (j == 4) {
                PyErr_Format(PyExc_TypeError, "append() got an unexpected keyword argument %R",
                             name);
                return NULL;
            }
            if (j < nargs) {
                PyErr_Format(PyExc_TypeError, "append() got multiple values for argument %R",
                             name);
                return NULL;
            }
            argv[j] = args[nargs + k];
        }
    }
    for (int j = 0; j < 3; j++) {
        if (argv[j] == NULL) {
            PyErr_Format(PyExc_TypeError, "append() missing required argument '%s'", names[j]);
            return NULL;
        }
    }
    if (argv[0] == Py_None)
        return writer_append_record(self, now_ms(), argv[1], argv[2], argv[3]);
    long long ts;
    if (timestamp_arg(argv[0], &ts) < 0)
        return NULL;
    return writer_append_record(self, ts, argv[1], argv[2], argv[3]);
}

/* RecordWriter.append after argument parsing: the offset delta, None when full, NULL on error. */
static PyObject *
writer_append_record(RecordWriter *self, long long ts, PyObject *key_obj, PyObject *value_obj,
                     PyObject *headers_obj)
{
    OptBuffer key, value;
    if (get_opt_buffer(key_obj, &key, "key") < 0)
        return NULL;
    if (get_opt_buffer(value_obj, &value, "value") < 0) {
        release_opt_buffer(&key);
        return NULL;
    }
    if (self->count >= INT32_MAX) {
        release_opt_buffer(&key);
        release_opt_buffer(&value);
        Py_RETURN_NONE;
    }

    /* Headers are gathered (running any Python code an iterable needs) before this writer's
     * state is read, so a re-entrant append cannot invalidate what is computed below. */
    PyObject *hseq = NULL;
    HeaderSlot *hslots = NULL;
    Py_ssize_t nheaders = 0, hfilled = 0;
    Py_ssize_t hbytes = 0;
    PyObject *result = NULL;
    if (headers_obj != Py_None) {
        hseq = PySequence_Fast(headers_obj, "record headers must be an iterable of pairs");
        if (hseq == NULL)
            goto done;
        nheaders = PySequence_Fast_GET_SIZE(hseq);
        if (nheaders > 0) {
            hslots = PyMem_Calloc((size_t)nheaders, sizeof(HeaderSlot));
            if (hslots == NULL) {
                PyErr_NoMemory();
                goto done;
            }
        }
        for (Py_ssize_t i = 0; i < nheaders; i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(hseq, i);
            PyObject *hk, *hv;
            if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2) {
                hk = PyTuple_GET_ITEM(item, 0);
                hv = PyTuple_GET_ITEM(item, 1);
            }
            else if (PyList_Check(item) && PyList_GET_SIZE(item) == 2) {
                hk = PyList_GET_ITEM(item, 0);
                hv = PyList_GET_ITEM(item, 1);
            }
            else {
                PyErr_SetString(PyExc_TypeError,
                                "record headers must be (str, bytes | None) pairs");
                goto done;
            }
            if (!PyUnicode_Check(hk)) {
                PyErr_SetString(PyExc_TypeError, "record header keys must be str");
                goto done;
            }
            /* The UTF-8 form is cached inside the str, which hseq keeps alive. */
            hslots[i].key = PyUnicode_AsUTF8AndSize(hk, &hslots[i].key_len);
            if (hslots[i].key == NULL)
                goto done;
            if (get_opt_buffer(hv, &hslots[i].value, "header value") < 0)
                goto done;
            hfilled = i + 1;
            hbytes += varint_size(zigzag(hslots[i].key_len)) + hslots[i].key_len;
            if (hslots[i].value.present)
                hbytes += varint_size(zigzag(hslots[i].value.view.len)) +
                          hslots[i].value.view.len;
            else
                hbytes += 1;
        }
    }

    long long count = self->count;
    long long base_ts = count ? self->base_ts : ts;
    uint64_t zts = zigzag(ts - base_ts);
    uint64_t zoff = zigzag(count);
    Py_ssize_t body = 1 + varint_size(zts) + varint_size(zoff);
    body += key.present ? varint_size(zigzag(key.view.len)) + key.view.len : 1;
    body += value.present ? varint_size(zigzag(value.view.len)) + value.view.len : 1;
    body += varint_size(zigzag(nheaders)) + hbytes;
    Py_ssize_t total = varint_size(zigzag(body)) + body;
    Py_ssize_t old = PyByteArray_GET_SIZE(self->buf);
    if (count && (long long)old + (long long)total > self->limit) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (PyByteArray_Resize(self->buf, old + total) < 0)
        goto done;
    unsigned char *p = (unsigned char *)PyByteArray_AS_STRING(self->buf) + old;
    p = write_varint(p, zigzag(body));
    *p++ = 0; /* attributes */
    p = write_varint(p, zts);
    p = write_varint(p, zoff);
    if (key.present) {
        p = write_varint(p, zigzag(key.view.len));
        memcpy(p, key.view.buf, (size_t)key.view.len);
        p += key.view.len;
    }
    else {
        *p++ = 1; /* zigzag(-1) */
    }
    if (value.present) {
        p = write_varint(p, zigzag(value.view.len));
        memcpy(p, value.view.buf, (size_t)value.view.len);
        p += value.view.len;
    }
    else {
        *p++ = 1;
    }
    p = write_varint(p, zigzag(nheaders));
    for (Py_ssize_t i = 0; i < nheaders; i++) {
        p = write_varint(p, zigzag(hslots[i].key_len));
        memcpy(p, hslots[i].key, (size_t)hslots[i].key_len);
        p += hslots[i].key_len;
        if (hslots[i].value.present) {
            p = write_varint(p, zigzag(hslots[i].value.view.len));
            memcpy(p, hslots[i].value.view.buf, (size_t)hslots[i].value.view.len);
            p += hslots[i].value.view.len;
        }
        else {
            *p++ = 1;
        }
    }
    if (!count)
        self->base_ts = ts;
    if (ts > self->max_ts)
        self->max_ts = ts;
    self->count = count + 1;
    result = PyLong_FromLongLong(count);

done:
    for (Py_ssize_t i = 0; i < hfilled; i++)
        release_opt_buffer(&hslots[i].value);
    PyMem_Free(hslots);
    Py_XDECREF(hseq);
    release_opt_buffer(&key);
    release_opt_buffer(&value);
    return result;
}

static PyObject *
writer_get_buffer(RecordWriter *self, void *closure)
{
    return Py_NewRef(self->buf);
}

static PyObject *
writer_get_record_count(RecordWriter *self, void *closure)
{
    return PyLong_FromLongLong(self->count);
}

static PyObject *
writer_get_size(RecordWriter *self, void *closure)
{
    return PyLong_FromSsize_t(PyByteArray_GET_SIZE(self->buf));
}

static PyObject *
writer_get_limit(RecordWriter *self, void *closure)
{
    return PyLong_FromLongLong(self->limit);
}

static PyObject *
writer_get_base_ts(RecordWriter *self, void *closure)
{
    return PyLong_FromLongLong(self->base_ts);
}

static PyObject *
writer_get_max_ts(RecordWriter *self, void *closure)
{
    return PyLong_FromLongLong(self->max_ts);
}

static PyGetSetDef writer_getset[] = {
    {"buffer", (getter)writer_get_buffer, NULL, "Header gap followed by the records.", NULL},
    {"record_count", (getter)writer_get_record_count, NULL, NULL, NULL},
    {"size_in_bytes", (getter)writer_get_size, NULL, NULL, NULL},
    {"batch_size_limit", (getter)writer_get_limit, NULL, NULL, NULL},
    {"base_timestamp", (getter)writer_get_base_ts, NULL, NULL, NULL},
    {"max_timestamp", (getter)writer_get_max_ts, NULL, NULL, NULL},
    {NULL},
};

static PyMethodDef writer_methods[] = {
    {"append", (PyCFunction)(void (*)(void))writer_append, METH_FASTCALL | METH_KEYWORDS,
     "append(timestamp, key, value, headers=None) -> offset delta, or None when full"},
    {NULL},
};

static PyObject *
writer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    RecordWriter *self = (RecordWriter *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->buf = NULL;
    self->count = 0;
    self->base_ts = -1;
    self->max_ts = -1;
    self->limit = 0;
    return (PyObject *)self;
}

/* Methods must not run on a writer whose __init__ never succeeded (buf is NULL). */
static PyObject *
writer_getattro(PyObject *self, PyObject *name)
{
    if (((RecordWriter *)self)->buf == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "RecordWriter.__init__ was not called");
        return NULL;
    }
    return PyObject_GenericGetAttr(self, name);
}

static PyTypeObject RecordWriterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafka_async.records._speedups.RecordWriter",
    .tp_basicsize = sizeof(RecordWriter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Appends records after a 61-byte gap kept for the batch header.",
    .tp_new = writer_new,
    .tp_init = (initproc)writer_init,
    .tp_dealloc = (destructor)writer_dealloc,
    .tp_getattro = writer_getattro,
    .tp_methods = writer_methods,
    .tp_getset = writer_getset,
};

/* ------------------------------------------------------------------------------------------
 * ready(value): an awaitable that is done already (twin: _pure.ready)
 * ---------------------------------------------------------------------------------------- */

/* `await ready(v)` returns v at once, without suspending: am_send answers PYGEN_RETURN, so
 * neither a coroutine nor a StopIteration is made. What `Consumer.__anext__` returns for a
 * record it already holds (one per record of `async for`). */
typedef struct {
    PyObject_HEAD
    PyObject *value;
} ReadyObject;

static void
ready_dealloc(ReadyObject *self)
{
    Py_XDECREF(self->value);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
ready_await(PyObject *self)
{
    return Py_NewRef(self);
}

static PySendResult
ready_send(PyObject *self, PyObject *arg, PyObject **result)
{
    *result = Py_NewRef(((ReadyObject *)self)->value);
    return PYGEN_RETURN;
}

static PyObject *
ready_next(PyObject *self)
{
    /* The iterator protocol's way of saying the same (a caller without am_send). */
    PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, ((ReadyObject *)self)->value);
    if (stop != NULL) {
        PyErr_SetObject(PyExc_StopIteration, stop);
        Py_DECREF(stop);
    }
    return NULL;
}

/* The coroutine protocol's methods, so that a Ready passes for a coroutine wherever one is
 * expected (asyncio.create_task, a task group's start_soon): send() finishes at once, throw()
 * raises what it is given, close() does nothing (there is nothing to clean up). */
static PyObject *
ready_send_method(PyObject *self, PyObject *arg)
{
    return ready_next(self);
}

static PyObject *
ready_throw(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "throw() takes 1 to 3 arguments");
        return NULL;
    }
    PyObject *typ = args[0];
    if (PyExceptionInstance_Check(typ)) {
        PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
        return NULL;
    }
    if (PyExceptionClass_Check(typ)) {
        PyObject *val = nargs > 1 && args[1] != Py_None ? args[1] : NULL;
        PyObject *exc = val == NULL ? PyObject_CallNoArgs(typ)
                        : PyExceptionInstance_Check(val) ? Py_NewRef(val)
                                                         : PyObject_CallOneArg(typ, val);
        if (exc != NULL) {
            PyErr_SetObject(typ, exc);
            Py_DECREF(exc);
        }
        return NULL;
    }
    PyErr_SetString(PyExc_TypeError, "exceptions must be classes or instances deriving from "
                                     "BaseException");
    return NULL;
}

static PyObject *
ready_close(PyObject *self, PyObject *unused)
{
    Py_RETURN_NONE;
}

static PyMethodDef ready_methods[] = {
    {"send", (PyCFunction)ready_send_method, METH_O, "Finish at once with the value."},
    {"throw", (PyCFunction)(void (*)(void))ready_throw, METH_FASTCALL, "Raise the exception."},
    {"close", (PyCFunction)ready_close, METH_NOARGS, "Nothing to close."},
    {NULL},
};

static PyAsyncMethods ready_as_async = {
    .am_await = ready_await,
    .am_send = ready_send,
};

static PyTypeObject ReadyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafka_async.records._speedups.Ready",
    .tp_basicsize = sizeof(ReadyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An awaitable that is done already: awaiting it returns its value.",
    .tp_dealloc = (destructor)ready_dealloc,
    .tp_as_async = &ready_as_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = ready_next,
    .tp_methods = ready_methods,
};

static PyObject *
ready(PyObject *module, PyObject *value)
{
    ReadyObject *self = PyObject_New(ReadyObject, &ReadyType);
    if (self == NULL)
        return NULL;
    self->value = Py_NewRef(value);
    return (PyObject *)self;
}

/* The C API for producer/_fastpath.c (see _speedups.h). */
static PyObject *
writer_append_api(PyObject *writer, long long ts, PyObject *key, PyObject *value,
                  PyObject *headers)
{
    return writer_append_record((RecordWriter *)writer, ts, key, value, headers);
}

static PyObject *
ready_api(PyObject *value)
{
    return ready(NULL, value);
}

static PyObject *
throw_api(PyObject *const *args, Py_ssize_t nargs)
{
    return ready_throw(NULL, args, nargs);
}

static RecordsCAPI records_capi = {
    .record_writer_type = &RecordWriterType,
    .writer_append = writer_append_api,
    .ready = ready_api,
    .throw_exception = throw_api,
};

static PyMethodDef module_methods[] = {
    {"decode_records", (PyCFunction)(void (*)(void))decode_records, METH_FASTCALL,
     "decode_records(buf, pos, end, count, base_offset, base_timestamp, timestamp_override, "
     "record_type) -> list"},
    {"consumer_records", (PyCFunction)(void (*)(void))consumer_records, METH_FASTCALL,
     "consumer_records(records, lo, hi, cls, topic, partition, timestamp_type, leader_epoch) "
     "-> list"},
    {"ready", (PyCFunction)ready, METH_O,
     "ready(value) -> an awaitable that is done already: awaiting it returns value"},
    {NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "kafka_async.records._speedups",
    .m_doc = "C loops for RecordBatch v2 records (twin of _pure.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&RecordWriterType) < 0 || PyType_Ready(&ReadyType) < 0)
        return NULL;
    PyObject *errors = PyImport_ImportModule("kafka_async.errors");
    if (errors == NULL)
        return NULL;
    PyObject *exc = PyObject_GetAttrString(errors, "CorruptRecordError");
    Py_DECREF(errors);
    if (exc == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&speedups_module);
    if (m == NULL) {
        Py_DECREF(exc);
        return NULL;
    }
    Py_XSETREF(CorruptRecordError, exc);
    PyObject *capi = PyCapsule_New(&records_capi, RECORDS_CAPI_NAME, NULL);
    if (capi == NULL || PyModule_AddObject(m, "_C_API", capi) < 0) {
        Py_XDECREF(capi);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "RecordWriter", (PyObject *)&RecordWriterType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
