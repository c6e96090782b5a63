#!/usr/bin/env bash
# stdlib-zip: the standard library's zip (out/python313.zip).
#
# The standard library as a zip of .pyc files, in the legacy layout (x.pyc
# where x.py was), with each x.py beside its x.pyc. zipimport loads the
# bytecode (unchecked-hash: it never reads the source to validate it); the
# sources are there for the zip importer's get_source, through which
# linecache shows stdlib lines in tracebacks and inspect.getsource finds
# them. The bytecode records the path it will have in the guest.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

step stdlib-zip
fresh "$STAGE"
# Lib/, less what cannot work in a WASI sandbox or is development-only;
# no __pycache__ (the native build writes some into the source tree).
(cd "$SRC/cpython/Lib" && find . \
  \( -path ./test -o -path ./idlelib -o -path ./tkinter -o -path ./turtledemo \
  -o -path ./ensurepip -o -path ./venv -o -path ./lib2to3 -o -path ./site-packages \
  -o -name __pycache__ \) -prune -o \
  -type f ! -name turtle.py \
  ! -name mypy.ini ! -name '*.rst' ! -name '*.bat' ! -name 'README*' ! -name fetch_macholib \
  -print | LC_ALL=C sort | tar -cf - --no-recursion -T - | tar -xf - -C "$STAGE")
# The cross build's sysconfig data (sysconfig.get_config_vars()).
cp "$(sysconfigdata)" "$STAGE/"
# IANA time zones for zoneinfo: there is no system tz database in the guest.
mkdir -p "$STAGE/tzwheel"
"$NATIVE_PY" -I -m zipfile -e "$DL/$TZDATA_WHEEL" "$STAGE/tzwheel"
mv "$STAGE/tzwheel/tzdata" "$STAGE/tzdata"
rm -rf "$STAGE/tzwheel"

zip_stage "$STAGE" "$GUEST_STDLIB_ZIP" "$WORK_OUT/python$PY_NODOT.zip"
# What the interpreter imports while starting, and a time zone.
zip_has "$WORK_OUT/python$PY_NODOT.zip" \
  encodings/__init__.pyc encodings/utf_8.pyc os.pyc site.pyc json/__init__.pyc tzdata/zoneinfo/Europe/Paris
