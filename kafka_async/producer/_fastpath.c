/*
 * The producer's fast path in C (see _fastpath_pure.py and Producer.enqueue, its twins).
 *
 * append_record(batch, timestamp, key, value, headers, size, cls) -> cls | None
 * delivery_metadata(delivery, cls) -> cls | None
 * Enqueuer(producer, ...): Producer.enqueue's common case (the producer's instance attribute)
 * murmur2(data) -> int
 *
 * It reads fields of the producer's objects: the slots of ProducerBatch, Delivery and
 * PartitionState (SlotLayout, by name, checked once per class) and attributes of Producer,
 * Sender, ClusterClient and RecordAccumulator by string name. Every such name is listed once,
 * in fastpath.C_FIELDS; tests/producer/test_fastpath_fields.py checks that each exists on the
 * real objects and that this file reads no name missing there.
 *
 * The record writer and `ready` belong to the records layer: they are reached through the
 * C API of kafka_async.records._speedups (a capsule, see records/_speedups.h), which this
 * module needs (without it, the import fails and the producer uses its Python paths).
 *
 * Behaviour must match the Python twins exactly (the tests compare them with hypothesis).
 */

#include "_speedups.h"

/* The records accelerator's C API, from its capsule (set once, at import). */
static RecordsCAPI *records;

/* ------------------------------------------------------------------------------------------
 * Producer append: one record into a batch's writer, and its delivery handle
 * ---------------------------------------------------------------------------------------- */

/* The producer batch's fields that append_record reads and updates. */
enum { PB_WRITER, PB_CLOSED, PB_RECORD_COUNT, PB_RESERVED, N_PB_FIELDS };
static SlotLayout pb_layout = {
    "producer batch", N_PB_FIELDS, {"writer", "closed", "record_count", "reserved"},
};
/* The delivery handle's fields, in constructor order. */
enum { DL_BATCH, DL_DELTA, DL_TIMESTAMP, DL_KEY_SIZE, DL_VALUE_SIZE, N_DL_FIELDS };
static SlotLayout dl_layout = {
    "delivery", N_DL_FIELDS, {"_batch", "_delta", "_timestamp", "_key_size", "_value_size"},
};

/* append_record(batch, timestamp, key, value, headers, size, cls) -> cls | None
 *
 * The per-record step of Producer.enqueue (see _pure.append_record): append the record to
 * batch.writer and return cls(batch, delta, timestamp, key size, value size), after adding 1
 * to batch.record_count and `size` to batch.reserved. None, with nothing written or changed,
 * when the batch is closed, has no writer (settled) or is full. A None timestamp means now.
 * Every object the success path needs is allocated before the record is written, so an
 * error leaves the batch as it was. (Inside this file cls may be NULL: no handle is made and
 * True is returned for an appended record; Producer.produce's path.) */
static PyObject *append_record_impl(PyObject *batch, PyObject *ts_obj, PyObject *key,
                                    PyObject *value, PyObject *headers, PyObject *size,
                                    PyTypeObject *cls);

static PyObject *
append_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "append_record() takes exactly 7 arguments");
        return NULL;
    }
    if (!PyType_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError, "cls must be a type");
        return NULL;
    }
    return append_record_impl(args[0], args[1], args[2], args[3], args[4], args[5],
                              (PyTypeObject *)args[6]);
}

static PyObject *
append_record_impl(PyObject *batch, PyObject *ts_obj, PyObject *key, PyObject *value,
                   PyObject *headers, PyObject *size, PyTypeObject *cls)
{
    if (slot_layout(&pb_layout, Py_TYPE(batch)) < 0 ||
        (cls != NULL && slot_layout(&dl_layout, cls) < 0))
        return NULL;
    if (!PyLong_Check(size)) {
        PyErr_SetString(PyExc_TypeError, "size must be an int");
        return NULL;
    }
    PyObject *writer = SLOT(batch, pb_layout, PB_WRITER);
    PyObject *closed = SLOT(batch, pb_layout, PB_CLOSED);
    PyObject *count = SLOT(batch, pb_layout, PB_RECORD_COUNT);
    PyObject *reserved = SLOT(batch, pb_layout, PB_RESERVED);
    if (writer == NULL || closed == NULL || count == NULL || reserved == NULL) {
        PyErr_SetString(PyExc_AttributeError, "the batch is not initialised");
        return NULL;
    }
    if (closed != Py_False) {
        int is_closed = closed == Py_True ? 1 : PyObject_IsTrue(closed);
        if (is_closed < 0)
            return NULL;
        if (is_closed)
            Py_RETURN_NONE;
    }
    if (writer == Py_None)
        Py_RETURN_NONE;

    long long ts;
    if (ts_obj == Py_None) {
        ts = now_ms();
        ts_obj = PyLong_FromLongLong(ts);
        if (ts_obj == NULL)
            return NULL;
    }
    else {
        if (timestamp_arg(ts_obj, &ts) < 0)
            return NULL;
        Py_INCREF(ts_obj);
    }
    PyObject *new_count = NULL, *new_reserved = NULL, *ksize = NULL, *vsize = NULL;
    PyObject *obj = NULL, *delta = NULL;
    static PyObject *one = NULL;
    if (one == NULL && (one = PyLong_FromLong(1)) == NULL)
        goto error;
    if ((new_count = PyNumber_Add(count, one)) == NULL ||
        (new_reserved = PyNumber_Add(reserved, size)) == NULL ||
        (ksize = size_of(key)) == NULL || (vsize = size_of(value)) == NULL ||
        (obj = cls != NULL ? cls->tp_alloc(cls, 0) : Py_NewRef(Py_True)) == NULL)
        goto error;

    Py_INCREF(writer); /* the append may run Python code (a header iterable, a pure writer) */
    if (Py_IS_TYPE(writer, records->record_writer_type))
        delta = records->writer_append(writer, ts, key, value, headers);
    else
        delta = PyObject_CallMethod(writer, "append", "OOOO", ts_obj, key, value, headers);
    Py_DECREF(writer);
    if (delta == NULL)
        goto error;
    if (delta == Py_None) {
        Py_DECREF(obj);
        obj = delta; /* None: the batch is full */
        goto done;
    }
    Py_XSETREF(SLOT(batch, pb_layout, PB_RECORD_COUNT), new_count);
    Py_XSETREF(SLOT(batch, pb_layout, PB_RESERVED), new_reserved);
    new_count = new_reserved = NULL;
    if (cls == NULL) {
        /* No handle asked for (Producer.produce): True for "appended". */
        Py_DECREF(delta);
        Py_DECREF(ts_obj);
        Py_DECREF(ksize);
        Py_DECREF(vsize);
        return obj;
    }
    SLOT(obj, dl_layout, DL_BATCH) = Py_NewRef(batch);
    SLOT(obj, dl_layout, DL_DELTA) = delta;
    SLOT(obj, dl_layout, DL_TIMESTAMP) = ts_obj;
    SLOT(obj, dl_layout, DL_KEY_SIZE) = ksize;
    SLOT(obj, dl_layout, DL_VALUE_SIZE) = vsize;
    /* The handle refers to its batch and to ints only, so it cannot be part of a cycle: it
     * need not cost the cyclic GC anything while an application holds millions of them. */
    if (PyObject_GC_IsTracked(obj))
        PyObject_GC_UnTrack(obj);
    return obj;

error:
    Py_XDECREF(obj);
    obj = NULL;
done:
    Py_XDECREF(new_count);
    Py_XDECREF(new_reserved);
    Py_XDECREF(ksize);
    Py_XDECREF(vsize);
    Py_DECREF(ts_obj);
    return obj;
}

/* The producer batch's fields a settled delivery's metadata is read from. */
enum { PS_DONE, PS_ERROR, PS_TP, PS_BASE_OFFSET, PS_LOG_APPEND_TIME, N_PS_FIELDS };
static SlotLayout ps_layout = {
    "producer batch", N_PS_FIELDS, {"done", "error", "tp", "base_offset", "log_append_time"},
};

/* delivery_metadata(delivery, cls) -> cls | None
 *
 * The success path of Delivery.result() (see _pure.delivery_metadata): for a delivery whose
 * batch is settled without an error, cls(topic, partition, offset, timestamp, timestamp
 * type, key size, value size), with offset base_offset + delta (-1 when the base offset is
 * -1, acks=0) and the batch's log-append time when it has one (timestamp type 1), else the
 * record's own timestamp (type 0). None when the batch is not settled or failed: the caller
 * takes its slow path. cls is a tuple subclass without a __dict__ (a named tuple); the tuple
 * is made directly, without the class's __new__. */
static int
metadata_cls_ok(PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type) ||
        ((PyTypeObject *)cls)->tp_dictoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "cls must be a tuple subclass without a __dict__");
        return 0;
    }
    return 1;
}

static PyObject *delivery_metadata_impl(PyObject *delivery, PyTypeObject *cls);

static PyObject *
delivery_metadata(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "delivery_metadata() takes exactly 2 arguments");
        return NULL;
    }
    if (!metadata_cls_ok(args[1]))
        return NULL;
    return delivery_metadata_impl(args[0], (PyTypeObject *)args[1]);
}

static PyObject *
delivery_metadata_impl(PyObject *delivery, PyTypeObject *cls)
{
    if (slot_layout(&dl_layout, Py_TYPE(delivery)) < 0)
        return NULL;
    PyObject *batch = SLOT(delivery, dl_layout, DL_BATCH);
    if (batch == NULL) {
        PyErr_SetString(PyExc_AttributeError, "the delivery is not initialised");
        return NULL;
    }
    if (slot_layout(&ps_layout, Py_TYPE(batch)) < 0)
        return NULL;
    PyObject *done = SLOT(batch, ps_layout, PS_DONE);
    PyObject *error = SLOT(batch, ps_layout, PS_ERROR);
    PyObject *tp = SLOT(batch, ps_layout, PS_TP);
    PyObject *base = SLOT(batch, ps_layout, PS_BASE_OFFSET);
    PyObject *lat = SLOT(batch, ps_layout, PS_LOG_APPEND_TIME);
    PyObject *delta = SLOT(delivery, dl_layout, DL_DELTA);
    PyObject *ts = SLOT(delivery, dl_layout, DL_TIMESTAMP);
    PyObject *ksize = SLOT(delivery, dl_layout, DL_KEY_SIZE);
    PyObject *vsize = SLOT(delivery, dl_layout, DL_VALUE_SIZE);
    if (done == NULL || error == NULL || tp == NULL || base == NULL || lat == NULL ||
        delta == NULL || ts == NULL || ksize == NULL || vsize == NULL) {
        PyErr_SetString(PyExc_AttributeError, "the delivery or its batch is not initialised");
        return NULL;
    }
    if (done != Py_True || error != Py_None)
        Py_RETURN_NONE;
    if (!PyTuple_Check(tp) || PyTuple_GET_SIZE(tp) != 2) {
        PyErr_SetString(PyExc_TypeError, "the batch's tp must be a (topic, partition) tuple");
        return NULL;
    }
    if (!PyLong_Check(base) || !PyLong_Check(lat) || !PyLong_Check(delta)) {
        PyErr_SetString(PyExc_TypeError, "offsets and times must be ints");
        return NULL;
    }
    static PyObject *zero = NULL;
    if (zero == NULL && (zero = PyLong_FromLong(0)) == NULL)
        return NULL;
    PyObject *offset = NULL, *ts_type = NULL;
    int neg = PyObject_RichCompareBool(base, zero, Py_LT);
    if (neg < 0)
        return NULL;
    offset = neg ? PyLong_FromLong(-1) : PyNumber_Add(base, delta);
    if (offset == NULL)
        return NULL;
    int has_lat = PyObject_RichCompareBool(lat, zero, Py_GE);
    if (has_lat < 0 || (ts_type = PyLong_FromLong(has_lat ? 1 : 0)) == NULL) {
        Py_DECREF(offset);
        return NULL;
    }
    PyObject *obj = cls->tp_alloc(cls, 7);
    if (obj == NULL) {
        Py_DECREF(offset);
        Py_DECREF(ts_type);
        return NULL;
    }
    PyTuple_SET_ITEM(obj, 0, Py_NewRef(PyTuple_GET_ITEM(tp, 0)));
    PyTuple_SET_ITEM(obj, 1, Py_NewRef(PyTuple_GET_ITEM(tp, 1)));
    PyTuple_SET_ITEM(obj, 2, offset);
    PyTuple_SET_ITEM(obj, 3, Py_NewRef(has_lat ? lat : ts));
    PyTuple_SET_ITEM(obj, 4, ts_type);
    PyTuple_SET_ITEM(obj, 5, Py_NewRef(ksize));
    PyTuple_SET_ITEM(obj, 6, Py_NewRef(vsize));
    /* Like a tuple of atoms (CPython untracks those lazily): a str and ints cannot be part of
     * a cycle, so the cyclic GC need not visit the metadata. */
    if (PyUnicode_CheckExact(PyTuple_GET_ITEM(tp, 0)) &&
        PyLong_CheckExact(PyTuple_GET_ITEM(tp, 1)) && PyLong_CheckExact(PyTuple_GET_ITEM(obj, 3)) &&
        PyLong_CheckExact(ksize) && PyLong_CheckExact(vsize) && PyObject_GC_IsTracked(obj))
        PyObject_GC_UnTrack(obj);
    return obj;
}

/* ------------------------------------------------------------------------------------------
 * murmur2 (the Java client's Utils.murmur2; twin: producer.partitioner.murmur2_py)
 * ---------------------------------------------------------------------------------------- */

static PyObject *
murmur2(PyObject *module, PyObject *data)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const uint32_t m = 0x5bd1e995u;
    const unsigned char *p = (const unsigned char *)view.buf;
    /* Java hashes an int length: a key is far below 2 GiB (max_request_size). */
    uint32_t length = (uint32_t)view.len;
    uint32_t h = 0x9747b28cu ^ length;
    Py_ssize_t nwords = view.len >> 2;
    for (Py_ssize_t i = 0; i < nwords; i++, p += 4) {
        uint32_t k = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (view.len & 3) {
    case 3:
        h ^= (uint32_t)p[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)p[1] << 8;
        /* fall through */
    case 1:
        h ^= (uint32_t)p[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(h);
}

/* ------------------------------------------------------------------------------------------
 * Enqueuer: Producer.enqueue's common case in one call (twin: the Python method itself)
 * ---------------------------------------------------------------------------------------- */

/* A producer's `enqueue` when the accelerator is compiled: the instance attribute that shadows
 * the method. It does what Producer.enqueue does for the common record (bytes or None key and
 * value, no headers, no transaction, a topic whose partitions are cached, room in the buffer,
 * an open batch with room) and returns `ready(delivery)`, so the awaiting task neither makes
 * a coroutine nor suspends. Anything else goes to `slow(topic, value, key, partition,
 * timestamp_ms, headers)`, the Python body after serialization, with the partition it chose
 * (a sticky choice is made once). When the append opened work for the sender, it returns
 * `after_wakeup(delivery)` instead: the coroutine that gives the sender a turn.
 *
 * The producer's fixed parts (accumulator, topic cache, sticky state, serializers, partitioner)
 * are given at construction; what changes (running, sender, transaction, metadata snapshot,
 * buffer use) is read from the producer on every call. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *producer;     /* the Producer */
    PyObject *acc;          /* its RecordAccumulator */
    PyObject *topics;       /* dict: topic -> (partition states by id, ids, available ids) */
    PyObject *sticky;       /* dict: topic -> [partition, bytes since chosen], or None */
    Py_ssize_t sticky_bytes;
    Py_ssize_t max_record_size;
    PyObject *key_ser;      /* callable or None */
    PyObject *value_ser;    /* callable or None */
    PyObject *choose;       /* partitioner.choose(topic, key, ids, available, size) */
    PyObject *delivery_cls; /* accumulator.Delivery */
    PyObject *slow;         /* coroutine function, see above */
    PyObject *after_wakeup; /* coroutine function: (delivery) -> delivery after a checkpoint */
    /* The __dict__ of the producer, of its accumulator, and of the last sender and cluster
     * client seen: their fields are read from the dicts directly (a dict lookup with an
     * interned key costs a fraction of a full attribute lookup). NULL for an object without
     * a __dict__: then attributes are looked up. */
    PyObject *producer_dict, *acc_dict;
    PyObject *sender, *sender_dict, *client, *client_dict;
    /* Producer.send's variant (mode "send"): the call returns a Sending, which waits for the
     * batch on a future of its own (future_cls(loop=batch.loop)) and returns the record's
     * metadata_cls; without an asyncio loop it hands over to slow_wait(delivery). */
    int mode;
    PyObject *future_cls, *metadata_cls, *slow_wait;
} Enqueuer;

/* What an Enqueuer's call answers with: the delivery handle (enqueue), the record's metadata
 * once acknowledged (send), or nothing, the outcome counted per batch (produce). */
enum { MODE_ENQUEUE, MODE_SEND, MODE_PRODUCE };

/* A new reference to obj's __dict__, or NULL (no exception) when it has none. */
static PyObject *
dict_of(PyObject *obj)
{
    PyObject *d = PyObject_GenericGetDict(obj, NULL);
    if (d == NULL || !PyDict_CheckExact(d)) {
        PyErr_Clear();
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* obj.name as a new reference, read from `dict` (obj's __dict__) when given. */
static PyObject *
field(PyObject *obj, PyObject *dict, PyObject *name)
{
    if (dict != NULL) {
        PyObject *v = PyDict_GetItemWithError(dict, name);
        if (v != NULL)
            return Py_NewRef(v);
        if (PyErr_Occurred())
            return NULL;
    }
    return PyObject_GetAttr(obj, name);
}

/* The __dict__ of `obj` through a one-entry cache (*cached_obj, *cached_dict); borrowed, or
 * NULL without an exception when obj has none. */
static PyObject *
cached_dict(PyObject **cached_obj, PyObject **cached_dict, PyObject *obj)
{
    if (*cached_obj != obj) {
        Py_XSETREF(*cached_dict, dict_of(obj));
        Py_XSETREF(*cached_obj, Py_NewRef(obj));
    }
    return *cached_dict;
}

/* The batch's flag for records queued without a handle (Producer.produce). */
static SlotLayout rf_layout = {"producer batch", 1, {"report_at_flush"}};
/* What `await producer.produce(...)` returns at once: one Ready(None), shared. */
static PyObject *ready_none;

/* The partition state's queue of batches. */
static SlotLayout pst_layout = {"partition state", 1, {"batches"}};

static PyObject *s_blocking, *s_result, *s_throw, *s_close, *loop_kwnames;
static PyObject *s_running, *s_sender, *s_fatal_error, *s_txn, *s_client, *s_metadata,
    *s_topics_snapshot, *s_buffer_used, *s_buffer_memory, *s_wakeup_needed, *s_wakeup;
static PyObject *enq_kwnames[6];

static int
enqueuer_init_strings(void)
{
    static const char *kw[6] = {"topic", "value", "key", "partition", "timestamp_ms", "headers"};
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&s_running, "_running"},       {&s_sender, "_sender"},
        {&s_fatal_error, "fatal_error"}, {&s_txn, "_txn"},
        {&s_client, "_client"},         {&s_metadata, "_metadata"},
        {&s_topics_snapshot, "_topics_snapshot"},
        {&s_buffer_used, "buffer_used"}, {&s_buffer_memory, "buffer_memory"},
        {&s_wakeup_needed, "wakeup_needed"}, {&s_wakeup, "wakeup"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if ((*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
            return -1;
    }
    for (int i = 0; i < 6; i++) {
        if ((enq_kwnames[i] = PyUnicode_InternFromString(kw[i])) == NULL)
            return -1;
    }
    if ((s_blocking = PyUnicode_InternFromString("_asyncio_future_blocking")) == NULL ||
        (s_result = PyUnicode_InternFromString("result")) == NULL ||
        (s_throw = PyUnicode_InternFromString("throw")) == NULL ||
        (s_close = PyUnicode_InternFromString("close")) == NULL ||
        (loop_kwnames = Py_BuildValue("(s)", "loop")) == NULL ||
        (ready_none = records->ready(Py_None)) == NULL)
        return -1;
    return 0;
}

static int
enqueuer_init(Enqueuer *self, PyObject *args, PyObject *kwds)
{
    PyObject *producer, *acc, *topics, *sticky, *key_ser, *value_ser, *choose, *delivery_cls;
    PyObject *slow, *after_wakeup;
    PyObject *future_cls = Py_None, *metadata_cls = Py_None, *slow_wait = Py_None;
    const char *mode_name = "enqueue";
    int mode;
    Py_ssize_t sticky_bytes, max_record_size;
    static char *kwlist[] = {"producer", "acc", "topics", "sticky", "sticky_bytes",
                             "max_record_size", "key_serializer", "value_serializer",
                             "choose", "delivery_cls", "slow", "after_wakeup", "mode",
                             "future_cls", "metadata_cls", "slow_wait", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO!OnnOOOO!OO|$sOOO:Enqueuer", kwlist,
                                     &producer, &acc, &PyDict_Type, &topics, &sticky,
                                     &sticky_bytes, &max_record_size, &key_ser, &value_ser,
                                     &choose, &PyType_Type, &delivery_cls, &slow, &after_wakeup,
                                     &mode_name, &future_cls, &metadata_cls, &slow_wait))
        return -1;
    if (strcmp(mode_name, "enqueue") == 0)
        mode = MODE_ENQUEUE;
    else if (strcmp(mode_name, "send") == 0)
        mode = MODE_SEND;
    else if (strcmp(mode_name, "produce") == 0)
        mode = MODE_PRODUCE;
    else {
        PyErr_Format(PyExc_ValueError, "mode must be 'enqueue', 'send' or 'produce', not '%s'",
                     mode_name);
        return -1;
    }
    if (mode == MODE_SEND && (!PyCallable_Check(future_cls) || !metadata_cls_ok(metadata_cls) ||
                      !PyCallable_Check(slow_wait))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError,
                            "mode 'send' needs future_cls, metadata_cls and slow_wait");
        return -1;
    }
    if (sticky != Py_None && !PyDict_CheckExact(sticky)) {
        PyErr_SetString(PyExc_TypeError, "sticky must be a dict or None");
        return -1;
    }
    if (slot_layout(&dl_layout, (PyTypeObject *)delivery_cls) < 0)
        return -1;
    Py_XSETREF(self->producer, Py_NewRef(producer));
    Py_XSETREF(self->acc, Py_NewRef(acc));
    Py_XSETREF(self->topics, Py_NewRef(topics));
    Py_XSETREF(self->sticky, Py_NewRef(sticky));
    Py_XSETREF(self->key_ser, Py_NewRef(key_ser));
    Py_XSETREF(self->value_ser, Py_NewRef(value_ser));
    Py_XSETREF(self->choose, Py_NewRef(choose));
    Py_XSETREF(self->delivery_cls, Py_NewRef(delivery_cls));
    Py_XSETREF(self->slow, Py_NewRef(slow));
    Py_XSETREF(self->after_wakeup, Py_NewRef(after_wakeup));
    self->sticky_bytes = sticky_bytes;
    self->max_record_size = max_record_size;
    Py_XSETREF(self->producer_dict, dict_of(producer));
    Py_XSETREF(self->acc_dict, dict_of(acc));
    Py_CLEAR(self->sender);
    Py_CLEAR(self->sender_dict);
    Py_CLEAR(self->client);
    Py_CLEAR(self->client_dict);
    self->mode = mode;
    Py_XSETREF(self->future_cls, Py_NewRef(future_cls));
    Py_XSETREF(self->metadata_cls, Py_NewRef(metadata_cls));
    Py_XSETREF(self->slow_wait, Py_NewRef(slow_wait));
    return 0;
}

static int
enqueuer_traverse(Enqueuer *self, visitproc visit, void *arg)
{
    Py_VISIT(self->producer);
    Py_VISIT(self->acc);
    Py_VISIT(self->topics);
    Py_VISIT(self->sticky);
    Py_VISIT(self->key_ser);
    Py_VISIT(self->value_ser);
    Py_VISIT(self->choose);
    Py_VISIT(self->delivery_cls);
    Py_VISIT(self->slow);
    Py_VISIT(self->after_wakeup);
    Py_VISIT(self->producer_dict);
    Py_VISIT(self->acc_dict);
    Py_VISIT(self->sender);
    Py_VISIT(self->sender_dict);
    Py_VISIT(self->client);
    Py_VISIT(self->client_dict);
    Py_VISIT(self->future_cls);
    Py_VISIT(self->metadata_cls);
    Py_VISIT(self->slow_wait);
    return 0;
}

static int
enqueuer_clear(Enqueuer *self)
{
    Py_CLEAR(self->producer);
    Py_CLEAR(self->acc);
    Py_CLEAR(self->topics);
    Py_CLEAR(self->sticky);
    Py_CLEAR(self->key_ser);
    Py_CLEAR(self->value_ser);
    Py_CLEAR(self->choose);
    Py_CLEAR(self->delivery_cls);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->after_wakeup);
    Py_CLEAR(self->producer_dict);
    Py_CLEAR(self->acc_dict);
    Py_CLEAR(self->sender);
    Py_CLEAR(self->sender_dict);
    Py_CLEAR(self->client);
    Py_CLEAR(self->client_dict);
    Py_CLEAR(self->future_cls);
    Py_CLEAR(self->metadata_cls);
    Py_CLEAR(self->slow_wait);
    return 0;
}

static void
enqueuer_dealloc(Enqueuer *self)
{
    PyObject_GC_UnTrack(self);
    enqueuer_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The attribute `name` of `obj` is the object `expected` (a new reference is not kept).
 * 1 yes, 0 no, -1 error. */
static int
attr_is(PyObject *obj, PyObject *dict, PyObject *name, PyObject *expected)
{
    PyObject *v = field(obj, dict, name);
    if (v == NULL)
        return -1;
    int same = v == expected;
    Py_DECREF(v);
    return same;
}

/* Size estimate of a record without headers: what producer.accumulator.record_size gives
 * (the producer adds 21 to the key's and value's lengths). -1 when key or value is not
 * exact bytes or None (the Python body decides what they are). */
static Py_ssize_t
plain_record_size(PyObject *key, PyObject *value)
{
    Py_ssize_t size = 21;
    if (value != Py_None) {
        if (!PyBytes_CheckExact(value))
            return -1;
        size += PyBytes_GET_SIZE(value);
    }
    if (key != Py_None) {
        if (!PyBytes_CheckExact(key))
            return -1;
        size += PyBytes_GET_SIZE(key);
    }
    return size;
}

/* The fast path. Returns a new reference: the delivery (*woke = 0), or the delivery after
 * the sender was woken (*woke = 1); NULL without an exception when the Python body must
 * take the record (*partition_out: the partition chosen so far, a new reference or NULL);
 * NULL with an exception for a real error of a step the Python body would not redo. */
static PyObject *
enqueue_fast(Enqueuer *self, PyObject *topic, PyObject *value, PyObject *key,
             PyObject *partition, PyObject *ts, PyObject *headers, PyObject **partition_out,
             int *woke)
{
    PyObject *producer = self->producer, *acc = self->acc;
    PyObject *pdict = self->producer_dict, *adict = self->acc_dict;
    PyObject *sender = NULL, *client = NULL, *snapshot = NULL, *metadata = NULL;
    PyObject *chosen = NULL, *size_obj = NULL, *used = NULL, *memory = NULL, *last = NULL;
    PyObject *delivery = NULL, *new_used = NULL, *entry = NULL;
    *partition_out = NULL;
    *woke = 0;
    if (headers != Py_None || !PyUnicode_CheckExact(topic))
        goto slow;
    Py_ssize_t size = plain_record_size(key, value);
    if (size < 0)
        goto slow;
    int r = attr_is(producer, pdict, s_running, Py_True);
    if (r <= 0)
        goto fail_or_slow;
    if ((r = attr_is(producer, pdict, s_txn, Py_None)) <= 0)
        goto fail_or_slow;
    if ((sender = field(producer, pdict, s_sender)) == NULL)
        goto error;
    if (sender == Py_None)
        goto slow;
    if ((r = attr_is(sender, cached_dict(&self->sender, &self->sender_dict, sender), s_fatal_error,
                         Py_None)) <= 0)
        goto fail_or_slow;
    entry = PyDict_GetItemWithError(self->topics, topic);
    if (entry == NULL) {
        if (PyErr_Occurred())
            goto error;
        goto slow;
    }
    Py_INCREF(entry); /* held: the partitioner below may run Python code */
    if ((client = field(producer, pdict, s_client)) == NULL ||
        (metadata = field(client, cached_dict(&self->client, &self->client_dict, client),
                          s_metadata)) == NULL ||
        (snapshot = field(producer, pdict, s_topics_snapshot)) == NULL)
        goto error;
    if (metadata != snapshot || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3 ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(entry, 0)))
        goto slow;
    if ((size_obj = PyLong_FromSsize_t(size)) == NULL)
        goto error;
    if (partition != Py_None) {
        chosen = Py_NewRef(partition);
    }
    else {
        /* The sticky partitioner's common case (its choose() does the same). */
        if (self->sticky != Py_None && key == Py_None) {
            PyObject *cur = PyDict_GetItemWithError(self->sticky, topic); /* borrowed */
            if (cur == NULL && PyErr_Occurred())
                goto error;
            if (cur != NULL && PyList_CheckExact(cur) && PyList_GET_SIZE(cur) == 2 &&
                PyLong_CheckExact(PyList_GET_ITEM(cur, 1))) {
                Py_ssize_t sofar = PyLong_AsSsize_t(PyList_GET_ITEM(cur, 1));
                if (sofar == -1 && PyErr_Occurred())
                    goto error;
                if (sofar < self->sticky_bytes) {
                    PyObject *more = PyLong_FromSsize_t(sofar + size);
                    if (more == NULL)
                        goto error;
                    chosen = Py_NewRef(PyList_GET_ITEM(cur, 0));
                    PyList_SetItem(cur, 1, more); /* steals `more` */
                }
            }
        }
        if (chosen == NULL) {
            PyObject *argv[5] = {topic, key, PyTuple_GET_ITEM(entry, 1),
                                 PyTuple_GET_ITEM(entry, 2), size_obj};
            chosen = PyObject_Vectorcall(self->choose, argv, 5, NULL);
            if (chosen == NULL)
                goto error;
        }
    }
    /* From here on, the Python body gets the chosen partition. */
    PyObject *ps = PyDict_GetItemWithError(PyTuple_GET_ITEM(entry, 0), chosen); /* borrowed */
    if (ps == NULL) {
        if (PyErr_Occurred())
            goto error;
        goto slow;
    }
    if (size > self->max_record_size)
        goto slow;
    if ((used = field(acc, adict, s_buffer_used)) == NULL ||
        (memory = field(acc, adict, s_buffer_memory)) == NULL)
        goto error;
    if (!PyLong_CheckExact(used) || !PyLong_CheckExact(memory))
        goto slow;
    {
        Py_ssize_t u = PyLong_AsSsize_t(used), m = PyLong_AsSsize_t(memory);
        if ((u == -1 || m == -1) && PyErr_Occurred())
            goto error;
        if (u != 0 && u + size > m)
            goto slow;
        if ((new_used = PyLong_FromSsize_t(u + size)) == NULL)
            goto error;
    }
    if (slot_layout(&pst_layout, Py_TYPE(ps)) < 0)
        goto error;
    PyObject *batches = SLOT(ps, pst_layout, 0);
    if (batches == NULL) {
        PyErr_SetString(PyExc_AttributeError, "the partition state is not initialised");
        goto error;
    }
    Py_ssize_t n = PySequence_Size(batches);
    if (n < 0)
        goto error;
    if (n == 0)
        goto slow; /* the Python body opens a batch */
    if ((last = PySequence_GetItem(batches, n - 1)) == NULL)
        goto error;
    delivery = append_record_impl(
        last, ts, key, value, Py_None, size_obj,
        self->mode == MODE_PRODUCE ? NULL : (PyTypeObject *)self->delivery_cls);
    if (delivery == NULL) {
        /* The Python body makes the same call and raises the same error where enqueue's
         * errors are raised (in the await). */
        PyErr_Clear();
        goto slow;
    }
    if (delivery == Py_None) {
        Py_CLEAR(delivery);
        goto slow; /* full: the Python body closes it and opens the next */
    }
    if (self->mode == MODE_PRODUCE) {
        if (slot_layout(&rf_layout, Py_TYPE(last)) < 0)
            goto error;
        Py_XSETREF(SLOT(last, rf_layout, 0), Py_NewRef(Py_True));
    }
    if ((adict != NULL ? PyDict_SetItem(adict, s_buffer_used, new_used)
                       : PyObject_SetAttr(acc, s_buffer_used, new_used)) < 0)
        goto error;
    r = attr_is(acc, adict, s_wakeup_needed, Py_True);
    if (r < 0)
        goto error;
    if (r) {
        PyObject *res;
        if (PyObject_SetAttr(acc, s_wakeup_needed, Py_False) < 0 ||
            (res = PyObject_CallMethodNoArgs(sender, s_wakeup)) == NULL)
            goto error;
        Py_DECREF(res);
        *woke = 1;
    }
    goto done;

fail_or_slow:
    if (r < 0)
        goto error;
slow:
    *partition_out = chosen;
    chosen = NULL;
    delivery = NULL;
    goto done;
error:
    Py_CLEAR(delivery);
done:
    Py_XDECREF(sender);
    Py_XDECREF(client);
    Py_XDECREF(metadata);
    Py_XDECREF(snapshot);
    Py_XDECREF(chosen);
    Py_XDECREF(size_obj);
    Py_XDECREF(used);
    Py_XDECREF(memory);
    Py_XDECREF(new_used);
    Py_XDECREF(last);
    Py_XDECREF(entry);
    return delivery;
}

/* What Producer.send's C variant returns: awaiting it waits until the record's batch is
 * settled and returns its RecordMetadata (or raises the record's error, through
 * Delivery.result()). On asyncio it yields a future of its own, appended to the batch's
 * waiters (what ProducerBatch.settled does), so that no coroutine is made per record;
 * without an asyncio loop (trio) it delegates to the Python coroutine slow_wait(delivery).
 * It passes for a coroutine (send, throw, close). */
enum { WB_DONE, WB_LOOP, WB_WAITERS, N_WB_FIELDS };
static SlotLayout wb_layout = {"producer batch", N_WB_FIELDS, {"done", "loop", "_waiters"}};

typedef struct {
    PyObject_HEAD
    Enqueuer *owner;    /* future_cls, metadata_cls, slow_wait */
    PyObject *delivery;
    PyObject *fut;      /* the future yielded last, until the task resumes */
    PyObject *sub;      /* the delegate coroutine, or NULL */
} Sending;

static PyTypeObject SendingType;

static PyObject *
sending_new(Enqueuer *owner, PyObject *delivery)
{
    Sending *self = PyObject_GC_New(Sending, &SendingType);
    if (self == NULL)
        return NULL;
    self->owner = (Enqueuer *)Py_NewRef(owner);
    self->delivery = Py_NewRef(delivery);
    self->fut = NULL;
    self->sub = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static int
sending_traverse(Sending *self, visitproc visit, void *arg)
{
    Py_VISIT(self->owner);
    Py_VISIT(self->delivery);
    Py_VISIT(self->fut);
    Py_VISIT(self->sub);
    return 0;
}

static int
sending_clear(Sending *self)
{
    Py_CLEAR(self->owner);
    Py_CLEAR(self->delivery);
    Py_CLEAR(self->fut);
    Py_CLEAR(self->sub);
    return 0;
}

static void
sending_dealloc(Sending *self)
{
    PyObject_GC_UnTrack(self);
    sending_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PySendResult
sending_send(Sending *self, PyObject *arg, PyObject **result)
{
    *result = NULL;
    if (self->sub != NULL) {
        PySendResult r = PyIter_Send(self->sub, arg, result);
        if (r != PYGEN_NEXT)
            Py_CLEAR(self->sub);
        return r;
    }
    if (self->delivery == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "cannot reuse an already awaited send()");
        return PYGEN_ERROR;
    }
    Py_CLEAR(self->fut);
    PyObject *delivery = self->delivery;
    if (slot_layout(&dl_layout, Py_TYPE(delivery)) < 0)
        return PYGEN_ERROR;
    PyObject *batch = SLOT(delivery, dl_layout, DL_BATCH);
    if (batch == NULL || slot_layout(&wb_layout, Py_TYPE(batch)) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_AttributeError, "the delivery is not initialised");
        return PYGEN_ERROR;
    }
    PyObject *done = SLOT(batch, wb_layout, WB_DONE);
    PyObject *loop = SLOT(batch, wb_layout, WB_LOOP);
    PyObject *waiters = SLOT(batch, wb_layout, WB_WAITERS);
    if (done == NULL || loop == NULL || waiters == NULL) {
        PyErr_SetString(PyExc_AttributeError, "the batch is not initialised");
        return PYGEN_ERROR;
    }
    int is_done = done == Py_True ? 1 : done == Py_False ? 0 : PyObject_IsTrue(done);
    if (is_done < 0)
        return PYGEN_ERROR;
    if (!is_done) {
        if (loop == Py_None) {
            if ((self->sub = PyObject_CallOneArg(self->owner->slow_wait, delivery)) == NULL)
                return PYGEN_ERROR;
            Py_CLEAR(self->delivery);
            return sending_send(self, Py_None, result);
        }
        PyObject *fut = PyObject_Vectorcall(self->owner->future_cls, &loop, 0, loop_kwnames);
        if (fut == NULL)
            return PYGEN_ERROR;
        int err;
        if (waiters == Py_None) {
            PyObject *list = PyList_New(1);
            err = list == NULL;
            if (!err) {
                PyList_SET_ITEM(list, 0, Py_NewRef(fut));
                Py_SETREF(SLOT(batch, wb_layout, WB_WAITERS), list);
            }
        }
        else {
            err = PyList_Append(waiters, fut) < 0;
        }
        if (err || PyObject_SetAttr(fut, s_blocking, Py_True) < 0) {
            Py_DECREF(fut);
            return PYGEN_ERROR;
        }
        self->fut = Py_NewRef(fut);
        *result = fut;
        return PYGEN_NEXT;
    }
    PyObject *md = delivery_metadata_impl(delivery, (PyTypeObject *)self->owner->metadata_cls);
    if (md == Py_None) {
        Py_DECREF(md);
        md = PyObject_CallMethodNoArgs(delivery, s_result);
    }
    Py_CLEAR(self->delivery);
    if (md == NULL)
        return PYGEN_ERROR;
    *result = md;
    return PYGEN_RETURN;
}

/* The iterator and method forms of the same step (callers without am_send). */
static PyObject *
sending_step(Sending *self, PyObject *arg)
{
    PyObject *result;
    PySendResult r = sending_send(self, arg, &result);
    if (r == PYGEN_NEXT)
        return result;
    if (r == PYGEN_RETURN) {
        PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, result);
        Py_DECREF(result);
        if (stop != NULL) {
            PyErr_SetObject(PyExc_StopIteration, stop);
            Py_DECREF(stop);
        }
    }
    return NULL;
}

static PyObject *
sending_next(Sending *self)
{
    return sending_step(self, Py_None);
}

static PyObject *
sending_throw(Sending *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_CLEAR(self->fut);
    if (self->sub != NULL) {
        PyObject *sub = Py_NewRef(self->sub);
        PyObject *meth = PyObject_GetAttr(sub, s_throw);
        PyObject *r = meth == NULL ? NULL : PyObject_Vectorcall(meth, args, nargs, NULL);
        Py_XDECREF(meth);
        if (r == NULL)
            Py_CLEAR(self->sub);
        Py_DECREF(sub);
        return r;
    }
    Py_CLEAR(self->delivery);
    return records->throw_exception(args, nargs);
}

static PyObject *
sending_close(Sending *self, PyObject *unused)
{
    Py_CLEAR(self->fut);
    Py_CLEAR(self->delivery);
    if (self->sub != NULL) {
        PyObject *sub = self->sub;
        self->sub = NULL;
        PyObject *r = PyObject_CallMethodNoArgs(sub, s_close);
        Py_DECREF(sub);
        return r;
    }
    Py_RETURN_NONE;
}

static PyObject *
sending_await(PyObject *self)
{
    return Py_NewRef(self);
}

static PyMethodDef sending_methods[] = {
    {"send", (PyCFunction)sending_step, METH_O, "One step: the future to wait on, or finish."},
    {"throw", (PyCFunction)(void (*)(void))sending_throw, METH_FASTCALL,
     "Raise the exception (the record stays queued)."},
    {"close", (PyCFunction)sending_close, METH_NOARGS, "Stop waiting."},
    {NULL},
};

static PyAsyncMethods sending_as_async = {
    .am_await = sending_await,
    .am_send = (sendfunc)sending_send,
};

static PyTypeObject SendingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafka_async.producer._fastpath.Sending",
    .tp_basicsize = sizeof(Sending),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Producer.send's await in C: the record's metadata once its batch settles.",
    .tp_dealloc = (destructor)sending_dealloc,
    .tp_traverse = (traverseproc)sending_traverse,
    .tp_clear = (inquiry)sending_clear,
    .tp_as_async = &sending_as_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)sending_next,
    .tp_methods = sending_methods,
};

static PyObject *
enqueuer_call(Enqueuer *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *argv[6] = {NULL, Py_None, Py_None, Py_None, Py_None, Py_None};
    if (self->producer == NULL) {
        PyErr_SetString(PyExc_TypeError, "the Enqueuer is not initialised");
        return NULL;
    }
    if (nargs > 6) {
        PyErr_Format(PyExc_TypeError, "enqueue() takes at most 6 arguments (%zd given)", nargs);
        return NULL;
    }
    unsigned assigned = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        argv[i] = args[i];
        assigned |= 1u << i;
    }
    if (kwnames != NULL) {
        Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t k = 0; k < nkw; k++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, k);
            int j;
            for (j = 0; j < 6; j++) {
                if (name == enq_kwnames[j])
                    break;
            }
            if (j == 6) {
                for (j = 0; j < 6; j++) {
                    int eq = PyUnicode_Compare(name, enq_kwnames[j]);
                    if (eq == -1 && PyErr_Occurred())
                        return NULL;
                    if (eq == 0)
                        break;
                }
            }
            if (j == 6) {
                PyErr_Format(PyExc_TypeError, "enqueue() got an unexpected keyword argument %R",
                             name);
                return NULL;
            }
            if (assigned & (1u << j)) {
                PyErr_Format(PyExc_TypeError, "enqueue() got multiple values for argument %R",
                             name);
                return NULL;
            }
            argv[j] = args[nargs + k];
            assigned |= 1u << j;
        }
    }
    if (argv[0] == NULL) {
        PyErr_SetString(PyExc_TypeError, "enqueue() missing required argument 'topic'");
        return NULL;
    }
    /* Serializers run here, as in the Python method (errors raised by the call). */
    PyObject *value = NULL, *key = NULL, *result = NULL, *partition = NULL;
    if (self->key_ser != Py_None)
        key = PyObject_CallOneArg(self->key_ser, argv[2]);
    else
        key = Py_NewRef(argv[2]);
    if (key == NULL)
        return NULL;
    if (self->value_ser != Py_None)
        value = PyObject_CallOneArg(self->value_ser, argv[1]);
    else
        value = Py_NewRef(argv[1]);
    if (value == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    int woke;
    PyObject *delivery =
        enqueue_fast(self, argv[0], value, key, argv[3], argv[4], argv[5], &partition, &woke);
    if (delivery != NULL) {
        if (self->mode == MODE_SEND) {
            /* Waiting on the batch suspends the task, which gives a woken sender its turn. */
            result = sending_new(self, delivery);
        }
        else if (woke) {
            result = PyObject_CallOneArg(self->after_wakeup, delivery);
        }
        else if (self->mode == MODE_PRODUCE) {
            result = Py_NewRef(ready_none);
        }
        else {
            result = records->ready(delivery);
        }
        Py_DECREF(delivery);
    }
    else if (!PyErr_Occurred()) {
        PyObject *slow_args[6] = {argv[0], value, key, partition != NULL ? partition : argv[3],
                                  argv[4], argv[5]};
        result = PyObject_Vectorcall(self->slow, slow_args, 6, NULL);
    }
    Py_XDECREF(partition);
    Py_DECREF(key);
    Py_DECREF(value);
    return result;
}

static PyObject *
enqueuer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Enqueuer *self = (Enqueuer *)type->tp_alloc(type, 0);
    if (self != NULL)
        self->vectorcall = (vectorcallfunc)enqueuer_call;
    return (PyObject *)self;
}

static PyTypeObject EnqueuerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafka_async.producer._fastpath.Enqueuer",
    .tp_basicsize = sizeof(Enqueuer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Producer.enqueue's common case in C (see Producer.enqueue).",
    .tp_new = enqueuer_new,
    .tp_init = (initproc)enqueuer_init,
    .tp_dealloc = (destructor)enqueuer_dealloc,
    .tp_traverse = (traverseproc)enqueuer_traverse,
    .tp_clear = (inquiry)enqueuer_clear,
    .tp_vectorcall_offset = offsetof(Enqueuer, vectorcall),
    .tp_call = PyVectorcall_Call,
};

static PyMethodDef module_methods[] = {
    {"murmur2", (PyCFunction)murmur2, METH_O,
     "murmur2(data) -> int: the Java client's murmur2 of a bytes-like key (unsigned 32-bit)"},
    {"append_record", (PyCFunction)(void (*)(void))append_record, METH_FASTCALL,
     "append_record(batch, timestamp, key, value, headers, size, cls) -> cls | None"},
    {"delivery_metadata", (PyCFunction)(void (*)(void))delivery_metadata, METH_FASTCALL,
     "delivery_metadata(delivery, cls) -> cls | None: a settled delivery's metadata"},
    {NULL},
};

static struct PyModuleDef fastpath_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "kafka_async.producer._fastpath",
    .m_doc = "The producer's per-record fast path in C (twin: _fastpath_pure.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__fastpath(void)
{
    if (records == NULL &&
        (records = (RecordsCAPI *)PyCapsule_Import(RECORDS_CAPI_NAME, 0)) == NULL) {
        /* A records extension of another build (no capsule) is an ImportError too: the
         * producer then takes its Python paths (fastpath.py). */
        if (!PyErr_ExceptionMatches(PyExc_ImportError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ImportError,
                            "kafka_async.producer._fastpath needs the C API of "
                            "kafka_async.records._speedups (rebuild both)");
        }
        return NULL;
    }
    if (PyType_Ready(&EnqueuerType) < 0 || PyType_Ready(&SendingType) < 0 ||
        enqueuer_init_strings() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&fastpath_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Enqueuer", (PyObject *)&EnqueuerType) < 0 ||
        PyModule_AddObjectRef(m, "Sending", (PyObject *)&SendingType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
