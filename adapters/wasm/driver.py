# codeport's in-guest driver. It runs as `python -u -I -c <this file>` inside
# the WASI instance of one session and never returns while the session lives.
#
# Protocol, over the control file /.codeport/ctl (not stdout or stderr, so
# nothing a program prints can be mistaken for it):
#   host -> guest: 4-byte big-endian length, then that many bytes of UTF-8
#                  source for one cell. End of file means "shut down".
#   guest -> host: one byte "R" once ready, then after each cell 5 bytes:
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

    def report(exc, skip_first):
        tb = exc.__traceback__
        if skip_first and tb is not None:
            tb = tb.tb_next
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

    def run(src, n):
        name = "<cell %d>" % n
        try:
            remember(name, src)
            code = compile(src, name, "exec", dont_inherit=True)
        except MemoryError as e:
            report(e, False)
            return _NOMEM, 1
        except BaseException as e:
            report(e, False)
            return _EXC, 1
        try:
            exec(code, ns)
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
            report(e, True)
            return _EXC, 1

    os.write(ctl, b"R")
    n = 0
    while True:
        hdr = read_exact(4)
        if hdr is None:
            return
        src = read_exact(struct.unpack(">I", hdr)[0])
        if src is None:
            return
        n += 1
        r = run(src.decode("utf-8", "replace"), n)
        if len(r) == 3:
            # Out of memory: give back the reserve so the report can be
            # formatted, then take it again for the next time.
            del reserve
            report(r[2], True)
            r = r[:2]
            try:
                reserve = bytearray(256 * 1024)
            except MemoryError:
                reserve = None
        flush()
        os.write(ctl, struct.pack(">Bi", r[0], r[1]))


_codeport_main()
