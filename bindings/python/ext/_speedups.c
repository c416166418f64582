/* stepkit._speedups: the session calls a walk makes most, without ctypes (optional).
 *
 * `Session.set_answer(value, state=False)`, `go_forward`, `go_backward` and `skip` with
 * `state=False` spend most of their time in the interpreter running the binding's ctypes path
 * (benchmarks/README.md, issue 36). This module does the same marshalling in C: the answer
 * written as JSON, the session checked (see enter()), the library function called with
 * `out == NULL`; and it opens and frees sessions (the walk then never enters ctypes).
 * It holds no engine logic and links no library: `bind()` hands it the addresses of the
 * functions of the libstepkit.so the package already loaded through ctypes (so
 * STEPKIT_LIBRARY and the package's discovery order keep deciding which library runs).
 *
 * Every call answers True when it made the call, False when the Python path must make it
 * instead: a session with autosave, a Python clock, an event callback or undelivered events, a
 * closed session, a session another thread is setting a clock or callback on (or whose clock
 * is calling back into it), or a module not yet bound. The Python path then decides, as it does without
 * this module: it takes the session's lock, raises StateError, delivers the events. A refused call
 * raises the binding's exception for it (`setup()`'s `raise_status(status)`), right after the
 * call on the same thread, where stepkit_last_error() still describes it.
 *
 * Answers: booleans, None, 64-bit integers, finite floats, strings that need no escaping and
 * lists of such strings are written here; anything else is written by `setup()`'s
 * `encode(value) -> bytes` (the binding's own encoder, with its errors and messages).
 *
 * Built against the limited API (abi3) of CPython 3.9, so one file serves every later CPython.
 */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Raised to 2 when bind()'s or setup()'s arguments change (the package checks it). */
#define SPEEDUPS_API 1

typedef int (*answer_fn)(void *session, const char *answer, char **out);
typedef int (*move_fn)(void *session, char **out);
typedef int (*open_fn)(void *task, const char *options, void **out);
typedef void (*free_fn)(void *session);

enum { MOVE_FORWARD, MOVE_BACKWARD, MOVE_SKIP, MOVE_COUNT };

static answer_fn set_answer_fn;
static move_fn move_fns[MOVE_COUNT];
static open_fn session_open_fn;
static free_fn session_free_fn;
static PyObject *raise_status; /* raise_status(status): raises the call's exception */
static PyObject *encode;       /* encode(value) -> bytes: the binding's answer encoder */

static PyObject *s_gil_calls, *s_handle, *s_owner, *s_clock, *s_events, *s_undelivered;

/* ---- the answer as JSON text --------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
    char small[256];
} buffer;

static void buffer_init(buffer *b) {
    b->data = b->small;
    b->len = 0;
    b->cap = sizeof b->small;
}

static void buffer_free(buffer *b) {
    if (b->data != b->small) PyMem_Free(b->data);
}

static int buffer_put(buffer *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap * 2;
        while (cap < b->len + n + 1) cap *= 2;
        char *data = PyMem_Malloc(cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(data, b->data, b->len);
        buffer_free(b);
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

/* A str as a JSON string: 1 written, 0 when it needs escaping (or is no valid UTF-8: a lone
 * surrogate), -1 on a memory error. */
static int put_string(buffer *b, PyObject *text) {
    PyObject *utf8 = PyUnicode_AsUTF8String(text);
    if (utf8 == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    char *bytes;
    Py_ssize_t size;
    int result = 1;
    if (PyBytes_AsStringAndSize(utf8, &bytes, &size) < 0) {
        result = -1;
    } else {
        for (Py_ssize_t i = 0; i < size; i++) {
            unsigned char c = (unsigned char)bytes[i];
            if (c < 0x20 || c == '"' || c == '\\') {
                result = 0;
                break;
            }
        }
        if (result == 1 && (buffer_put(b, "\"", 1) < 0 || buffer_put(b, bytes, (size_t)size) < 0 ||
                            buffer_put(b, "\"", 1) < 0))
            result = -1;
    }
    Py_DECREF(utf8);
    return result;
}

/* The common answers written directly: 1 written, 0 for the binding's encoder, -1 on error. */
static int put_answer(buffer *b, PyObject *value) {
    if (value == Py_True) return buffer_put(b, "true", 4) < 0 ? -1 : 1;
    if (value == Py_False) return buffer_put(b, "false", 5) < 0 ? -1 : 1;
    if (value == Py_None) return buffer_put(b, "null", 4) < 0 ? -1 : 1;
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow != 0) return 0;
        if (number == -1 && PyErr_Occurred()) return -1;
        char digits[32];
        int n = snprintf(digits, sizeof digits, "%lld", number);
        return buffer_put(b, digits, (size_t)n) < 0 ? -1 : 1;
    }
    if (PyUnicode_CheckExact(value)) return put_string(b, value);
    if (PyFloat_CheckExact(value)) {
        if (!isfinite(PyFloat_AsDouble(value))) return 0; /* json's error, from the encoder */
        PyObject *repr = PyObject_Repr(value);            /* float.__repr__, as json writes it */
        if (repr == NULL) return -1;
        PyObject *utf8 = PyUnicode_AsUTF8String(repr);
        Py_DECREF(repr);
        if (utf8 == NULL) return -1;
        int result = buffer_put(b, PyBytes_AsString(utf8), (size_t)PyBytes_Size(utf8)) < 0 ? -1 : 1;
        Py_DECREF(utf8);
        return result;
    }
    if (PyList_CheckExact(value)) { /* choices: a list of strings */
        Py_ssize_t count = PyList_Size(value);
        if (buffer_put(b, "[", 1) < 0) return -1;
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *item = PyList_GetItem(value, i); /* borrowed */
            if (item == NULL) return -1;
            if (!PyUnicode_CheckExact(item)) return 0;
            if (i > 0 && buffer_put(b, ",", 1) < 0) return -1;
            int written = put_string(b, item);
            if (written <= 0) return written;
        }
        return buffer_put(b, "]", 1) < 0 ? -1 : 1;
    }
    return 0;
}

/* ---- the session ------------------------------------------------------------------------- */

/* 1: the call can be made here, holding the GIL (the session's handle in *handle); 0: the
 * Python path must make it; -1: an error is set.
 *
 * What the session's threading.Lock gives the Python path, the GIL gives this one: the handle
 * is read and used without letting another thread run, so close() (which swaps the handle out,
 * then frees it) cannot free it in between, nor a new session take its address. The lock is
 * neither taken nor read (that cost more than the rest of the call: benchmarks/README.md).
 * A call another thread is making meanwhile through ctypes (the GIL released) is serialized
 * by the library's own session lock (stepkit.h, "Threads"), and finishes without Python code:
 * on a session with no Python clock and no event callback, nothing calls back into Python.
 * The calls that do run Python code inside the library, which would then wait for the GIL
 * this thread holds while it waits for the library's lock, are all made with `_owner` set
 * (Session._owning: on a session with a clock or a callback, and set_clock/on_event, which
 * install them): then the Python path takes the call, as it does for a re-entrant call from
 * the clock. The GIL is held for the whole call: the session's `_gil_calls` is false when a
 * call may wait on the disk (autosave fsyncs every change), and those calls go through
 * ctypes, which releases it. */
static int enter(PyObject *session, void **handle) {
    PyObject *allowed = PyObject_GetAttr(session, s_gil_calls);
    if (allowed == NULL) return -1;
    Py_DECREF(allowed);
    if (allowed != Py_True) return 0;
    /* Set when not None (the owning thread, the clock, the callback); the queue when not empty. */
    static PyObject *const *hooks[] = {&s_owner, &s_clock, &s_events, &s_undelivered};
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        PyObject *hook = PyObject_GetAttr(session, *hooks[i]);
        if (hook == NULL) return -1;
        int set = hook == Py_None ? 0 : hooks[i] != &s_undelivered ? 1 : PyObject_IsTrue(hook);
        Py_DECREF(hook);
        if (set != 0) return set < 0 ? -1 : 0;
    }
    PyObject *number = PyObject_GetAttr(session, s_handle);
    if (number == NULL) return -1;
    void *pointer = number == Py_None ? NULL : PyLong_AsVoidPtr(number);
    Py_DECREF(number);
    if (pointer == NULL) return PyErr_Occurred() ? -1 : 0; /* closed: the Python path says so */
    *handle = pointer;
    return 1;
}

/* After the call: raises its error, or answers True. */
static PyObject *leave(int status) {
    if (status == 0) Py_RETURN_TRUE;
    PyObject *none = PyObject_CallFunction(raise_status, "i", status);
    if (none != NULL) {
        Py_DECREF(none);
        PyErr_Format(PyExc_SystemError, "raise_status(%d) returned instead of raising", status);
    }
    return NULL;
}

/* The answer's JSON text: in `text`, or in *encoded (the binding's encoder's bytes, a new
 * reference); NULL with an error set. */
static const char *answer_text(PyObject *value, buffer *text, PyObject **encoded) {
    *encoded = NULL;
    int written = put_answer(text, value);
    if (written < 0) return NULL;
    if (written == 1) return text->data;
    if (encode == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "stepkit._speedups is not set up");
        return NULL;
    }
    *encoded = PyObject_CallFunctionObjArgs(encode, value, NULL);
    if (*encoded == NULL) return NULL;
    const char *json = PyBytes_AsString(*encoded);
    if (json == NULL) Py_CLEAR(*encoded);
    return json;
}

static PyObject *answer(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *session, *value;
    if (!PyArg_UnpackTuple(args, "answer", 2, 2, &session, &value)) return NULL;
    if (set_answer_fn == NULL) Py_RETURN_FALSE;
    buffer text;
    buffer_init(&text);
    PyObject *encoded;
    const char *json = answer_text(value, &text, &encoded);
    PyObject *result = NULL;
    if (json != NULL) {
        void *handle;
        int entered = enter(session, &handle);
        if (entered == 0) {
            result = Py_False;
            Py_INCREF(result);
        } else if (entered == 1) {
            result = leave(set_answer_fn(handle, json, NULL));
        }
    }
    buffer_free(&text);
    Py_XDECREF(encoded);
    return result;
}

/* answer_json(value) -> bytes: the text answer() sends (for the tests). */
static PyObject *answer_json(PyObject *module, PyObject *value) {
    (void)module;
    buffer text;
    buffer_init(&text);
    PyObject *encoded;
    const char *json = answer_text(value, &text, &encoded);
    PyObject *result = NULL;
    if (json != NULL && encoded != NULL) {
        result = encoded; /* the encoder's bytes, handed on */
        encoded = NULL;
    } else if (json != NULL) {
        result = PyBytes_FromStringAndSize(text.data, (Py_ssize_t)text.len);
    }
    buffer_free(&text);
    Py_XDECREF(encoded);
    return result;
}

static PyObject *move(PyObject *session, int which) {
    move_fn fn = move_fns[which];
    if (fn == NULL) Py_RETURN_FALSE;
    void *handle;
    int entered = enter(session, &handle);
    if (entered <= 0) {
        if (entered < 0) return NULL;
        Py_RETURN_FALSE;
    }
    return leave(fn(handle, NULL));
}

static PyObject *go_forward(PyObject *module, PyObject *session) {
    (void)module;
    return move(session, MOVE_FORWARD);
}

static PyObject *go_backward(PyObject *module, PyObject *session) {
    (void)module;
    return move(session, MOVE_BACKWARD);
}

static PyObject *skip(PyObject *module, PyObject *session) {
    (void)module;
    return move(session, MOVE_SKIP);
}

/* open(task, options) -> handle: stepkit_session_open (the caller holds the task's lock; the
 * GIL is released: with autosave, opening writes and fsyncs the file);
 * None when the library reported success without a session. */
static PyObject *session_open(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *task_number, *options_bytes;
    if (!PyArg_UnpackTuple(args, "open", 2, 2, &task_number, &options_bytes)) return NULL;
    if (session_open_fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "stepkit._speedups is not bound to a library");
        return NULL;
    }
    void *task = PyLong_AsVoidPtr(task_number);
    if (task == NULL && PyErr_Occurred()) return NULL;
    const char *options = NULL;
    if (options_bytes != Py_None && (options = PyBytes_AsString(options_bytes)) == NULL) return NULL;
    void *session = NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = session_open_fn(task, options, &session);
    Py_END_ALLOW_THREADS
    if (status != 0) {
        if (session != NULL) session_free_fn(session); /* the header promises NULL; never leak */
        PyObject *none = PyObject_CallFunction(raise_status, "i", status);
        if (none != NULL) {
            Py_DECREF(none);
            PyErr_Format(PyExc_SystemError, "raise_status(%d) returned instead of raising", status);
        }
        return NULL;
    }
    if (session == NULL) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(session);
}

/* free(handle): stepkit_session_free (the caller holds the session's lock, or is its last
 * reference; the GIL is released: the session may close its autosave file). */
static PyObject *session_free(PyObject *module, PyObject *number) {
    (void)module;
    if (session_free_fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "stepkit._speedups is not bound to a library");
        return NULL;
    }
    void *session = PyLong_AsVoidPtr(number);
    if (session == NULL && PyErr_Occurred()) return NULL;
    Py_BEGIN_ALLOW_THREADS
    session_free_fn(session);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* ---- setting up -------------------------------------------------------------------------- */

static int address(PyObject *number, void **out) {
    *out = PyLong_AsVoidPtr(number);
    if (*out == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "a function address must not be NULL");
        return -1;
    }
    return 0;
}

static PyObject *bind(PyObject *module, PyObject *args) {
    (void)module;
    enum { COUNT = 3 + MOVE_COUNT };
    PyObject *numbers[COUNT];
    if (!PyArg_UnpackTuple(args, "bind", COUNT, COUNT, &numbers[0], &numbers[1], &numbers[2],
                           &numbers[3], &numbers[4], &numbers[5]))
        return NULL;
    void *pointers[COUNT];
    for (int i = 0; i < COUNT; i++)
        if (address(numbers[i], &pointers[i]) < 0) return NULL;
    /* Object pointers to function pointers: what dlsym's callers do, defined by POSIX. */
    memcpy(&set_answer_fn, &pointers[0], sizeof set_answer_fn);
    for (int i = 0; i < MOVE_COUNT; i++) memcpy(&move_fns[i], &pointers[1 + i], sizeof move_fns[i]);
    memcpy(&session_open_fn, &pointers[1 + MOVE_COUNT], sizeof session_open_fn);
    memcpy(&session_free_fn, &pointers[2 + MOVE_COUNT], sizeof session_free_fn);
    Py_RETURN_NONE;
}

static PyObject *setup(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *raise, *encoder;
    if (!PyArg_UnpackTuple(args, "setup", 2, 2, &raise, &encoder)) return NULL;
    if (!PyCallable_Check(raise) || !PyCallable_Check(encoder)) {
        PyErr_SetString(PyExc_TypeError, "setup(raise_status, encode) takes two callables");
        return NULL;
    }
    PyObject *old_raise = raise_status, *old_encode = encode;
    Py_INCREF(raise);
    raise_status = raise;
    Py_INCREF(encoder);
    encode = encoder;
    Py_XDECREF(old_raise);
    Py_XDECREF(old_encode);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(set_answer, go_forward, go_backward, skip, open, free): the addresses of the loaded "
     "library's stepkit_session_set_answer, _go_forward, _go_backward, _skip, _open and _free."},
    {"setup", setup, METH_VARARGS,
     "setup(raise_status, encode): raise_status(status) raises a refused call's exception; "
     "encode(value) -> bytes writes the answers this module does not."},
    {"answer", answer, METH_VARARGS,
     "answer(session, value) -> bool: stepkit_session_set_answer(handle, value, NULL)."},
    {"answer_json", answer_json, METH_O,
     "answer_json(value) -> bytes: the JSON text answer() sends for value."},
    {"go_forward", go_forward, METH_O, "go_forward(session) -> bool: out == NULL."},
    {"go_backward", go_backward, METH_O, "go_backward(session) -> bool: out == NULL."},
    {"skip", skip, METH_O, "skip(session) -> bool: out == NULL."},
    {"open", session_open, METH_VARARGS,
     "open(task, options) -> int | None: stepkit_session_open; options is bytes or None."},
    {"free", session_free, METH_O, "free(session): stepkit_session_free."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "stepkit._speedups",
    "The session's moving calls without ctypes (optional; see stepkit/_ffi.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    struct {
        PyObject **name;
        const char *text;
    } names[] = {
        {&s_gil_calls, "_gil_calls"}, {&s_handle, "_handle"}, {&s_owner, "_owner"},
        {&s_clock, "_clock"}, {&s_events, "_events"}, {&s_undelivered, "_undelivered"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (*names[i].name == NULL && (*names[i].name = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "API", SPEEDUPS_API) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
