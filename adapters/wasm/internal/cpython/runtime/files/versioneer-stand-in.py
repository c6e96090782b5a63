# build.sh: stand-in; pandas' sdist records its version in _version_meson.py.
