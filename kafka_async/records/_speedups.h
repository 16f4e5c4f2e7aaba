/*
 * What the records accelerator (_speedups.c) shares with the other C extensions of
 * kafka_async (producer/_fastpath.c): helpers compiled into each, and the C API that
 * _speedups exports as a capsule for the record writer and `ready`.
 *
 * Generic: nothing here knows a producer or consumer class; the callers name the fields
 * they read (SlotLayout) themselves.
 */

#ifndef KAFKA_ASYNC_RECORDS_SPEEDUPS_H
#define KAFKA_ASYNC_RECORDS_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------
 * Slot layouts
 * ---------------------------------------------------------------------------------------- */

/* Where the object slots of a slotted Python class live, looked up once per class: instances
 * are then read and filled slot by slot, as the class's own __init__ would. The class must have
 * no __dict__ and each named field must be an object slot (a `__slots__` entry). */
#define MAX_LAYOUT_FIELDS 11
typedef struct {
    const char *what;              /* for error messages */
    int n;
    const char *fields[MAX_LAYOUT_FIELDS];
    PyTypeObject *cached;          /* owned; the class the offsets below belong to */
    Py_ssize_t offsets[MAX_LAYOUT_FIELDS];
} SlotLayout;

static inline int
slot_layout(SlotLayout *layout, PyTypeObject *cls)
{
    if (cls == layout->cached)
        return 0;
    if (cls->tp_dictoffset != 0 || cls->tp_init == NULL) {
        PyErr_Format(PyExc_TypeError, "%s is not a slotted %s class", cls->tp_name,
                     layout->what);
        return -1;
    }
    Py_ssize_t offsets[MAX_LAYOUT_FIELDS];
    for (int i = 0; i < layout->n; i++) {
        PyObject *d = PyObject_GetAttrString((PyObject *)cls, layout->fields[i]);
        if (d == NULL)
            return -1;
        if (!Py_IS_TYPE(d, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            Py_DECREF(d);
            PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", cls->tp_name,
                         layout->fields[i]);
            return -1;
        }
        offsets[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
    }
    memcpy(layout->offsets, offsets, sizeof offsets);
    Py_XSETREF(layout->cached, (PyTypeObject *)Py_NewRef(cls));
    return 0;
}

#define SLOT(obj, layout, i) (*(PyObject **)((char *)(obj) + (layout).offsets[i]))

/* The size of a key or value for record metadata: -1 for None, else its length. */
static inline PyObject *
size_of(PyObject *b)
{
    if (b == Py_None)
        return PyLong_FromLong(-1);
    if (PyBytes_CheckExact(b))
        return PyLong_FromSsize_t(PyBytes_GET_SIZE(b));
    Py_ssize_t n = PyObject_Length(b);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

static inline long long
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A record timestamp given as a Python int: in 0..INT64_MAX, not a bool. */
static inline int
timestamp_arg(PyObject *obj, long long *out)
{
    if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "record timestamp must be an int or None");
        return -1;
    }
    int overflow;
    long long ts = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (ts == -1 && PyErr_Occurred())
        return -1;
    if (overflow || ts < 0) {
        PyErr_Format(PyExc_ValueError, "record timestamp %R is out of range", obj);
        return -1;
    }
    *out = ts;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * The C API of kafka_async.records._speedups (a capsule, RECORDS_CAPI_NAME)
 * ---------------------------------------------------------------------------------------- */

#define RECORDS_CAPI_NAME "kafka_async.records._speedups._C_API"

typedef struct {
    /* RecordWriter, the records' type: a batch's writer of this exact type is appended to
     * through writer_append, any other through its `append` method. */
    PyTypeObject *record_writer_type;
    /* RecordWriter.append(ts, key, value, headers) after argument parsing: the offset delta,
     * None when the batch is full, NULL with an exception on error. */
    PyObject *(*writer_append)(PyObject *writer, long long ts, PyObject *key, PyObject *value,
                               PyObject *headers);
    /* ready(value): a new awaitable that returns value at once. */
    PyObject *(*ready)(PyObject *value);
    /* The coroutine protocol's throw(typ[, val[, tb]]): sets the exception, returns NULL. */
    PyObject *(*throw_exception)(PyObject *const *args, Py_ssize_t nargs);
} RecordsCAPI;

#endif /* KAFKA_ASYNC_RECORDS_SPEEDUPS_H */
