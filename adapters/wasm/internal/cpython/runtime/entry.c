// Compiled by build.sh, beside it, for WebAssembly; not by go build (this
// directory holds no Go package).

/*
 * codeport's entry points into CPython, linked into a WASI reactor module.
 *
 * The host (adapters/wasm) drives the interpreter by calling these exports;
 * the return of a call is its completion. No descriptor, file or record in
 * linear memory that a program could reach tells the host that a call has
 * ended or how: a program cannot end its call early or forge its outcome.
 *
 * Order of calls on a fresh instance:
 *   codeport_init_data  (added by wasmpatch: the module's data, now passive)
 *   _initialize         (wasi-libc's constructors)
 *   codeport_init       (CPython itself)
 *   codeport_boot       (the driver, from source the host wrote into the buffer)
 *   codeport_run ...    (one call per request)
 * An instance restored from a snapshot of a template that got that far
 * calls only codeport_run.
 */
#define PY_SSIZE_T_CLEAN
#include "Python.h"

#include <stdint.h>
#include <stdlib.h>

#define EXPORT(name) __attribute__((export_name(#name))) __attribute__((used))

/* Where the host's build mounts the standard library zip. */
#define STDLIB_ZIP L"/usr/local/lib/python313.zip"

/* Statuses, in the high 32 bits of codeport_run's result; the low 32 bits
 * are the return code. Keep in step with adapters/wasm and driver.py. */
enum {
    STATUS_OK = 0,        /* the request ran to its end */
    STATUS_EXCEPTION = 1, /* an exception escaped the program */
    STATUS_EXIT = 2,      /* SystemExit */
    STATUS_NO_MEMORY = 3, /* MemoryError */
    STATUS_INTERNAL = 4,  /* the driver itself failed (not the program) */
};

/* The host writes each request here (codeport_buffer gives its address). */
static char *buffer;
static uint32_t buffer_cap;

/* The driver's handle(kind: int, payload: bytes) -> (status, return code). */
static PyObject *handler;

static int64_t pack(int32_t status, int32_t rc) {
    return ((int64_t)status << 32) | (int64_t)(uint32_t)rc;
}

/* codeport_buffer returns a buffer of at least size + 1 bytes for the next
 * request, or 0 when memory is exhausted. The extra byte lets
 * codeport_boot terminate source text in place. */
EXPORT(codeport_buffer)
char *codeport_buffer(uint32_t size) {
    if (size == UINT32_MAX) {
        return NULL;
    }
    if (buffer == NULL || size + 1 > buffer_cap) {
        char *p = realloc(buffer, (size_t)size + 1);
        if (p == NULL) {
            return NULL;
        }
        buffer = p;
        buffer_cap = size + 1;
    }
    return buffer;
}

/* codeport_init starts CPython in isolated mode: no environment variables,
 * no user site, unbuffered standard streams, a hash seed drawn from the
 * host's random source, and the standard library from its zip. UTF-8 mode
 * is on: WASI has no locales, and an isolated configuration would otherwise
 * leave the streams and file names in ASCII. */
EXPORT(codeport_init)
int32_t codeport_init(void) {
    PyPreConfig preconfig;
    PyPreConfig_InitIsolatedConfig(&preconfig);
    preconfig.utf8_mode = 1;
    PyStatus pre = Py_PreInitialize(&preconfig);
    if (PyStatus_Exception(pre)) {
        fprintf(stderr, "codeport: CPython failed to pre-initialise: %s\n", pre.err_msg ? pre.err_msg : "");
        return -1;
    }
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.buffered_stdio = 0;
    config.write_bytecode = 0;
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    config.pathconfig_warnings = 0;
    config.use_hash_seed = 0;
    PyStatus status = PyConfig_SetString(&config, &config.program_name, L"python3");
    if (!PyStatus_Exception(status)) {
        status = PyConfig_SetString(&config, &config.executable, L"/usr/local/bin/python3");
    }
    if (!PyStatus_Exception(status)) {
        status = PyConfig_SetString(&config, &config.home, L"/usr/local");
    }
    if (!PyStatus_Exception(status)) {
        config.module_search_paths_set = 1;
        status = PyWideStringList_Append(&config.module_search_paths, STDLIB_ZIP);
    }
    if (!PyStatus_Exception(status)) {
        status = Py_InitializeFromConfig(&config);
    }
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        if (status.err_msg != NULL) {
            fprintf(stderr, "codeport: CPython failed to start: %s%s%s\n",
                    status.func ? status.func : "", status.func ? ": " : "", status.err_msg);
        }
        return -1;
    }
    return 0;
}

/* codeport_boot runs the driver, whose source (UTF-8, size bytes) the host
 * wrote into the buffer, in a namespace of its own, and keeps its handle
 * function. Errors are printed to stderr: they are the driver's, never a
 * program's. */
EXPORT(codeport_boot)
int32_t codeport_boot(uint32_t size) {
    if (buffer == NULL || size >= buffer_cap || !Py_IsInitialized()) {
        return -1;
    }
    buffer[size] = '\0';
    PyObject *code = Py_CompileString(buffer, "<codeport>", Py_file_input);
    if (code == NULL) {
        PyErr_Print();
        return -1;
    }
    PyObject *ns = PyDict_New();
    if (ns == NULL || PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()) < 0 ||
        PyDict_SetItemString(ns, "__name__", PyUnicode_InternFromString("_codeport")) < 0) {
        Py_XDECREF(ns);
        Py_DECREF(code);
        PyErr_Print();
        return -1;
    }
    PyObject *r = PyEval_EvalCode(code, ns, ns);
    Py_DECREF(code);
    if (r == NULL) {
        Py_DECREF(ns);
        PyErr_Print();
        return -1;
    }
    Py_DECREF(r);
    PyObject *h = PyDict_GetItemString(ns, "handle"); /* borrowed */
    if (h == NULL || !PyCallable_Check(h)) {
        Py_DECREF(ns);
        fprintf(stderr, "codeport: the driver defines no handle function\n");
        return -1;
    }
    Py_XSETREF(handler, Py_NewRef(h));
    Py_DECREF(ns);
    return 0;
}

/* codeport_run hands one request (kind, and size bytes of payload in the
 * buffer) to the driver and returns (status << 32) | return code. It
 * returns only when the request has ended: that return, not anything the
 * program can write, is the call's completion. */
EXPORT(codeport_run)
int64_t codeport_run(int32_t kind, uint32_t size) {
    if (handler == NULL || buffer == NULL || size >= buffer_cap) {
        return pack(STATUS_INTERNAL, 1);
    }
    PyObject *payload = PyBytes_FromStringAndSize(buffer, (Py_ssize_t)size);
    if (payload == NULL) {
        PyErr_Clear();
        return pack(STATUS_NO_MEMORY, 1);
    }
    PyObject *r = PyObject_CallFunction(handler, "iN", (int)kind, payload);
    if (r == NULL) {
        int no_memory = PyErr_ExceptionMatches(PyExc_MemoryError);
        if (no_memory) {
            PyErr_Clear();
            return pack(STATUS_NO_MEMORY, 1);
        }
        PyErr_Print();
        return pack(STATUS_INTERNAL, 1);
    }
    long status = STATUS_INTERNAL, rc = 1;
    if (!PyArg_ParseTuple(r, "ll", &status, &rc) || status < STATUS_OK || status > STATUS_NO_MEMORY ||
        rc < INT32_MIN || rc > INT32_MAX) {
        PyErr_Clear();
        status = STATUS_INTERNAL;
        rc = 1;
    }
    Py_DECREF(r);
    return pack((int32_t)status, (int32_t)rc);
}
