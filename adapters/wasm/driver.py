# codeport's in-guest driver. It runs inside the WASI instance of one session
# and never returns while the session lives. The host starts it as
#   python -u -I -c BOOTSTRAP DRIVER
# where BOOTSTRAP compiles this file under the name "<codeport>", so the
# driver's own frames can be told from the user's and left out of tracebacks.
#
# Protocol, over the control file /.codeport/ctl (not stdout or stderr, so
# nothing a program prints can be mistaken for it):
#   host -> guest: 4-byte big-endian length, then that many bytes: a kind
#                  byte and its payload. "C": UTF-8 source of one cell, run in
#                  the session's __main__. "P": a JSON object {"argv": [...],
#                  "stdin": "...", "cwd": "...", "env": [...]}, a
#                  `python ...` command line from the bash tool, run in the
#                  same interpreter in the shell's directory and environment.
#                  "W": a JSON list of modules to import before the session
#                  is handed out (the warm pool); no user code is involved. End of file means "shut
#                  down".
#   guest -> host: one byte "R" once ready, then after each request 5 bytes:
#                  a status byte and a big-endian signed 32-bit return code.
# The driver's own names live in this module's globals, which are not the
# namespace user code runs in: cells run in a fresh __main__ module.
#
# traceback and linecache are imported only when first needed: importing
# them (tokenize compiles large regular expressions) costs about 330 ms in
# WebAssembly, more than the rest of the interpreter's start-up.

import builtins
import os
import select
import struct
import sys
import time
import types

_OK, _EXC, _EXIT, _NOMEM = 0, 1, 2, 3


def _install_sleep():
    # CPython's time.sleep waits with an absolute-deadline clock_nanosleep,
    # which WASI hosts refuse (ENOTSUP). A relative wait through select()
    # is what the host implements, and what a timeout interrupts.
    monotonic, wait = time.monotonic, select.select

    def sleep(secs):
        if isinstance(secs, (str, bytes)):
            raise TypeError("'%s' object cannot be interpreted as an integer" % type(secs).__name__)
        secs = float(secs)
        if secs != secs or secs < 0:
            raise ValueError("sleep length must be non-negative")
        deadline = monotonic() + secs
        while True:
            left = deadline - monotonic()
            if left <= 0:
                return
            wait([], [], [], left)

    sleep.__doc__ = time.sleep.__doc__
    time.sleep = sleep


def _codeport_main():
    _install_sleep()
    ctl = os.open("/.codeport/ctl", os.O_RDWR)
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    ns = main.__dict__
    sys.argv = [""]
    sys.path.insert(0, "/workspace")
    os.chdir("/workspace")
    streams = (sys.stdout, sys.stderr)
    reserve = bytearray(256 * 1024)  # freed to report a MemoryError

    def read_exact(n):
        chunks = []
        while n > 0:
            b = os.read(ctl, n)
            if not b:
                return None
            chunks.append(b)
            n -= len(b)
        return b"".join(chunks)

    def flush():
        for s in (sys.stdout, sys.stderr) + streams:
            try:
                s.flush()
            except BaseException:
                pass

    # Cell sources, so tracebacks can show the lines of earlier cells.
    sources = {}
    synced = [None]  # the linecache module whose cache holds sources

    def remember(name, src):
        entry = (len(src), None, src.splitlines(True), name)
        sources[name] = entry
        lc = sys.modules.get("linecache")
        if lc is None:
            return
        if synced[0] is not lc:
            lc.cache.update(sources)
            synced[0] = lc
        else:
            lc.cache[name] = entry

    def user_frames(tb):
        # Leading frames of the driver (and of runpy, which real Python
        # does not show for a script) are not the user's business.
        while tb is not None:
            name = tb.tb_frame.f_code.co_filename
            if name != "<codeport>" and not name.endswith("runpy.py"):
                break
            tb = tb.tb_next
        return tb

    def report(exc):
        tb = user_frames(exc.__traceback__)
        try:
            import traceback

            lc = sys.modules["linecache"]
            if synced[0] is not lc:
                lc.cache.update(sources)
                synced[0] = lc
            traceback.print_exception(type(exc), exc, tb, file=sys.__stderr__)
        except BaseException:
            # Out of memory, or a broken traceback module: report frames
            # and the exception without help.
            lines = ["Traceback (most recent call last):\n"]
            while tb is not None:
                co = tb.tb_frame.f_code
                lines.append('  File "%s", line %s, in %s\n' % (co.co_filename, tb.tb_lineno, co.co_name))
                tb = tb.tb_next
            try:
                msg = str(exc)
            except BaseException:
                msg = ""
            lines.append("%s%s\n" % (type(exc).__name__, ": " + msg if msg else ""))
            try:
                os.write(2, "".join(lines).encode("utf-8", "replace"))
            except BaseException:
                os.write(2, b"MemoryError\n")

    def outcome(fn):
        # Runs fn, which runs user code, and says how it ended:
        # (status, return code), or (status, 1, exception) out of memory.
        try:
            fn()
            return _OK, 0
        except SystemExit as e:
            c = e.code
            if c is None:
                return _EXIT, 0
            if isinstance(c, int) and not isinstance(c, bool):
                return _EXIT, c if -(2**31) <= c < 2**31 else 1
            try:
                print(c, file=sys.__stderr__)
            except BaseException:
                pass
            return _EXIT, 1
        except MemoryError as e:
            return _NOMEM, 1, e
        except BaseException as e:
            report(e)
            return _EXC, 1

    def run_cell(src, n):
        name = "<cell %d>" % n
        remember(name, src)
        return outcome(lambda: exec(compile(src, name, "exec", dont_inherit=True), ns))

    def run_python(payload):
        # A `python ...` command line from the bash tool, in this same
        # interpreter: argv and stdin are swapped in for its duration.
        import io
        import json
        import runpy

        req = json.loads(payload)
        argv, data = req["argv"][1:], req.get("stdin", "")
        saved = sys.argv, sys.stdin, os.getcwd(), dict(os.environ)
        # The shell's directory and exported variables, for this command.
        try:
            os.chdir(req.get("cwd") or "/workspace")
        except OSError:
            pass
        if req.get("env"):
            os.environ.clear()
            os.environ.update(kv.split("=", 1) for kv in req["env"] if "=" in kv)

        def invoke():
            opts = list(argv)
            while opts and opts[0] in ("-u", "-B", "-I", "-E", "-s", "-S", "-q"):
                opts.pop(0)
            if opts and opts[0] in ("-V", "--version"):
                print("Python %d.%d.%d" % sys.version_info[:3])
                return
            sys.stdin = io.StringIO(data)
            if opts and opts[0] == "-c":
                if len(opts) < 2:
                    print("Argument expected for the -c option", file=sys.stderr)
                    raise SystemExit(2)
                sys.argv = ["-c"] + opts[2:]
                code = compile(opts[1], "<string>", "exec", dont_inherit=True)
                exec(code, ns)
            elif opts and opts[0] == "-m":
                if len(opts) < 2:
                    print("Argument expected for the -m option", file=sys.stderr)
                    raise SystemExit(2)
                sys.argv = [opts[1]] + opts[2:]
                runpy.run_module(opts[1], run_name="__main__", alter_sys=True)
            elif opts and opts[0] != "-":
                if opts[0].startswith("-"):
                    print("unknown option %s" % opts[0], file=sys.stderr)
                    raise SystemExit(2)
                sys.argv = list(opts)
                runpy.run_path(opts[0], run_name="__main__")
            else:
                sys.argv = [""] + opts[1:] if opts else [""]
                sys.stdin = io.StringIO("")
                exec(compile(data, "<stdin>", "exec", dont_inherit=True), ns)

        try:
            return outcome(invoke)
        finally:
            sys.argv, sys.stdin = saved[0], saved[1]
            try:
                os.chdir(saved[2])
            except OSError:
                os.chdir("/workspace")
            os.environ.clear()
            os.environ.update(saved[3])

    def warm(payload):
        # Before any user's code: import the modules a pool is asked to
        # have ready (into sys.modules, not into the user's namespace) and
        # pay the first cell's one-time costs.
        import json

        for name in json.loads(payload):
            try:
                __import__(name)
            except BaseException:
                pass
        exec(compile("print(end='')", "<warm-up>", "exec"), {"__builtins__": builtins})
        return _OK, 0

    os.write(ctl, b"R")
    n = 0
    while True:
        hdr = read_exact(4)
        if hdr is None:
            return
        req = read_exact(struct.unpack(">I", hdr)[0])
        if req is None:
            return
        kind, text = req[:1], req[1:].decode("utf-8", "replace")
        if kind == b"P":
            r = run_python(text)
        elif kind == b"W":
            r = warm(text)
        else:
            n += 1
            r = run_cell(text, n)
        if len(r) == 3:
            # Out of memory: give back the reserve so the report can be
            # formatted, then take it again for the next time.
            del reserve
            report(r[2])
            r = r[:2]
            try:
                reserve = bytearray(256 * 1024)
            except MemoryError:
                reserve = None
        flush()
        os.write(ctl, struct.pack(">Bi", r[0], r[1]))


_codeport_main()
